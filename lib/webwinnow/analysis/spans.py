"""Exact copied passages of a document pair, grown from their shared fingerprints.

Fingerprints only say that some k-gram is shared, and where it starts (the paper: "coarse
boundaries"). Here every shared fingerprint is a seed: its k-grams are compared in the two
normalized texts (a hash collision is discarded), then the match is grown left and right while
the normalized characters agree, giving the maximal matching span; seeds already inside a span
on the same diagonal are skipped, so a long copy is one span, not a pile of fragments. Spans are
mapped back to character offsets of the original texts through normalization's offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..core import kernel
from ..core.charfold import fold_table
from ..core.jit import JIT_OPTIONS


@njit(**JIT_OPTIONS)
def _grow_spans(codes_a, codes_b, seeds_a, seeds_b, k, max_spans, max_chars):
    """Maximal matching spans (start_a, start_b, length) from seeds, in normalized indices.

    seeds_a/seeds_b are candidate k-gram starts (normalized indices), sorted by diagonal
    (seeds_b - seeds_a), then by seeds_a. Returns (spans, capped): capped when max_spans spans
    were found or max_chars character comparisons made before all seeds were used.
    """
    na = codes_a.shape[0]
    nb = codes_b.shape[0]
    out = np.empty((min(max_spans, seeds_a.shape[0]), 3), dtype=np.int64)
    count = 0
    work = 0
    capped = False
    have_prev = False
    prev_diag = 0
    prev_end = 0
    for s in range(seeds_a.shape[0]):
        i = seeds_a[s]
        j = seeds_b[s]
        diag = j - i
        if have_prev and diag == prev_diag and i < prev_end:
            continue  # inside the span just grown on this diagonal
        if i < 0 or j < 0 or i + k > na or j + k > nb:
            continue
        same = True
        for q in range(k):
            if codes_a[i + q] != codes_b[j + q]:
                same = False
                break
        work += k
        if not same:
            continue  # a hash collision, or a seed that points into an expansion
        if count == max_spans or work > max_chars:
            capped = True
            break
        start = i
        while start > 0 and start + diag > 0 and codes_a[start - 1] == codes_b[start - 1 + diag]:
            start -= 1
        end = i + k
        while end < na and end + diag < nb and codes_a[end] == codes_b[end + diag]:
            end += 1
        work += (i - start) + (end - i - k)
        out[count, 0] = start
        out[count, 1] = start + diag
        out[count, 2] = end - start
        count += 1
        have_prev = True
        prev_diag = diag
        prev_end = end
    return out[:count], capped


@dataclass(frozen=True)
class Passages:
    """Spans as arrays: start/end offsets in text a and b (end exclusive), normalized length."""

    start_a: np.ndarray
    end_a: np.ndarray
    start_b: np.ndarray
    end_b: np.ndarray
    length: np.ndarray
    capped: bool

    def __len__(self) -> int:
        return len(self.length)


def _normalized(text: str) -> tuple[np.ndarray, np.ndarray]:
    fold, expand = fold_table()
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return kernel._normalize(data, fold, expand)


def _seed_indices(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Normalized index of the k-gram starting at each original offset (its first kept character)."""
    return np.searchsorted(offsets, positions, side="left").astype(np.int64)


def copied_passages(
    text_a: str,
    text_b: str,
    pos_a: np.ndarray,
    pos_b: np.ndarray,
    k: int,
    *,
    max_spans: int = 1000,
    max_chars: int = 20_000_000,
) -> Passages:
    """Maximal copied spans between two texts, grown from fingerprint matches (pos_a[i], pos_b[i]).

    pos_a/pos_b are character offsets of matching fingerprints (the `pos` column of both
    documents' fingerprints with the same hash). Spans are at least k normalized characters
    long, sorted by start in text a; at most max_spans spans and max_chars compared characters
    per pair (``capped`` says a limit was hit).
    """
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise TypeError("text_a and text_b must be str")
    if k < 1 or max_spans < 1 or max_chars < 1:
        raise ValueError("k, max_spans and max_chars must be >= 1")
    pos_a = np.asarray(pos_a, dtype=np.int64)
    pos_b = np.asarray(pos_b, dtype=np.int64)
    if pos_a.shape != pos_b.shape:
        raise ValueError("pos_a and pos_b must have the same length")
    codes_a, off_a = _normalized(text_a)
    codes_b, off_b = _normalized(text_b)
    ia = _seed_indices(off_a, pos_a)
    ib = _seed_indices(off_b, pos_b)
    order = np.lexsort((ia, ib - ia))
    spans, capped = _grow_spans(codes_a, codes_b, ia[order], ib[order], int(k), int(max_spans), int(max_chars))
    spans = spans[np.lexsort((spans[:, 1], spans[:, 0]))] if len(spans) else spans
    sa, sb, length = spans[:, 0], spans[:, 1], spans[:, 2]
    return Passages(
        start_a=off_a[sa] if len(sa) else np.empty(0, np.int64),
        end_a=off_a[sa + length - 1] + 1 if len(sa) else np.empty(0, np.int64),
        start_b=off_b[sb] if len(sb) else np.empty(0, np.int64),
        end_b=off_b[sb + length - 1] + 1 if len(sb) else np.empty(0, np.int64),
        length=length.copy(),
        capped=bool(capped),
    )
