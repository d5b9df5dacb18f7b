"""What dedup cuts from a copy, beyond the passages table's rows: the rows a cap left out, the
repeats that seeded nothing, and which source must keep what the copy lost.

The passages table is a report: a pair that hit passages.max_spans or passages.max_compared
holds only the spans found before the cap, and a hash's occurrences past pairing.max_repeats in a
document seed nothing. Dedup cannot stop there, or the copies it did not see stay in two kept
pages. So:

- **all_spans** grows a capped pair again from the two whole texts, from every occurrence of
  every shared non-boilerplate fingerprint, with no span cap and a work bound far above the
  report's (a pair that reaches even that is counted as incomplete, never passed as done);
- **repeat_spans** finds, in a copy, every other occurrence of the normalized text of a passage it
  loses (a paragraph pasted 40 times where the source has it once): the same text, so a copy of
  the same source passage; needed only where a hash repeats past the cap (repeats_unseeded);
- **needed_sources** says, of the passages a copy loses, which must stay in their source: a
  source keeps what a later page lost to it (but what the later page would lose as its own
  template) even where that text is the source's template, else --strip-template would cut it
  from the source too and the passage would be in no kept page, and even if nothing else of the
  source is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..core.codetokens import DEFAULT_LEXER
from ..core.distinct import distinct_counts
from ..core.winnowing import fingerprint, units
from .boilerplate import is_boilerplate
from .spans import copied_passages
from .template import text_template

#: Seeds per shared hash when a pair is grown again: every occurrence in the copy, and as many of
#: the source's as keep occurrences × occurrences under this (one at least). The copy's every
#: occurrence is what dedup must cover; more source occurrences only find the same text again.
SEEDS_PER_HASH = 4096


class Span(NamedTuple):
    """A passage as dedup takes it: character offsets in the copy and the source, its length in
    units and its units outside the copy's template."""

    copy_start: int
    copy_end: int
    source_start: int
    source_end: int
    length: int
    content: int


def all_spans(
    copy_text: str,
    source_text: str,
    boilerplate: np.ndarray,
    *,
    k: int,
    w: int,
    robust: bool,
    mod_p: int,
    unit: str,
    lexer: str,
    max_compared: int,
    template_kgrams: np.ndarray | None = None,
) -> tuple[list[Span], bool]:
    """Every maximal copied span of two whole texts grown from their shared non-boilerplate
    fingerprints, with no cap on their number: (spans, complete). complete is False when
    max_compared unit comparisons were not enough."""
    seeds_copy, seeds_source = _shared_seeds(copy_text, source_text, boilerplate, k, w, robust, mod_p, unit, lexer)
    if not len(seeds_copy):
        return [], True
    found = copied_passages(
        copy_text,
        source_text,
        seeds_copy,
        seeds_source,
        k,
        max_spans=len(seeds_copy),
        max_chars=max_compared,
        unit=unit,
        lexer=lexer,
    )
    offsets, _, lo, hi = text_template(copy_text, k, w, robust, mod_p, boilerplate, template_kgrams, unit, lexer)
    first = np.searchsorted(offsets, found.start_a, side="left")
    content = found.length - _inside(lo, hi, first, first + found.length)
    spans = [
        Span(int(sa), int(ea), int(sb), int(eb), int(n), int(c))
        for sa, ea, sb, eb, n, c in zip(
            found.start_a, found.end_a, found.start_b, found.end_b, found.length, content, strict=True
        )
    ]
    return spans, not found.capped


