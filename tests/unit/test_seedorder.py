"""core.seedorder against Python's stable sort of the rows (naive.stable_order)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.core.seedorder import _INSERTION_MAX, seed_order

from naive import stable_order

I64 = st.integers(-(2**63), 2**63 - 1)
I32 = st.integers(-(2**31), 2**31 - 1)
#: Few distinct values, so that pairs repeat and rows tie on every key.
FEW = st.integers(-2, 2)


def _check(doc_a, doc_b, pos_a, pos_b) -> None:
    cols = (
        np.array(doc_a, np.int64),
        np.array(doc_b, np.int64),
        np.array(pos_a, np.int32),
        np.array(pos_b, np.int32),
    )
    before = [c.copy() for c in cols]
    got = seed_order(*cols)
    assert got.dtype == np.int64
    assert got.tolist() == stable_order(list(doc_a), list(doc_b), list(pos_a), list(pos_b))
    assert all(np.array_equal(c, b) for c, b in zip(cols, before, strict=True))  # read, not sorted


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(I64 | FEW, I64 | FEW, I32 | FEW, I32 | FEW), max_size=120))
def test_the_order_is_the_stable_sort_of_the_rows(rows):
    _check(*(list(c) for c in zip(*rows, strict=True))) if rows else _check([], [], [], [])


def test_pairs_with_more_seeds_than_insertion_sorts_and_many_pairs():
    # pairs of 1 to 3 * _INSERTION_MAX seeds with repeated positions (merge sort's stability),
    # and more pairs than the table's first size (it grows while rows keep their numbers)
    rng = np.random.default_rng(3)
    docs = rng.integers(-(2**63), 2**63 - 1, 600, dtype=np.int64)
    a, b, pa_, pb = [], [], [], []
    for p in range(3_000):
        seeds = int(rng.integers(1, 3 * _INSERTION_MAX))
        x, y = docs[p % 600], docs[(7 * p + 1) % 600] if p % 5 else -1
        a += [x] * seeds
        b += [y] * seeds
        pa_ += rng.integers(-5, 50, seeds).tolist()
        pb += rng.integers(0, 3, seeds).tolist()
    shuffled = rng.permutation(len(a))
    cols = [np.array(c)[shuffled] for c in (a, b, pa_, pb)]
    _check(*(c.tolist() for c in cols))


def test_every_seed_a_pair_of_its_own():
    # more pairs than the kernel first makes room for (an eighth of the rows), in any order
    rng = np.random.default_rng(5)
    a = rng.integers(-(2**63), 2**63 - 1, 5_000, dtype=np.int64)
    _check(a.tolist(), (a[::-1] ^ 7).tolist(), rng.integers(0, 9, 5_000).tolist(), [0] * 5_000)


def test_one_pair_of_many_seeds_in_reverse():
    n = 10 * _INSERTION_MAX
    _check([5] * n, [9] * n, list(range(n, 0, -1)), [0] * n)


def test_other_integer_columns_take_numpys_sort_to_the_same_order():
    rng = np.random.default_rng(9)
    docs, positions = rng.integers(-3, 3, 200), rng.integers(-4, 4, 200)
    cols = (docs.astype(np.int32), docs.astype(np.int64), positions.astype(np.int64), positions.astype(np.uint16))
    got = seed_order(*cols)
    assert got.dtype == np.int64
    assert got.tolist() == stable_order(*(c.tolist() for c in cols))


@pytest.mark.parametrize(
    "cols",
    [
        (np.zeros(3, np.int64), np.zeros(2, np.int64), np.zeros(3, np.int32), np.zeros(3, np.int32)),
        (np.zeros((3, 1), np.int64), np.zeros(3, np.int64), np.zeros(3, np.int32), np.zeros(3, np.int32)),
        (np.zeros(3, np.float64), np.zeros(3, np.int64), np.zeros(3, np.int32), np.zeros(3, np.int32)),
    ],
)
def test_other_shapes_and_floats_are_refused(cols):
    with pytest.raises(ValueError, match="seed_order takes"):
        seed_order(*cols)
