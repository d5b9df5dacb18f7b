"""webwinnow.explore's arithmetic against brute force: the max_df sweep's pair thresholds, curves
from document frequencies, the fit's residuals, robust against standard winnowing."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.analysis.powerlaw import freq_of_freq_from_runs
from webwinnow.explore import Curve, fit_quality, pair_thresholds, robust_vs_standard
from webwinnow.explore.density import LOW_ENTROPY

from naive import doc_frequency_counts, pairs_under_cap


def _seeds(rows: list[tuple[int, int]]):
    """(doc_a, doc_b, df) once per (pair, shared hash), as max_df_sweep feeds pair_thresholds."""
    docs_of: dict[int, set[int]] = {}
    for h, d in rows:
        docs_of.setdefault(h, set()).add(d)
    a, b, df = [], [], []
    for docs in docs_of.values():
        for x in docs:
            for y in docs:
                if x < y:
                    a.append(x)
                    b.append(y)
                    df.append(len(docs))
    return np.array(a, np.int64), np.array(b, np.int64), np.array(df, np.int64)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 12)), max_size=150), st.integers(1, 4))
def test_pair_thresholds_give_the_pairs_of_every_cap(rows, min_shared):
    a, b, df = _seeds(rows)
    q = np.sort(pair_thresholds(a, b, df, min_shared))
    # documents numbered 0..12: pairs counted in a bitmap in order of frequency (min_shared 1)
    assert np.array_equal(np.sort(pair_thresholds(a, b, df, min_shared, n_docs=13)), q)
    for cap in range(1, 15):
        assert int(np.searchsorted(q, cap, side="right")) == len(pairs_under_cap(rows, cap, min_shared)), cap


def test_pair_min_df_keeps_no_bitmap_past_its_limit_and_checks_the_numbering():
    from webwinnow.analysis.pairing import PAIR_BITMAP_BITS, pair_min_df

    a, b, df = np.array([0, 1]), np.array([2, 2]), np.array([5, 3])
    assert sorted(pair_min_df(a, b, df, 3).tolist()) == [3, 5]
    assert pair_min_df(a, b, df, int(PAIR_BITMAP_BITS**0.5) + 1) is None
    with pytest.raises(ValueError, match="numbered"):
        pair_min_df(a, b, df, 2)


def test_pair_thresholds_take_the_min_shared_th_smallest_frequency():
    a = np.array([1, 1, 1, 2], np.int64)
    b = np.array([5, 5, 5, 7], np.int64)
    df = np.array([9, 3, 6, 4], np.int64)
    assert sorted(pair_thresholds(a, b, df, 1).tolist()) == [3, 4]
    assert pair_thresholds(a, b, df, 2).tolist() == [6]  # pair (2, 7) shares one hash only
    assert pair_thresholds(a, b, df, 3).tolist() == [9]


def test_a_curve_from_document_frequencies_matches_counting():
    rng = random.Random(7)
    docs = [[rng.randrange(300) for _ in range(rng.randrange(1, 60))] for _ in range(40)]
    expected = doc_frequency_counts(docs)
    frequencies = np.array(list(expected.keys()), np.int64).repeat(list(expected.values()))
    curve = Curve.of_counts("test", frequencies, len(docs))
    assert freq_of_freq_from_runs(curve.runs) == expected
    assert curve.shares["hashes"] == sum(expected.values())
    assert curve.shares["once"] == pytest.approx(expected.get(1, 0) / sum(expected.values()))


def test_the_fit_quality_of_an_exact_power_law_is_flat():
    # docs = 1000 * rank^-0.7, rounded: the residuals stay within rounding, R² near 1
    fof: dict[int, int] = {}
    for rank in range(1, 30_000):  # down to docs = 1 past rank ~19,000
        d = max(1, round(1000 * rank**-0.7))
        fof[d] = fof.get(d, 0) + 1
    curve = Curve.of_counts("law", np.array(list(fof.keys())).repeat(list(fof.values())), 1000)
    quality = fit_quality(curve)
    assert quality.slope == pytest.approx(-0.7, abs=0.03)
    assert quality.r2 > 0.99
    assert abs(quality.worst[2]) < 0.2
    assert quality.tail is not None and quality.tail[2] == 1  # the hashes of one document: not fitted


def test_robust_winnowing_keeps_low_entropy_text_sparse():
    frame = robust_vs_standard(None, w=100, k=50).set_index("text")
    for name in LOW_ENTROPY:
        row = frame.loc[name]
        assert row.robust_density <= 1.5 / 100  # one per window length, about 1/w
    # a single repeated character: every shift has a new rightmost minimum for standard winnowing
    assert frame.loc["one letter repeated"].standard_density > 0.95
    assert frame.loc["two letters alternating"].standard_density > 0.45
