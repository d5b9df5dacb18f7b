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
    return HashSet(boilerplate).contains(hashes)


class HashSet:
    """A sorted array of hashes, asked for membership many times (once per page of a batch).

    Every k-gram of every page is looked up in the template k-grams: a binary search each was
    most of the window pass. A table of the set's low bits (about 64 slots per member, so about
    1 in 64 non-members passes it) leaves the search to the few that might be in it; it is made
    once, on the first lookup of 1,024 hashes or more."""

    def __init__(self, members: np.ndarray) -> None:
        self.members = np.asarray(members, np.int64)
        self._seen: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.members)

    def table(self) -> np.ndarray:
        """The set's table of low bits: slot h & (len - 1) is set when some member has h's low
        bits. Made on first use."""
        if self._seen is None:
            self._seen = np.zeros(1 << min(24, max(10, int(len(self.members) * 64).bit_length())), bool)
            self._seen[self.members & (len(self._seen) - 1)] = True
        return self._seen

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        hashes = np.asarray(hashes, np.int64)
        if not len(self.members):
            return np.zeros(len(hashes), bool)
        if len(hashes) < 1024:
            return _members(hashes, self.members)
        seen = self.table()
        maybe = np.flatnonzero(seen[hashes & (len(seen) - 1)])
        out = np.zeros(len(hashes), bool)
        out[maybe] = _members(hashes[maybe], self.members)
        return out


def _members(hashes: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    at = np.searchsorted(sorted_set, hashes).clip(max=len(sorted_set) - 1)
    return sorted_set[at] == hashes


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
