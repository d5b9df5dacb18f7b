"""core.docfreq against counting each document's set (naive.doc_frequency_counts)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.core.docfreq import _MIX, BUCKET_BITS, document_frequencies

from naive import doc_frequency_counts

HASHES = st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3)


def _check(docs: list[list[int]], dtype=np.int64) -> None:
    values = [v % 2**64 for d in docs for v in d] if dtype is np.uint64 else [v for d in docs for v in d]
    hashes = np.array(values, dtype)
    bounds = np.cumsum([0, *map(len, docs)]).astype(np.int64)
    before = hashes.copy()
    df, distinct = document_frequencies(hashes, bounds)
    assert df.dtype == np.int64 and distinct.dtype == np.int64
    assert dict(Counter(df.tolist())) == doc_frequency_counts(docs)
    assert distinct.tolist() == [len(set(d)) for d in docs]
    assert np.array_equal(hashes, before)  # the caller's array is read, not sorted


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(HASHES, max_size=60), max_size=8), st.sampled_from([np.int64, np.uint64]))
def test_document_frequencies_are_the_naive_counts(docs, dtype):
    _check(docs, dtype)


def test_documents_that_share_most_of_their_hashes_and_repeat_them():
    rng = np.random.default_rng(7)
    pool = rng.integers(-(2**63), 2**63 - 1, 5_000, dtype=np.int64)
    docs = [rng.choice(pool, size=int(rng.integers(0, 20_000))).tolist() for _ in range(40)]
    docs.append([])  # a document without hashes
    _check(docs)


def test_hashes_that_crowd_one_bucket_are_counted_apart():
    # hashes whose mixed values share their leading bits all land in one bucket, and probe past
    # each other in its table: 2^BUCKET_BITS of them make it the largest a bucket's table holds
    inverse = pow(int(_MIX), -1, 2**64)
    mixed = [(7 << 50) | i for i in range(1 << BUCKET_BITS)]
    crowded = [((m * inverse) % 2**64) - 2**63 for m in mixed]
    spread = np.random.default_rng(1).integers(-(2**63), 2**63 - 1, 30_000, dtype=np.int64).tolist()
    _check([crowded, crowded[::2], spread, crowded[:100] + spread[:100]])


def test_bad_bounds_and_arrays_are_refused():
    hashes = np.arange(4, dtype=np.int64)
    for bounds in ([0, 5], [1, 4], [0, 3, 2, 4], []):
        with pytest.raises(ValueError, match="bounds"):
            document_frequencies(hashes, np.array(bounds, np.int64))
    with pytest.raises(ValueError, match="64-bit"):
        document_frequencies(hashes.astype(np.int32), np.array([0, 4]))
