"""Distinct values of integer arrays by one sort.

NumPy 2.3 and later find `np.unique(values)`'s distinct values with a hash table, then sort
them: on this machine kind that is 4× slower than sorting at 30,000 int64 hashes, 20× at three
million (its table misses the cache on every row), and `return_counts` still costs about twice
the sort. Hash values, document ids and k-gram hashes are what webwinnow dedupes: one sort and
one comparison of neighbours is all they need.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a one-dimensional array (np.unique(values))."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("distinct takes a one-dimensional array")
    if values.size < 2:
        return np.array(values, copy=True)
    ordered = np.sort(values)
    return ordered[_firsts(ordered)]


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and how often each occurs (np.unique(values, return_counts=True))."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("distinct_counts takes a one-dimensional array")
    if not values.size:
        return np.array(values, copy=True), np.zeros(0, np.int64)
    ordered = np.sort(values)
    starts = np.flatnonzero(_firsts(ordered))
    return ordered[starts], _lengths(starts, ordered.size)


def occurrences(values: np.ndarray, overwrite: bool = False, runs: bool = False) -> np.ndarray:
    """How often each distinct value occurs, in value order (distinct_counts' counts), with no
    array of the distinct values made (millions of k-gram hashes). overwrite: sort `values`
    itself (a temporary of the caller's), not a copy. runs: `values` is sorted runs (documents'
    distinct hashes one after the other), which NumPy's stable sort (timsort) merges in half
    the time of its default sort; any order gives the same counts."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("occurrences takes a one-dimensional array")
    if not values.size:
        return np.zeros(0, np.int64)
    ordered = values if overwrite else np.array(values, copy=True)
    ordered.sort(kind="stable" if runs else None)
    return _lengths(np.flatnonzero(_firsts(ordered)), ordered.size)


def factorized(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and each value's index among them (np.unique(values,
    return_inverse=True)), for values that repeat: Arrow's hash table numbers them, and only the
    distinct ones are sorted, where np.unique sorts every value. The docs corpus's 1.1 M
    fingerprints by document (13,624 documents): 0.20-0.23 against 0.01-0.02 CPU-s."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("factorized takes a one-dimensional array")
    if not values.size:
        return np.array(values, copy=True), np.zeros(0, np.intp)
    encoded = pc.dictionary_encode(pa.array(values))
    found = encoded.dictionary.to_numpy(zero_copy_only=False)
    order = np.argsort(found, kind="stable")
    rank = np.empty(order.size, np.intp)
    rank[order] = np.arange(order.size)
    return found[order], rank[encoded.indices.to_numpy(zero_copy_only=False)]


def _lengths(starts: np.ndarray, size: int) -> np.ndarray:
    """The lengths of runs that begin at starts, the last one ending at size: no appended copy."""
    lengths = np.empty(starts.size, np.int64)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[-1] = size - starts[-1]
    return lengths


def _firsts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array begins."""
    first = np.empty(ordered.size, bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return first
