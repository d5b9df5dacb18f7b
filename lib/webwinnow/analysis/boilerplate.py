"""Boilerplate on arrays: the automatic document-frequency cap, and how much of a span is template.

No Spark: the pairs and passages stages call these with numbers and arrays they collected.
"""

from __future__ import annotations

import math

import numpy as np

MIN_AUTO_DF = 10


def auto_max_df(documents: int, df_counts: list[tuple[int, int]], pair_budget: int, seeds: dict[int, int] | None = None) -> int:
    """max_df from the corpus: ⌈√documents⌉ (at least 10), lowered while the self-join would
    emit more than pair_budget rows, given (document frequency, number of hashes) counts, and
    per document frequency a bound on its hashes' seed rows when known (seeds: the sum of
    occurrences·(occurrences − 1)/2).

    √N keeps a hash's pairs below N/2 (so no single hash dominates the output) while passages
    copied among a handful of sites stay far below it; site templates, which repeat on every
    page of a site, rise above it as a site grows. The self-join pairs occurrences, not
    documents: a hash that recurs within pages (a code idiom: "ID = ID + NUM ;") makes
    occ_a·occ_b seeds per pair of pages, which the document pairs alone undercount by orders of
    magnitude (385 M seeds against 3.7 M document pairs on the docs corpus in code tokens).
    """
    cap = max(MIN_AUTO_DF, math.isqrt(max(documents - 1, 0)) + 1)
    cost = 0
    for df, hashes in sorted(df_counts):
        if df > cap:
            break
        cost += max(hashes * df * (df - 1) // 2, (seeds or {}).get(df, 0))
        if cost > pair_budget:
            return max(1, df - 1)
    return cap


def boilerplate_share(
    hashes: np.ndarray, positions: np.ndarray, boilerplate: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Per span [start, end): the share of fingerprints inside it whose hash is in the sorted
    array boilerplate; NaN for a span holding no fingerprint."""
    return flagged_share(positions, is_boilerplate(hashes, boilerplate), start, end)


def is_boilerplate(hashes: np.ndarray, boilerplate: np.ndarray) -> np.ndarray:
    """Whether each hash is in the sorted array boilerplate."""
    if not len(boilerplate):
        return np.zeros(len(hashes), bool)
    at = np.searchsorted(boilerplate, hashes).clip(max=len(boilerplate) - 1)
    return boilerplate[at] == hashes


def flagged_share(positions: np.ndarray, flags: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per span [start, end): the share of the positions inside it whose flag is set; NaN for a
    span holding none."""
    order = np.argsort(positions, kind="stable")
    positions, flags = positions[order], np.asarray(flags)[order].astype(np.int64)
    cumulative = np.concatenate([[0], np.cumsum(flags)])
    lo = np.searchsorted(positions, start, side="left")
    hi = np.searchsorted(positions, end, side="left")
    inside = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(inside > 0, (cumulative[hi] - cumulative[lo]) / np.maximum(inside, 1), np.nan)