def _inside(lo: np.ndarray, hi: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per interval [start, end) of unit indices: its units inside the sorted, disjoint [lo, hi)."""
    if not len(lo):
        return np.zeros(len(start), np.int64)
    # units before x inside the intervals: whole intervals ending by x, plus the part of the one x is in
    whole = np.concatenate([[0], np.cumsum(hi - lo)])

    def before(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(hi, x, side="right")
        part = np.where(i < len(lo), np.clip(x - lo[np.minimum(i, len(lo) - 1)], 0, None), 0)
        return whole[i] + part

    return before(np.asarray(end, np.int64)) - before(np.asarray(start, np.int64))


def _shared_seeds(
    text_a: str, text_b: str, boilerplate: np.ndarray, k: int, w: int, robust: bool, mod_p: int, unit: str, lexer: str
) -> tuple[np.ndarray, np.ndarray]:
    """(positions in a, positions in b) of fingerprints the texts share, boilerplate hashes out:
    every occurrence in a, at most SEEDS_PER_HASH pairs per hash."""
    ha, pa_ = fingerprint(text_a, k=k, w=w, robust=robust, mod_p=mod_p, unit=unit, lexer=lexer)
    hb, pb = fingerprint(text_b, k=k, w=w, robust=robust, mod_p=mod_p, unit=unit, lexer=lexer)
    shared = np.intersect1d(ha, hb)
    shared = shared[~is_boilerplate(shared, boilerplate)]
    if not len(shared):
        empty = np.zeros(0, np.int64)
        return empty, empty
    oa = np.argsort(ha, kind="stable")
    ob = np.argsort(hb, kind="stable")
    ha_sorted, hb_sorted = ha[oa], hb[ob]
    a_lo, a_hi = np.searchsorted(ha_sorted, shared, "left"), np.searchsorted(ha_sorted, shared, "right")
    b_lo, b_hi = np.searchsorted(hb_sorted, shared, "left"), np.searchsorted(hb_sorted, shared, "right")
    out_a: list[np.ndarray] = []
    out_b: list[np.ndarray] = []
    for i in range(len(shared)):
        occ_a = pa_[oa[a_lo[i] : a_hi[i]]]
        occ_b = pb[ob[b_lo[i] : b_hi[i]]][: max(1, SEEDS_PER_HASH // len(occ_a))]
        out_a.append(np.repeat(occ_a, len(occ_b)))
        out_b.append(np.tile(occ_b, len(occ_a)))
    return np.concatenate(out_a), np.concatenate(out_b)


def repeats_unseeded(text: str, w, max_repeats: int) -> bool:
    """Whether a fingerprint hash of text occurs more than max_repeats times in it (w: the
    WinnowConfig), so that its later occurrences seeded no passage (pairing.max_repeats); where
    none does, every occurrence was a seed and repeat_spans has nothing to add."""
    if max_repeats <= 0:
        return False
    hashes, _ = fingerprint(text, k=w.k, w=w.w, robust=w.robust, mod_p=w.mod_p, unit=w.unit, lexer=w.lexer)
    return bool(len(hashes)) and int(distinct_counts(hashes)[1].max()) > max_repeats


def repeat_spans(
    text: str, spans: Sequence[tuple[int, int]], min_units: int, unit: str = "char", lexer: str = DEFAULT_LEXER
) -> list[tuple[int, int]]:
    """Character spans of text holding the same units (normalized text) as one of `spans`, at least
    min_units long, other than the spans themselves."""
    if not spans:
        return []
    codes, starts, ends = units(text, unit, lexer)
    if not len(codes):
        return []
    haystack = codes.astype("<i8").tobytes()
    given = set(spans)
    found: set[tuple[int, int]] = set()
    patterns: set[bytes] = set()
    for start, end in spans:
        first = int(np.searchsorted(starts, start, side="left"))
        last = int(np.searchsorted(ends, end, side="right"))
        if last - first < max(min_units, 1):
            continue
        needle = haystack[first * 8 : last * 8]
        if needle in patterns:
            continue
        patterns.add(needle)
        at = haystack.find(needle)
        while at >= 0:
            if at % 8 == 0:  # a whole unit: int64 codes compared as bytes
                q = at // 8
                span = (int(starts[q]), int(ends[q + last - first - 1]))
                if span not in given:
                    found.add(span)
            at = haystack.find(needle, at + 1)
    return sorted(found)


def needed_sources(cuts: Sequence[tuple[int, int, tuple, int]]) -> list[int]:
    """Of the passages one copy loses, the indices of those whose source must keep them: cuts are
    (start, end, order, source) in the copy, order the source's place in the crawl's one order. A
    cut is needed unless sources earlier in that order cover its characters of the copy already
    (the same sentence lost to five earlier pages stays in the earliest, not in all five)."""
    needed: list[int] = []
    covered: list[tuple[int, int]] = []  # merged copy spans of the earlier sources
    by_order = sorted(range(len(cuts)), key=lambda i: (cuts[i][2], cuts[i][3], cuts[i][0], cuts[i][1]))
    i = 0
    while i < len(by_order):
        j = i
        while j < len(by_order) and cuts[by_order[j]][2:4] == cuts[by_order[i]][2:4]:
            j += 1
        group = by_order[i:j]
        needed += [g for g in group if not _within(covered, cuts[g][0], cuts[g][1])]
        covered = _merged(covered + [(cuts[g][0], cuts[g][1]) for g in group])
        i = j
    return sorted(needed)


def outside(starts: np.ndarray, ends: np.ndarray, start: int, end: int, lo: np.ndarray, hi: np.ndarray) -> list[tuple[int, int]]:
    """The units of the character span [start, end) outside the unit intervals [lo, hi) (sorted,
    disjoint), as unit ranges counted from the span's first unit: what of a passage a source
    keeps for its copy, in terms both texts share (the two sides of a passage hold the same units)."""
    first = int(np.searchsorted(starts, start, side="left"))
    last = int(np.searchsorted(ends, end, side="right"))
    parts: list[tuple[int, int]] = []
    at = first
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        if b <= at:
            continue
        if a >= last:
            break
        if a > at:
            parts.append((at - first, a - first))
        at = max(at, b)
    if at < last:
        parts.append((at - first, last - first))
    return parts


def unit_span(starts: np.ndarray, ends: np.ndarray, start: int, lo: int, hi: int) -> tuple[int, int]:
    """Character span of units lo..hi counted from the unit starting at character `start`."""
    first = int(np.searchsorted(starts, start, side="left"))
    return int(starts[first + lo]), int(ends[first + hi - 1])


def _within(merged: list[tuple[int, int]], start: int, end: int) -> bool:
    for s, e in merged:
        if s <= start and end <= e:
            return True
    return False


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
