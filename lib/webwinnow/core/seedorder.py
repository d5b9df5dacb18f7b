"""The order a pair task puts its seeds in: by document pair, then by positions.

A pair task receives its seeds (doc_a, doc_b, pos_a, pos_b), 1.3-1.4 M a task on the docs
corpus, in the order the shuffle brought them, and sorts them on all four columns, stably.
Arrow's sort on four keys took 0.25-0.33 CPU-s a task: it compares 64-bit document ids on
every step. But the rows are few pairs (about ten seeds a pair): here a pass gives each row its
pair's number from a hash table, the pairs alone are sorted (a tenth of the rows), the rows are
placed by their pair's rank in one counting pass, and each pair's few seeds are sorted by
their two positions, packed into one 64-bit key. A third of the time, the same permutation.
"""

from __future__ import annotations

import numpy as np

from .jit import JIT_OPTIONS, njit

#: Multipliers mixing the two document ids of a pair into a slot (odd 64-bit constants).
_MIX_A = np.uint64(0x9E3779B97F4A7C15)
_MIX_B = np.uint64(0xC2B2AE3D27D4EB4F)

#: A pair with at most this many seeds is sorted by insertion, a larger one by merge sort.
_INSERTION_MAX = 32


def seed_order(doc_a: np.ndarray, doc_b: np.ndarray, pos_a: np.ndarray, pos_b: np.ndarray) -> np.ndarray:
    """The permutation (int64) that puts the rows in order of (doc_a, doc_b, pos_a, pos_b),
    rows equal on all four keeping their order: ``np.lexsort((pos_b, pos_a, doc_b, doc_a))``.

    The kernel takes 64-bit document ids (-1 for a count row's doc_b) and 32-bit positions, as a
    pair task's seed rows hold them, and fewer than 2^31 rows; other integer columns are sorted
    by NumPy, to the same order. All four are one-dimensional, of one length."""
    cols = [np.ascontiguousarray(c) for c in (doc_a, doc_b, pos_a, pos_b)]
    if any(c.ndim != 1 for c in cols) or len({c.shape[0] for c in cols}) != 1:
        raise ValueError("seed_order takes four one-dimensional arrays of one length")
    if any(c.dtype.kind not in "iu" for c in cols):
        raise ValueError("seed_order takes integer columns")
    if cols[0].shape[0] == 0:
        return np.zeros(0, np.int64)
    kernel_types = all(c.dtype == np.int64 for c in cols[:2]) and all(c.dtype == np.int32 for c in cols[2:])
    if not kernel_types or cols[0].shape[0] >= 1 << 31:
        return np.lexsort(tuple(reversed(cols))).astype(np.int64)
    pair, first_a, first_b = _pairs(cols[0], cols[1])
    # the pairs in order of (doc_a, doc_b): a tenth of the rows, sorted by NumPy
    order = np.lexsort((first_b, first_a))
    rank = np.empty(order.shape[0], np.int64)
    rank[order] = np.arange(order.shape[0])
    return _placed(pair, rank, cols[2], cols[3])


@njit(**JIT_OPTIONS)
def _slot(a, b, mask):
    h = (np.uint64(a) * _MIX_A) ^ (np.uint64(b) * _MIX_B)
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@njit(**JIT_OPTIONS)
def _pairs(doc_a, doc_b):
    """(pair number of each row, each pair's doc_a, its doc_b): pairs numbered as first met."""
    n = doc_a.shape[0]
    # the pairs' ids grow as met (about a tenth of the rows), the rows' pair numbers in 32 bits:
    # what this adds to a task's peak stays near what Arrow's sort took
    first_a = np.empty(max(16, n // 8), np.int64)
    first_b = np.empty(first_a.shape[0], np.int64)
    pair = np.empty(n, np.int32)
    bits = 10
    table = np.full(1 << bits, -1, np.int64)  # a slot holds a pair's number; grown at half full
    pairs = 0
    for i in range(n):
        a = doc_a[i]
        b = doc_b[i]
        mask = (1 << bits) - 1
        s = _slot(a, b, mask)
        while True:
            p = table[s]
            if p < 0:
                if pairs == first_a.shape[0]:
                    first_a = _grown(first_a, pairs)
                    first_b = _grown(first_b, pairs)
                table[s] = pairs
                first_a[pairs] = a
                first_b[pairs] = b
                pair[i] = pairs
                pairs += 1
                break
            if first_a[p] == a and first_b[p] == b:
                pair[i] = p
                break
            s = (s + 1) & mask
        if 2 * pairs > (1 << bits):
            bits += 1
            mask = (1 << bits) - 1
            table = np.full(1 << bits, -1, np.int64)
            for p in range(pairs):
                s = _slot(first_a[p], first_b[p], mask)
                while table[s] >= 0:
                    s = (s + 1) & mask
                table[s] = p
    return pair, first_a[:pairs].copy(), first_b[:pairs].copy()


@njit(**JIT_OPTIONS)
def _grown(values, used):
    """values[:used] in an array twice as long."""
    more = np.empty(2 * values.shape[0], values.dtype)
    more[:used] = values[:used]
    return more


@njit(**JIT_OPTIONS)
def _placed(pair, rank, pos_a, pos_b):
    """The rows by their pair's rank (a stable counting pass), then each pair's rows by
    (pos_a, pos_b), stably: as one unsigned key whose order is the signed pair's."""
    n = pair.shape[0]
    pairs = rank.shape[0]
    start = np.zeros(pairs + 1, np.int64)
    for i in range(n):
        start[rank[pair[i]] + 1] += 1
    for r in range(pairs):
        start[r + 1] += start[r]
    at = start[:-1].copy()
    perm = np.empty(n, np.int64)
    key = np.empty(n, np.uint64)
    flip = np.uint32(0x80000000)  # a signed 32-bit value's order as an unsigned one's
    for i in range(n):
        r = rank[pair[i]]
        o = at[r]
        at[r] = o + 1
        perm[o] = i
        key[o] = (np.uint64(np.uint32(pos_a[i]) ^ flip) << np.uint64(32)) | np.uint64(np.uint32(pos_b[i]) ^ flip)
    for r in range(pairs):
        lo = start[r]
        hi = start[r + 1]
        if hi - lo <= _INSERTION_MAX:
            for i in range(lo + 1, hi):
                k = key[i]
                p = perm[i]
                j = i - 1
                while j >= lo and key[j] > k:
                    key[j + 1] = key[j]
                    perm[j + 1] = perm[j]
                    j -= 1
                key[j + 1] = k
                perm[j + 1] = p
        else:
            by = np.argsort(key[lo:hi], kind="mergesort")
            perm[lo:hi] = perm[lo:hi][by]
    return perm
