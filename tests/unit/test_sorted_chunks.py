"""Chunks of a partition sorted on one key: whole runs per chunk, every chunk in order, every row
once, whatever the batches; and sort_table's order."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.stages._frames import sort_table, sorted_chunks


def _batches(table: pa.Table, cuts: list[int]) -> list[pa.RecordBatch]:
    bounds = sorted({0, table.num_rows, *(c % (table.num_rows + 1) for c in cuts)})
    return [table.slice(lo, hi - lo).combine_chunks().to_batches()[0] for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def _rows(table: pa.Table, names) -> list[tuple]:
    return list(zip(*(table.column(n).to_pylist() for n in names), strict=True))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 9)), max_size=200),
    cuts=st.lists(st.integers(0, 200), max_size=6),
    chunk=st.integers(1, 40),
)
def test_chunks_of_one_key_come_out_in_the_full_order(rows, cuts, chunk):
    # as Spark hands them over sorted on "hash": any order inside a run
    rng = np.random.default_rng(len(rows))
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    shuffled.sort(key=lambda r: r[0])
    table = pa.table({"hash": [r[0] for r in shuffled], "doc_id": [r[1] for r in shuffled], "pos": [r[2] for r in shuffled]})
    chunks = [sort_table(c, ("hash", "doc_id", "pos")) for c in sorted_chunks(_batches(table, cuts), ["hash"], rows=chunk)]
    got = [row for c in chunks for row in _rows(c, ("hash", "doc_id", "pos"))]
    assert got == sorted(rows)
    seen = set()
    for c in chunks:
        runs = set(c.column("hash").to_pylist())
        assert not runs & seen  # a run is never split between chunks
        seen |= runs


@pytest.mark.parametrize("flag", [[True, False, True], [False, False, True]])
def test_boolean_keys_sort_false_first(flag):
    table = pa.table({"hash": [1, 1, 1], "new": flag, "doc_id": [3, 2, 1]})
    got = sort_table(table, ("hash", "new", "doc_id"))
    assert _rows(got, ("new", "doc_id")) == sorted(zip(flag, [3, 2, 1], strict=True))
