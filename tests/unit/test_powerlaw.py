"""powerlaw: rank-frequency runs, the power-law fit (both weightings), frequency shares."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.analysis.powerlaw import (
    _ln_sums,
    fit_power_law,
    freq_of_freq_from_runs,
    frequency_shares,
    rank_frequency,
)


def runs_of(docs_per_rank: np.ndarray) -> list[tuple[int, int, int, int]]:
    values, counts = np.unique(docs_per_rank, return_counts=True)
    return rank_frequency(zip(values.tolist(), counts.tolist()))


def expanded(runs) -> tuple[np.ndarray, np.ndarray]:
    """One (rank, docs) point per rank: what the fit must equal without building it."""
    ranks = np.concatenate([np.arange(r, last + 1) for r, last, _, _ in runs])
    docs = np.concatenate([np.full(last - r + 1, d) for r, last, d, _ in runs])
    return ranks, docs


def ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    slope, intercept = np.polyfit(x, y, 1)
    r2 = np.corrcoef(x, y)[0, 1] ** 2
    return slope, intercept, r2


# ---------------------------------------------------------------- rank_frequency


def test_rank_frequency_runs_most_frequent_first():
    assert rank_frequency({1: 5, 3: 2, 10: 1}) == [(1, 1, 10, 1), (2, 3, 3, 2), (4, 8, 1, 5)]


def test_rank_frequency_from_pairs_sums_duplicates_and_drops_zeros():
    assert rank_frequency([(2, 1), (7, 0), (2, 3), (5, 1)]) == [(1, 1, 5, 1), (2, 5, 2, 4)]
    assert rank_frequency({}) == []
    assert rank_frequency([(np.int64(4), np.int64(2))]) == [(1, 2, 4, 2)]


@pytest.mark.parametrize("bad", [{0: 3}, {2: -1}, [(1.5, 2)], [("3", 1)], [(True, 1)]])
def test_rank_frequency_rejects_bad_input(bad):
    with pytest.raises((ValueError, TypeError)):
        rank_frequency(bad)


def test_freq_of_freq_round_trip():
    fof = {1: 1000, 2: 140, 3: 20, 9: 1, 50: 2}
    assert freq_of_freq_from_runs(rank_frequency(fof)) == fof
    # RANK_FREQ rows as dicts are accepted too
    rows = [dict(zip(("rank", "rank_last", "docs", "hashes"), r)) for r in rank_frequency(fof)]
    assert freq_of_freq_from_runs(rows) == fof


@pytest.mark.parametrize(
    "runs",
    [[(0, 1, 3, 2)], [(1, 2, 3, 3)], [(2, 1, 3, 0)], [(1, 3, 5, 3), (3, 4, 2, 2)], [(1, 1, 0, 1)]],
)
def test_fit_rejects_malformed_runs(runs):
    with pytest.raises(ValueError):
        fit_power_law(runs)


# ---------------------------------------------------------------- fit: accuracy


@pytest.mark.parametrize("weighting", ["log", "rank"])
def test_zipf_slope_recovered(weighting):
    ranks = np.arange(1, 1_000_001)
    docs = np.maximum(np.round(1e6 * ranks**-0.7), 1).astype(np.int64)
    runs = runs_of(docs)
    assert len(runs) < 10_000  # run-length encoded: far fewer runs than ranks
    fit = fit_power_law(runs, weighting=weighting)
    assert fit["slope"] == pytest.approx(-0.7, abs=0.02)
    assert fit["intercept"] == pytest.approx(6.0, abs=0.05)
    assert fit["r2"] > 0.99
    assert (fit["rank_min"], fit["rank_max"], fit["points"]) == (1, 1_000_000, 1_000_000)


def test_zipf_slope_recovered_with_integer_plateaus_and_a_singleton_tail():
    """Real document frequencies are small integers at the low end: long plateaus at docs = 2, 3.

    The default log weighting reads the slope through them; one-point-per-rank least squares is
    dragged towards the plateaus (documented in fit_power_law)."""
    ranks = np.arange(1, 2_000_001)
    docs = np.ceil(1e4 * ranks**-0.7).astype(np.int64)  # 1e4 documents at the top, down to 1
    runs = runs_of(docs)
    assert runs[-1][2] == 1 and runs[-1][3] > 1_000_000  # the flat tail of hashes seen once
    log_fit = fit_power_law(runs)
    rank_fit = fit_power_law(runs, weighting="rank")
    assert log_fit["weighting"] == "log"
    assert log_fit["slope"] == pytest.approx(-0.7, abs=0.025)
    assert abs(rank_fit["slope"] + 0.7) > abs(log_fit["slope"] + 0.7)
    # the singleton tail is what min_docs = 2 keeps out; per rank it would flatten the fit further
    assert log_fit["rank_max"] == runs[-2][1]
    assert fit_power_law(runs, min_docs=1, weighting="rank")["slope"] > rank_fit["slope"]


# ---------------------------------------------------------------- fit: runs = expanded data


def test_rank_weighting_equals_expanded_per_rank_least_squares():
    runs = rank_frequency({500: 1, 300: 2, 120: 3, 40: 10, 9: 50, 5: 200, 3: 3000, 2: 9000, 1: 50000})
    ranks, docs = expanded(runs)
    fit = fit_power_law(runs, weighting="rank")
    keep = docs >= 2
    slope, intercept, r2 = ols(np.log10(ranks[keep]), np.log10(docs[keep]))
    assert fit["slope"] == pytest.approx(slope, rel=1e-9)
    assert fit["intercept"] == pytest.approx(intercept, rel=1e-9)
    assert fit["r2"] == pytest.approx(r2, rel=1e-9)
    assert fit["points"] == int(keep.sum())


def test_rank_weighting_long_runs_use_closed_forms_exactly():
    # runs far longer than the term-by-term limit, starting low and high
    runs = [(1, 1, 10_000, 1), (2, 9_000, 700, 8_999), (9_001, 9_001, 650, 1), (9_002, 300_000, 3, 290_999)]
    ranks, docs = expanded(runs)
    slope, intercept, r2 = ols(np.log10(ranks), np.log10(docs))
    fit = fit_power_law(runs, weighting="rank")
    assert fit["slope"] == pytest.approx(slope, rel=1e-9)
    assert fit["intercept"] == pytest.approx(intercept, rel=1e-9)
    assert fit["r2"] == pytest.approx(r2, rel=1e-9)


@pytest.mark.parametrize("a,b", [(1, 1), (1, 10_000), (7, 5_000_000), (1_000_000, 3_000_000), (123_456_789, 123_456_790)])
def test_ln_sums_match_direct_sums(a, b):
    s1, s2 = _ln_sums(a, b)
    if b - a < 4_000_000:
        x = np.log(np.arange(a, b + 1, dtype=np.float64))
        assert s1 == pytest.approx(math.fsum(x), rel=1e-12)
        assert s2 == pytest.approx(math.fsum(x * x), rel=1e-12)


def test_log_weighting_is_the_same_for_runs_and_for_single_ranks():
    runs = rank_frequency({800: 1, 200: 3, 50: 7, 11: 40, 4: 300, 2: 900, 1: 5000})
    single = [(r, r, d, 1) for r, last, d, _ in runs for r in range(r, last + 1)]
    a, b = fit_power_law(runs), fit_power_law(single)
    for key in ("slope", "intercept", "r2", "rank_min", "rank_max", "points"):
        assert a[key] == pytest.approx(b[key], rel=1e-9), key


def test_log_weighting_gives_every_decade_the_same_weight():
    """Two decades of ranks with the same docs slope: the fit does not care that the second
    decade holds ten times the ranks."""
    ranks = np.arange(1, 1001)
    docs = np.round(1e5 * ranks**-1.0).astype(np.int64)
    fit = fit_power_law(runs_of(docs), min_docs=1)
    assert fit["slope"] == pytest.approx(-1.0, abs=0.01)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.integers(1, 10_000), st.integers(1, 60), min_size=2, max_size=25), st.integers(1, 3))
def test_rank_weighting_matches_expansion_property(fof, min_docs):
    runs = rank_frequency(fof)
    ranks, docs = expanded(runs)
    keep = docs >= min_docs
    fit = fit_power_law(runs, min_docs=min_docs, weighting="rank")
    if keep.sum() < 2:
        assert fit["slope"] is None and "reason" in fit
        return
    x, y = np.log10(ranks[keep]), np.log10(docs[keep])
    slope = np.polyfit(x, y, 1)[0] if np.ptp(y) > 0 else 0.0
    assert fit["slope"] == pytest.approx(slope, rel=1e-7, abs=1e-9)


# ---------------------------------------------------------------- fit: range and degenerate input


def test_max_rank_cuts_a_run_partially():
    runs = rank_frequency({100: 1, 40: 5, 10: 100, 2: 1000})
    cut = fit_power_law(runs, max_rank=50)
    manual = [(1, 1, 100, 1), (2, 6, 40, 5), (7, 50, 10, 44)]
    ref = fit_power_law(manual)
    assert (cut["rank_min"], cut["rank_max"], cut["points"], cut["runs"]) == (1, 50, 50, 3)
    assert cut["slope"] == pytest.approx(ref["slope"], rel=1e-12)
    assert cut["max_rank"] == 50


def test_min_docs_sets_the_range():
    runs = rank_frequency({100: 1, 40: 5, 10: 100, 2: 1000, 1: 10_000})
    assert fit_power_law(runs)["rank_max"] == 1106
    assert fit_power_law(runs, min_docs=10)["rank_max"] == 106
    assert fit_power_law(runs, min_docs=1)["rank_max"] == 11_106


@pytest.mark.parametrize(
    "runs,kwargs",
    [
        ([], {}),
        ([(1, 1, 5, 1)], {}),  # one rank
        ([(1, 1000, 1, 1000)], {}),  # only hashes seen once
        ([(1, 1, 9, 1), (2, 5, 1, 4)], {}),  # one rank with docs >= 2
        (rank_frequency({9: 1, 4: 3}), {"min_docs": 20}),
        (rank_frequency({9: 1, 4: 3}), {"max_rank": 1}),
    ],
)
def test_too_few_points_gives_no_slope_and_a_reason(runs, kwargs):
    fit = fit_power_law(runs, **kwargs)
    assert fit["slope"] is None and fit["intercept"] is None and fit["r2"] is None
    assert "fewer than 2" in fit["reason"]


@pytest.mark.parametrize("weighting", ["log", "rank"])
def test_flat_curve_has_slope_zero_and_no_r2(weighting):
    fit = fit_power_law([(1, 50, 7, 50)], weighting=weighting)
    assert fit["slope"] == 0.0
    assert fit["intercept"] == pytest.approx(math.log10(7))
    assert fit["r2"] is None
    assert "reason" not in fit


def test_two_points_fit_exactly():
    fit = fit_power_law([(1, 1, 100, 1), (2, 2, 10, 1)], weighting="rank")
    assert fit["slope"] == pytest.approx(-1 / math.log10(2))
    assert fit["r2"] == pytest.approx(1.0)


def test_bad_arguments():
    with pytest.raises(ValueError):
        fit_power_law([], weighting="median")
    with pytest.raises(ValueError):
        fit_power_law([], max_rank=0)
    with pytest.raises(TypeError):
        fit_power_law([], min_docs=2.5)


# ---------------------------------------------------------------- shares


def test_frequency_shares():
    shares = frequency_shares({1: 82, 2: 14, 3: 2, 4: 1, 1000: 1})
    assert shares == {"hashes": 100, "once": 0.82, "twice": 0.14, "three_times": 0.02, "more": 0.02}
    assert frequency_shares([(2, 5), (2, 5)])["twice"] == 1.0


def test_frequency_shares_empty():
    assert frequency_shares({}) == {"hashes": 0, "once": None, "twice": None, "three_times": None, "more": None}
