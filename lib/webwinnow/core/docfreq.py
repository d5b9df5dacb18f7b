"""Document frequencies of hashes: in how many documents each distinct hash occurs.

The report's rank–frequency figure counts every k-gram hash of a sample of documents (8 M hashes
of 2,000 documents on the docs corpus). By sorting, that was one sort per document for its
distinct hashes and one more of them all: 0.6-0.7 CPU-s, NumPy's sort taking about 60 ns a
64-bit value on this machine kind. Here a pass spreads the hashes over buckets by their leading
bits, with a document's repeats left out on the way, and each bucket is counted in a table that
stays in the processor's cache: no sort, a few nanoseconds a hash.
"""

from __future__ import annotations

import numpy as np

from .jit import JIT_OPTIONS, njit

#: Multiplier of the hashes' mix (2^64 / golden ratio): k-gram hashes are polynomial hashes
#: mod 2^64, whose low bits are weak; the product's high bits depend on all of them.
_MIX = np.uint64(0x9E3779B97F4A7C15)


#: A bucket holds up to 2^(BUCKET_BITS - 1) hashes, its table of 2^BUCKET_BITS slots (24 bytes
#: each) in the second-level cache.
BUCKET_BITS = 13


def document_frequencies(hashes: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(df, distinct): document d holds hashes[bounds[d]:bounds[d + 1]]; df is, for each distinct
    hash, how many documents hold it (one count per distinct hash, in no particular order), and
    distinct[d] how many distinct hashes document d holds.

    As `occurrences(concatenated sorted distinct hashes of each document)`, with the counts in
    another order (a histogram of them is the same)."""
    hashes = np.ascontiguousarray(hashes)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    if hashes.ndim != 1 or hashes.dtype.kind not in "iu" or hashes.dtype.itemsize != 8:
        raise ValueError("hashes must be a one-dimensional array of 64-bit integers")
    if bounds.ndim != 1 or not len(bounds) or bounds[0] != 0 or bounds[-1] != len(hashes) or (np.diff(bounds) < 0).any():
        raise ValueError("bounds must rise from 0 to len(hashes), one more than the documents")
    return _document_frequencies(hashes.view(np.uint64), bounds)


@njit(**JIT_OPTIONS)
def _table_bits(n):
    """Bits of a table with at least twice n slots (at most half full)."""
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    return bits


@njit(**JIT_OPTIONS)
def _document_frequencies(hashes, bounds):
    n_docs = bounds.shape[0] - 1
    longest = 0
    for d in range(n_docs):
        longest = max(longest, bounds[d + 1] - bounds[d])
    # one table for every document, its first 2^b slots for a document of up to 2^(b-1) hashes;
    # a slot is the document's when its stamp says so, so no table is cleared
    size = 1 << _table_bits(longest)
    keys = np.empty(size, np.uint64)
    stamp = np.full(size, -1, np.int64)
    distinct = np.zeros(n_docs, np.int64)
    kept = np.empty(hashes.shape[0], np.uint64)
    m = 0
    for d in range(n_docs):
        first = m
        lo, hi = bounds[d], bounds[d + 1]
        shift = np.uint64(64 - _table_bits(hi - lo))
        mask = (1 << _table_bits(hi - lo)) - 1
        for i in range(lo, hi):
            h = hashes[i]
            s = np.int64((h * _MIX) >> shift) & mask
            while stamp[s] == d and keys[s] != h:
                s = (s + 1) & mask
            if stamp[s] != d:
                stamp[s] = d
                keys[s] = h
                kept[m] = h
                m += 1
        distinct[d] = m - first
    # the documents' distinct hashes spread over 2^bucket_bits buckets by their mixed leading bits
    bucket_bits = max(0, _table_bits(m) - BUCKET_BITS)
    buckets = 1 << bucket_bits
    start = np.zeros(buckets + 1, np.int64)
    bshift = np.uint64(64 - bucket_bits) if bucket_bits else np.uint64(0)
    for i in range(m):
        b = np.int64((kept[i] * _MIX) >> bshift) if bucket_bits else 0
        start[b + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    at = start[:-1].copy()
    spread = np.empty(m, np.uint64)
    for i in range(m):
        b = np.int64((kept[i] * _MIX) >> bshift) if bucket_bits else 0
        spread[at[b]] = kept[i]
        at[b] += 1
    # each bucket counted in a table of its own size (the same arrays, stamped by bucket)
    largest = 0
    for b in range(buckets):
        largest = max(largest, start[b + 1] - start[b])
    size = 1 << _table_bits(largest)
    keys = np.empty(size, np.uint64)
    count = np.zeros(size, np.int64)
    stamp = np.full(size, -1, np.int64)
    df = np.empty(m, np.int64)
    found = 0
    for b in range(buckets):
        lo, hi = start[b], start[b + 1]
        bits = _table_bits(hi - lo)
        mask = (1 << bits) - 1
        # the bits below the bucket's (a product's low bits depend on the hash's low bits only):
        # bucket_bits + bits stays under 64 up to 2^37 hashes, however they crowd one bucket
        shift = np.uint64(64 - bucket_bits - bits)
        for i in range(lo, hi):
            h = spread[i]
            s = np.int64((h * _MIX) >> shift) & mask
            while stamp[s] == b and keys[s] != h:
                s = (s + 1) & mask
            if stamp[s] != b:
                stamp[s] = b
                keys[s] = h
                count[s] = 0
            count[s] += 1
        for s in range(mask + 1):  # the bucket's slots: a table at most four times its hashes
            if stamp[s] == b:
                df[found] = count[s]
                found += 1
    return df[:found].copy(), distinct
