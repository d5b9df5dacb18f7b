"""Passages fingerprint each documents batch in slices of bounded text: slices must cover the
batch exactly, in order, and stay under the limit unless one text alone exceeds it."""

from __future__ import annotations

import pyarrow as pa
import pytest

from webwinnow.stages._windows import text_slices


def _batch(sizes):
    texts = [None if n is None else "x" * n for n in sizes]
    return pa.RecordBatch.from_pydict({"doc_id": list(range(len(sizes))), "text": pa.array(texts, pa.string())})


@pytest.mark.parametrize(
    "sizes,limit",
    [
        ([5, 5, 5, 5], 10),
        ([5, 5, 5, 5], 9),
        ([30, 1, 1], 10),
        ([1, 1, 30], 10),
        ([None, 4, None, 7], 8),
        ([], 10),
        ([0, 0, 0], 1),
        ([10, 10], 10),
        (list(range(1, 40)), 50),
    ],
)
def test_slices_cover_the_batch_in_order_within_the_limit(sizes, limit):
    batch = _batch(sizes)
    parts = list(text_slices(batch, limit))
    assert [i for p in parts for i in p.column("doc_id").to_pylist()] == list(range(len(sizes)))
    assert all(p.num_rows for p in parts)
    for p in parts:
        total = sum(len(t or "") for t in p.column("text").to_pylist())
        assert total <= limit or p.num_rows == 1, (sizes, limit, p.to_pydict())
    # greedy: no slice could have taken the next text without passing the limit
    for p, nxt in zip(parts, parts[1:]):
        total = sum(len(t or "") for t in p.column("text").to_pylist())
        assert total + len(nxt.column("text")[0].as_py() or "") > limit


def test_slices_of_a_sliced_batch():
    batch = _batch([3, 4, 5, 6, 7]).slice(1, 3)
    parts = list(text_slices(batch, 9))
    assert [p.column("doc_id").to_pylist() for p in parts] == [[1, 2], [3]]
