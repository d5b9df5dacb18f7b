"""Cutting spans out of a text by their character offsets: what dedup keeps of a page.

Offsets are the passages table's (character offsets into documents.text, end exclusive), so a
removal is exact: no search for the copied string (`str.replace` removes the wrong occurrence
when a passage repeats, and misses it when the copy differs by case, punctuation or Unicode
normalization, which the normalized match ignores).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def merge_spans(spans: Iterable[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The union of [start, end) spans clipped to [0, length): sorted, disjoint, non-adjacent."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted((max(0, int(s)), min(length, int(e))) for s, e in spans):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def subtract_spans(spans: list[tuple[int, int]], minus: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merged spans less the merged spans `minus`."""
    out: list[tuple[int, int]] = []
    j = 0
    for start, end in spans:
        while j < len(minus) and minus[j][1] <= start:
            j += 1
        k = j
        while start < end:
            if k >= len(minus) or minus[k][0] >= end:
                out.append((start, end))
                break
            if minus[k][0] > start:
                out.append((start, minus[k][0]))
            start = max(start, minus[k][1])
            k += 1
    return out


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """The text without the merged spans."""
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def span_chars(spans: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in spans)


def original_spans(offsets: np.ndarray, lo: np.ndarray, hi: np.ndarray, ends: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Unit-index intervals [lo, hi) as character spans of the original text: from the first
    unit's start to the last one's end (offsets: the units' starts; ends: their ends, None for
    characters, which end one after their start)."""
    if not len(lo):
        return []
    last = ends[hi - 1] if ends is not None else offsets[hi - 1].astype(np.int64) + 1
    return list(zip(offsets[lo].astype(np.int64).tolist(), np.asarray(last, np.int64).tolist(), strict=True))
