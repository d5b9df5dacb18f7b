"""The fingerprint rank–frequency curve: run-length encoding, a power-law fit, frequency shares.

Every distinct fingerprint hash has a document frequency ``docs`` (how many documents hold it).
Sorting hashes by ``docs``, most frequent first, gives each one a rank; the paper (Schleimer,
Wilkerson, Aiken 2003, section 5) plots docs against rank on log–log axes and finds a power law
over the frequent part, with most hashes seen in a single document (82% once, 14% twice, 2%
three times on their web crawl).

At crawl scale there are ~10^8..10^10 hashes but only a few thousand distinct ``docs`` values,
so everything here works on runs: ``(rank, rank_last, docs, hashes)`` means ranks
``rank..rank_last`` (``hashes`` of them) all have ``docs`` documents (the RANK_FREQ table).
Nothing ever expands a run to one value per hash.

Pure functions; numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._checks import integer as _int

RankFreqRun = tuple[int, int, int, int]

# Runs at most this long are summed term by term; longer ones use the Euler–Maclaurin formula
# for the part of the run at ranks >= _EM_FROM (below it the terms are summed directly too).
_DIRECT_MAX = 4096
_EM_FROM = 1024
_LN10 = math.log(10.0)


def _pairs(freq_of_freq: Mapping[int, int] | Iterable[tuple[int, int]]) -> dict[int, int]:
    """(docs -> number of hashes with that document frequency), validated, duplicates summed."""
    items = freq_of_freq.items() if isinstance(freq_of_freq, Mapping) else freq_of_freq
    out: dict[int, int] = {}
    for item in items:
        docs, hashes = item
        docs = _int(docs, "docs")
        hashes = _int(hashes, "hashes")
        if docs < 1:
            raise ValueError(f"docs (a document frequency) must be >= 1, got {docs}")
        if hashes < 0:
            raise ValueError(f"hashes (a count) must be >= 0, got {hashes} for docs = {docs}")
        if hashes:
            out[docs] = out.get(docs, 0) + hashes
    return out


def rank_frequency(
    freq_of_freq: Mapping[int, int] | Iterable[tuple[int, int]],
) -> list[RankFreqRun]:
    """The run-length-encoded rank–frequency table from a frequency-of-frequencies table.

    ``freq_of_freq`` maps ``docs`` (a document frequency) to the number of hashes that have it,
    as a dict or as ``(docs, hashes)`` pairs (repeated ``docs`` are added up; zero counts are
    dropped). Returns ``(rank, rank_last, docs, hashes)`` runs, ranks 1-based, most frequent
    first; hashes tied on ``docs`` form one run (their order within it is arbitrary).
    """
    runs: list[RankFreqRun] = []
    rank = 1
    for docs, hashes in sorted(_pairs(freq_of_freq).items(), key=lambda kv: -kv[0]):
        runs.append((rank, rank + hashes - 1, docs, hashes))
        rank += hashes
    return runs


def _runs(rank_freq: Iterable[Any]) -> list[RankFreqRun]:
    """Validated runs from tuples or from mappings with the RANK_FREQ column names."""
    runs: list[RankFreqRun] = []
    for row in rank_freq:
        if isinstance(row, Mapping):
            row = (row["rank"], row["rank_last"], row["docs"], row["hashes"])
        rank, rank_last, docs, hashes = (_int(v, n) for v, n in zip(row, ("rank", "rank_last", "docs", "hashes")))
        if rank < 1 or rank_last < rank or hashes != rank_last - rank + 1 or docs < 1:
            raise ValueError(
                f"not a rank-frequency run (need 1 <= rank <= rank_last, hashes = rank_last - rank + 1, "
                f"docs >= 1): {(rank, rank_last, docs, hashes)}"
            )
        runs.append((rank, rank_last, docs, hashes))
    runs.sort()
    for prev, cur in zip(runs, runs[1:]):
        if cur[0] <= prev[1]:
            raise ValueError(f"rank-frequency runs overlap: {prev} and {cur}")
    return runs


def _ln_sums(a: int, b: int) -> tuple[float, float]:
    """(sum of ln i, sum of ln(i)^2) for i = a..b, exact up to rounding, in O(1) for long runs.

    Short runs are summed term by term. For long runs, sum ln i = lgamma(b+1) - lgamma(a)
    exactly, and sum ln(i)^2 uses the Euler–Maclaurin formula on the part from _EM_FROM on
    (integral + end-point terms + first two derivative corrections), where f = ln^2 is so smooth
    that the remainder is below 1e-12 per run; the part below _EM_FROM is summed directly.
    """
    if b - a < _DIRECT_MAX:
        x = np.log(np.arange(a, b + 1, dtype=np.float64))
        return float(x.sum()), float((x * x).sum())
    s1 = math.lgamma(b + 1) - math.lgamma(a)
    s2 = 0.0
    if a < _EM_FROM:
        x = np.log(np.arange(a, _EM_FROM, dtype=np.float64))
        s2 += float((x * x).sum())
        a = _EM_FROM

    def antiderivative(x: float) -> float:  # of ln(x)^2
        lx = math.log(x)
        return x * (lx * lx - 2.0 * lx + 2.0)

    def f(x: float) -> float:
        return math.log(x) ** 2

    def f1(x: float) -> float:
        return 2.0 * math.log(x) / x

    def f3(x: float) -> float:
        return (4.0 * math.log(x) - 6.0) / x**3

    s2 += antiderivative(b) - antiderivative(a) + (f(a) + f(b)) / 2.0 + (f1(b) - f1(a)) / 12.0 - (f3(b) - f3(a)) / 720.0
    return s1, s2


def _log_bounds(a: int, b: int) -> tuple[float, float, float]:
    """(u, v, v - u): the log10-rank interval that ranks a..b cover in the "log" weighting.

    Rank r stands for the log-rank interval from (1/2)log10(r(r-1)) to (1/2)log10(r(r+1)) (rank
    1 from -(1/2)log10 2): the boundaries are geometric means of neighbouring ranks, so each
    interval is centred (in log space, to O(1/r^2)) on its own rank and neighbouring intervals
    tile the axis. v - u is computed without cancellation, for runs of one rank at 10^9.
    """
    u = 0.5 * math.log10(a * (a - 1)) if a > 1 else -0.5 * math.log10(2.0)
    v = 0.5 * math.log10(b * (b + 1))
    if a > 1:
        width = 0.5 * (math.log1p((b - a) / a) + math.log1p((b - a + 2) / (a - 1))) / _LN10
    else:
        width = v - u
    return u, v, width


def fit_power_law(
    rank_freq: Iterable[Any],
    *,
    min_docs: int = 2,
    max_rank: int | None = None,
    weighting: str = "log",
) -> dict[str, Any]:
    """Least-squares fit of log10(docs) = intercept + slope * log10(rank) over the frequent part.

    ``rank_freq`` holds ``(rank, rank_last, docs, hashes)`` runs (tuples, or mappings with those
    keys), as from :func:`rank_frequency` or the RANK_FREQ table.

    Fitted range: ranks whose ``docs >= min_docs`` (and ``rank <= max_rank`` when given). The
    default ``min_docs = 2`` leaves out the hashes seen in a single document: that tail is flat
    (docs = 1 for ~80% of all ranks), says nothing about the slope, and would dominate the fit.
    ``min_docs = 1`` keeps it.

    Runs are never expanded to one point per hash; each contributes closed-form moments.

    ``weighting = "log"`` (default): the curve is treated as the step function it is on the
    log–log plot, and fitted with equal weight per unit of log10(rank) -- as if ranks were
    sampled log-uniformly, every decade of ranks counting the same. Each rank covers the
    log-rank interval between the geometric means with its neighbours (:func:`_log_bounds`), a
    run the union of its ranks' intervals, so a run weighs the log-width it spans on the plot
    (a run of 10^6 tied hashes at ranks 10^6..2*10^6 weighs 0.3 decades, like ranks 10..20),
    and splitting a run into single ranks gives exactly the same fit. Why not one point per
    rank: document frequencies are integers, so the low end of the fitted range is a few long
    plateaus (docs = 2, 3, ...) that hold most of the ranks; per-rank least squares is
    dominated by them and misreads docs = C * rank^-0.7 as a slope near -0.55 (ceil-rounded
    counts), while the log weighting stays within about 0.02 (see tests/unit/test_powerlaw.py).

    ``weighting = "rank"``: ordinary least squares over one point (log10 rank, log10 docs) per
    rank, exactly as if every run were expanded into ``hashes`` points: a run contributes the
    exact sums of x and x^2 over its ranks (log-gamma for sum ln i, Euler–Maclaurin for sum
    ln^2 i, :func:`_ln_sums`), never one representative point repeated (a mid-rank point times
    the run length would get x^2 and x*y wrong wherever runs are long on a log axis).

    Returns ``slope``, ``intercept`` (log10 docs at rank 1), ``r2`` (weighted, as fitted),
    ``rank_min``, ``rank_max`` (the fitted ranks), ``points`` (ranks fitted, i.e. hashes),
    ``runs`` (runs fitted), ``min_docs``, ``max_rank`` and ``weighting``. With fewer than 2
    distinct points in range ``slope``, ``intercept`` and ``r2`` are None and ``reason`` says
    why; ``r2`` is None also when all fitted ranks have the same ``docs`` (slope 0, no variance
    to explain).
    """
    min_docs = _int(min_docs, "min_docs")
    if max_rank is not None:
        max_rank = _int(max_rank, "max_rank")
        if max_rank < 1:
            raise ValueError(f"max_rank must be >= 1 or None, got {max_rank}")
    if weighting not in ("log", "rank"):
        raise ValueError(f"weighting must be 'log' or 'rank', got {weighting!r}")

    n = 0
    sw = sx = sxx = sy = syy = sxy = 0.0  # weighted sums: weight, x, x^2, y, y^2, x*y
    used: list[RankFreqRun] = []
    for rank, rank_last, docs, _hashes in _runs(rank_freq):
        if docs < min_docs:
            continue
        if max_rank is not None:
            if rank > max_rank:
                continue
            rank_last = min(rank_last, max_rank)
        m = rank_last - rank + 1
        if weighting == "rank":
            ln_sum, ln2_sum = _ln_sums(rank, rank_last)
            w, x_sum, xx_sum = float(m), ln_sum / _LN10, ln2_sum / (_LN10 * _LN10)
        else:
            u, v, w = _log_bounds(rank, rank_last)
            x_sum, xx_sum = w * (u + v) / 2.0, w * (u * u + u * v + v * v) / 3.0
        y = math.log10(docs)
        n += m
        sw += w
        sx += x_sum
        sxx += xx_sum
        sy += w * y
        syy += w * y * y
        sxy += y * x_sum
        used.append((rank, rank_last, docs, m))

    result: dict[str, Any] = {
        "slope": None,
        "intercept": None,
        "r2": None,
        "rank_min": used[0][0] if used else None,
        "rank_max": used[-1][1] if used else None,
        "points": n,
        "runs": len(used),
        "min_docs": min_docs,
        "max_rank": max_rank,
        "weighting": weighting,
    }
    if n < 2:
        result["reason"] = (
            f"fewer than 2 ranks to fit ({n} with docs >= {min_docs}"
            + (f" and rank <= {max_rank}" if max_rank is not None else "")
            + ")"
        )
        return result
    # Centered second moments from raw sums over at most a few thousand runs: the cancellation
    # costs a few of float64's sixteen digits (x is at most ~10).
    mean_x, mean_y = sx / sw, sy / sw
    var_x = sxx / sw - mean_x * mean_x
    var_y = max(syy / sw - mean_y * mean_y, 0.0)
    cov = sxy / sw - mean_x * mean_y
    if var_x <= 0.0:
        result["reason"] = "all fitted points have the same rank"
        return result
    if var_y > 1e-12 * max(syy / sw, 1e-300):
        slope = cov / var_x
        result["r2"] = min(max(cov * cov / (var_x * var_y), 0.0), 1.0)
    else:  # docs is the same everywhere in range: flat, and nothing to explain
        slope = 0.0
    result["slope"] = slope
    result["intercept"] = mean_y - slope * mean_x
    return result


def frequency_shares(freq_of_freq: Mapping[int, int] | Iterable[tuple[int, int]]) -> dict[str, Any]:
    """Share of hashes seen in exactly 1, 2, 3 and more than 3 documents.

    Returns ``hashes`` (distinct hashes in all), ``once``, ``twice``, ``three_times`` and
    ``more`` (fractions summing to 1; None when there are no hashes). The paper reports 82%,
    14% and 2% for its web crawl.
    """
    counts = _pairs(freq_of_freq)
    total = sum(counts.values())
    parts = {
        "once": counts.get(1, 0),
        "twice": counts.get(2, 0),
        "three_times": counts.get(3, 0),
        "more": sum(h for d, h in counts.items() if d > 3),
    }
    out: dict[str, Any] = {"hashes": total}
    for key, value in parts.items():
        out[key] = value / total if total else None
    return out


def freq_of_freq_from_runs(rank_freq: Iterable[Any]) -> dict[int, int]:
    """Back from rank–frequency runs to (docs -> number of hashes)."""
    out: dict[int, int] = {}
    for _rank, _last, docs, hashes in _runs(rank_freq):
        out[docs] = out.get(docs, 0) + hashes
    return out
