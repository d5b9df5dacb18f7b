"""The longest stretch of k-grams without a fingerprint, against a brute-force count; winnowing's
bound (never more than w - 1) and 0 mod p's lack of one, on random and on repetitive hashes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow import select_mod_p, winnow
from webwinnow.analysis.selection import longest_gap, unselected_windows

import naive


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, max(n - 1, 0)), max_size=n))))
def test_longest_gap_is_the_brute_force_count(case):
    n, chosen = case
    selected = sorted(c for c in chosen if c < n)
    assert longest_gap(np.array(selected, dtype=np.int64), n) == naive.longest_gap(selected, n)


@pytest.mark.parametrize("w", [1, 4, 30, 100])
@pytest.mark.parametrize("robust", [True, False])
def test_winnowing_never_leaves_more_than_w_minus_1_kgrams_unselected(w, robust):
    rng = np.random.default_rng(w)
    for hashes in (
        rng.integers(-(2**63), 2**63 - 1, 5000, dtype=np.int64),
        np.tile(rng.integers(-(2**63), 2**63 - 1, 7, dtype=np.int64), 700),  # low entropy
        np.zeros(3000, dtype=np.int64),
    ):  # all equal: robust keeps one per w
        selected = np.unique(winnow(hashes, w, robust))
        assert longest_gap(selected, hashes.size) <= w - 1


def test_mod_p_has_no_bound_at_the_same_density():
    rng = np.random.default_rng(7)
    hashes = rng.integers(-(2**63), 2**63 - 1, 200_000, dtype=np.int64)
    w = 100
    p = 50  # 1/p = 2/(w+1) near enough: the paper's comparison
    win, mod = np.unique(winnow(hashes, w)), select_mod_p(hashes, p)
    assert abs(win.size / hashes.size - 2 / (w + 1)) < 0.002 and abs(mod.size / hashes.size - 1 / p) < 0.002
    # gaps of 0 mod p are geometric: among 200,000 k-grams the longest is far beyond w
    assert longest_gap(win, hashes.size) <= w - 1 < 3 * w < longest_gap(mod, hashes.size)


@pytest.mark.parametrize("bad", [np.array([3, 2]), np.array([0, 5]), np.array([-1]), np.array([1.5])])
def test_selected_indices_are_checked(bad):
    with pytest.raises(ValueError):
        longest_gap(bad, 5)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(st.just(n), st.sets(st.integers(0, max(n - 1, 0)), max_size=n), st.integers(1, 12))
    )
)
def test_unselected_windows_are_the_brute_force_count(case):
    n, chosen, w = case
    selected = sorted(c for c in chosen if c < n)
    assert unselected_windows(np.array(selected, dtype=np.int64), n, w) == naive.unselected_windows(selected, n, w)


def test_mod_p_misses_about_e_to_the_minus_w_over_p_of_threshold_matches():
    rng = np.random.default_rng(11)
    hashes = rng.integers(-(2**63), 2**63 - 1, 400_000, dtype=np.int64)
    missed, windows = unselected_windows(select_mod_p(hashes, 50), hashes.size, 100)
    assert abs(missed / windows - (1 - 1 / 50) ** 100) < 0.01  # 13.3%; the paper rounds e^-2 = 13.5%
    assert unselected_windows(np.unique(winnow(hashes, 100)), hashes.size, 100)[0] == 0
