"""Chunks of a partition sorted on one key and put in their full order per chunk (sort_runs'
contract): whole runs per chunk, every chunk in order, every row once, whatever the batches."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.stages._frames import RUN_KEY, sort_table, sorted_chunks


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
    # as Spark hands them over after sort_runs on "hash": sorted on hash, any order inside a run
    rng = np.random.default_rng(len(rows))
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    shuffled.sort(key=lambda r: r[0])
    table = pa.table({"hash": [r[0] for r in shuffled], "doc_id": [r[1] for r in shuffled], "pos": [r[2] for r in shuffled]})
    chunks = list(sorted_chunks(_batches(table, cuts), ["hash"], rows=chunk, order=("hash", "doc_id", "pos")))
    got = [row for c in chunks for row in _rows(c, ("hash", "doc_id", "pos"))]
    assert got == sorted(rows)
    seen = set()
    for c in chunks:
        runs = set(c.column("hash").to_pylist())
        assert not runs & seen  # a run is never split between chunks
        seen |= runs


def test_pairs_whose_run_keys_collide_are_sorted_apart():
    # two pairs with the same run key, interleaved as a sort on that key alone may leave them
    table = pa.table(
        {
            RUN_KEY: [7, 7, 7, 7, 9],
            "doc_a": [2, 1, 2, 1, 0],
            "doc_b": [5, 3, 5, 3, 4],
            "pos_a": [40, 30, 10, 20, 0],
            "pos_b": [41, 31, 11, 21, 1],
        }
    )
    (chunk,) = sorted_chunks(table.to_batches(), [RUN_KEY], order=("doc_a", "doc_b", "pos_a", "pos_b"))
    assert _rows(chunk, ("doc_a", "doc_b", "pos_a")) == [(0, 4, 0), (1, 3, 20), (1, 3, 30), (2, 5, 10), (2, 5, 40)]


@pytest.mark.parametrize("flag", [[True, False, True], [False, False, True]])
def test_boolean_keys_sort_false_first(flag):
    table = pa.table({"hash": [1, 1, 1], "new": flag, "doc_id": [3, 2, 1]})
    got = sort_table(table, ("hash", "new", "doc_id"))
    assert _rows(got, ("new", "doc_id")) == sorted(zip(flag, [3, 2, 1], strict=True))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(-(2**63), 2**63 - 1) | st.integers(0, 3),
            st.integers(0, 2),
            st.integers(-(2**31), 2**31 - 1),
            st.text(max_size=3),
        ),
        max_size=150,
    ),
    nulls=st.booleans(),
)
def test_a_table_sorts_stably_on_its_keys_as_python_sorts_its_rows(rows, nulls):
    """sort_table against Python's stable sort of the rows' key tuples: 64-bit and 32-bit keys,
    ties on every key (the rows' own order kept), and, with a null in a key, the old path."""
    table = pa.table(
        {
            "doc_a": pa.array([r[0] for r in rows], pa.int64()),
            "doc_b": pa.array([r[1] for r in rows], pa.int64()),
            "pos": pa.array([r[2] for r in rows], pa.int32()),
            "tag": pa.array([r[3] for r in rows], pa.string()),
            "row": pa.array(range(len(rows)), pa.int64()),
        }
    )
    if nulls and rows:  # a null key: numpy's lexsort, where a null sorts after every number
        table = table.set_column(4, "row", pa.array([None, *range(1, len(rows))], pa.int64()))
        got = sort_table(table, ("doc_b", "row"))
        want = sorted(range(len(rows)), key=lambda i: (rows[i][1], i == 0, i))
        assert got.column("row").to_pylist() == [None if i == 0 else i for i in want]
        return
    got = sort_table(table, ("doc_a", "doc_b", "pos"))
    want = sorted(range(len(rows)), key=lambda i: rows[i][:3])
    assert got.column("row").to_pylist() == want
