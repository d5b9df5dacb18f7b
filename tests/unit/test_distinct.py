"""core.distinct against np.unique, the obviously-correct reference it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.core.distinct import distinct, distinct_counts, factorized, occurrences


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), max_size=200), st.sampled_from([np.int64, np.uint64]))
def test_distinct_values_and_counts_are_np_uniques(values, dtype):
    if dtype is np.uint64:
        values = [v % 2**64 for v in values]
    array = np.array(values, dtype)
    expected, counts = np.unique(array, return_counts=True)
    got = distinct(array)
    assert got.dtype == array.dtype and np.array_equal(got, expected)
    got, n = distinct_counts(array)
    assert got.dtype == array.dtype and np.array_equal(got, expected) and np.array_equal(n, counts)
    assert n.dtype == np.int64
    assert np.array_equal(occurrences(array), counts) and occurrences(array).dtype == np.int64
    scratch = array.copy()
    assert np.array_equal(occurrences(scratch, overwrite=True), counts)
    assert np.array_equal(scratch, np.sort(array))  # sorted where it lies, as asked
    found, inverse = factorized(array)
    want, want_inverse = np.unique(array, return_inverse=True)
    assert found.dtype == array.dtype and np.array_equal(found, want)
    assert np.array_equal(inverse, want_inverse) and np.array_equal(found[inverse], array)
    # documents' distinct values one after the other, merged by the stable sort: the same counts
    halves = np.concatenate([distinct(array[: len(array) // 2]), distinct(array[len(array) // 2 :])])
    assert np.array_equal(occurrences(halves, runs=True), occurrences(halves))


def test_the_input_is_left_as_it_was_and_a_table_is_refused():
    array = np.array([3, 1, 3, 2], np.int32)
    assert distinct(array).tolist() == [1, 2, 3] and array.tolist() == [3, 1, 3, 2]
    assert distinct_counts(array)[1].tolist() == [1, 1, 2]
    one = np.array([7])
    assert distinct(one) is not one  # a copy, as np.unique gives
    with pytest.raises(ValueError, match="one-dimensional"):
        distinct(np.zeros((2, 2)))
    assert occurrences(array).tolist() == [1, 1, 2] and array.tolist() == [3, 1, 3, 2]
    with pytest.raises(ValueError, match="one-dimensional"):
        distinct_counts(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one-dimensional"):
        occurrences(np.zeros((2, 2)))
    assert factorized(array)[1].tolist() == [2, 0, 2, 1] and array.tolist() == [3, 1, 3, 2]
    assert [x.tolist() for x in factorized(np.zeros(0, np.int64))] == [[], []]
    with pytest.raises(ValueError, match="one-dimensional"):
        factorized(np.zeros((2, 2)))
