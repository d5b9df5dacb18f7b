"""Exact copied passages of a document pair, grown from their shared fingerprints.

Fingerprints only say that some k-gram is shared, and where it starts (the paper: "coarse
boundaries"). Here every shared fingerprint is a seed: its k-grams are compared in the two
normalized texts (a hash collision is discarded), then the match is grown left and right while
the normalized units (characters, words or code tokens: webwinnow.core.units) agree, giving the
maximal matching span; seeds already inside a span on the same diagonal are skipped, so a long
copy is one span, not a pile of fragments. Spans are mapped back to character offsets of the
original texts through the units' ranges: from the first unit's first character to the last
unit's last.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import kernel
from ..core.charfold import fold_table
from ..core.codetokens import DEFAULT_LEXER
from ..core.jit import JIT_OPTIONS, njit
from ..core.units import WORD, _words_into


@njit(**JIT_OPTIONS)
def _grow_spans(codes_a, codes_b, seeds_a, seeds_b, k, max_spans, max_chars, open_a, open_b):
    """Maximal matching spans (start_a, start_b, length) from seeds, in normalized indices.

    seeds_a/seeds_b are candidate k-gram starts (normalized indices), sorted by diagonal
    (seeds_b - seeds_a), then by seeds_a. Returns (spans, capped, truncated): capped when
    max_spans spans were found or max_chars character comparisons made before all seeds were
    used; truncated when the codes are a window of a longer text (open_a/open_b: 1 = more text
    before, 2 = after, 3 = both) and a span or a seed reached an open edge, so the spans of the
    whole texts may differ.
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
    truncated = False
    for s in range(seeds_a.shape[0]):
        i = seeds_a[s]
        j = seeds_b[s]
        diag = j - i
        if have_prev and diag == prev_diag and i < prev_end:
            continue  # inside the span just grown on this diagonal
        if i < 0 or j < 0 or i + k > na or j + k > nb:
            if (i + k > na and open_a & 2) or (j + k > nb and open_b & 2) or (i < 0 and open_a & 1) or (j < 0 and open_b & 1):
                truncated = True
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
        if (start == 0 and open_a & 1) or (start + diag == 0 and open_b & 1):
            truncated = True
        end = i + k
        while end < na and end + diag < nb and codes_a[end] == codes_b[end + diag]:
            end += 1
        if (end == na and open_a & 2) or (end + diag == nb and open_b & 2):
            truncated = True
        work += (i - start) + (end - i - k)
        out[count, 0] = start
        out[count, 1] = start + diag
        out[count, 2] = end - start
        count += 1
        have_prev = True
        prev_diag = diag
        prev_end = end
    return out[:count], capped, truncated


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
    """Normalized code points of a text and their offsets (the char unit's codes and starts)."""
    fold, expand = fold_table()
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return kernel._normalize(data, fold, expand)


def _seed_indices(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Unit index of the k-gram starting at each original offset (its first unit's start)."""
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
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
) -> Passages:
    """Maximal copied spans between two texts, grown from fingerprint matches (pos_a[i], pos_b[i]).

    pos_a/pos_b are character offsets of matching fingerprints (the `pos` column of both
    documents' fingerprints with the same hash). Spans are at least k units long (length
    counts units), sorted by start in text a; at most max_spans spans and max_chars compared
    units per pair (``capped`` says a limit was hit).
    """
    found = window_passages(
        text_a, text_b, 0, 0, 0, 0, pos_a, pos_b, k, max_spans=max_spans, max_chars=max_chars, unit=unit, lexer=lexer
    )
    assert found is not None  # whole texts have no open edge
    return found


def window_passages(
    text_a: str,
    text_b: str,
    start_a: int,
    start_b: int,
    open_a: int,
    open_b: int,
    pos_a: np.ndarray,
    pos_b: np.ndarray,
    k: int,
    *,
    max_spans: int = 1000,
    max_chars: int = 20_000_000,
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
) -> Passages | None:
    """copied_passages on windows of two texts: text_a is the original text from character
    start_a on (start_b for b), open_a says whether the text goes on before (1), after (2) or on
    both sides (3) of the window. Offsets in and out are of the whole texts. None when a span
    or seed reaches an open edge: then only the whole texts give the right spans."""
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise TypeError("text_a and text_b must be str")
    if k < 1 or max_spans < 1 or max_chars < 1:
        raise ValueError("k, max_spans and max_chars must be >= 1")
    if not (0 <= open_a <= 3 and 0 <= open_b <= 3 and start_a >= 0 and start_b >= 0):
        raise ValueError("open_a/open_b must be 0..3 and start_a/start_b >= 0")
    pos_a = np.asarray(pos_a, dtype=np.int64)
    pos_b = np.asarray(pos_b, dtype=np.int64)
    if pos_a.shape != pos_b.shape:
        raise ValueError("pos_a and pos_b must have the same length")
    from ..core.winnowing import units

    codes_a, off_a, end_a = units(text_a, unit, lexer)
    codes_b, off_b, end_b = units(text_b, unit, lexer)
    off_a, end_a = off_a + start_a, end_a + start_a
    off_b, end_b = off_b + start_b, end_b + start_b
    ia = _seed_indices(off_a, pos_a)
    ib = _seed_indices(off_b, pos_b)
    order = np.lexsort((ia, ib - ia))
    spans, capped, truncated = _grow_spans(
        codes_a, codes_b, ia[order], ib[order], int(k), int(max_spans), int(max_chars), int(open_a), int(open_b)
    )
    if truncated:
        return None
    spans = spans[np.lexsort((spans[:, 1], spans[:, 0]))] if len(spans) else spans
    sa, sb, length = spans[:, 0], spans[:, 1], spans[:, 2]
    return Passages(
        start_a=off_a[sa] if len(sa) else np.empty(0, np.int64),
        end_a=end_a[sa + length - 1] if len(sa) else np.empty(0, np.int64),
        start_b=off_b[sb] if len(sb) else np.empty(0, np.int64),
        end_b=end_b[sb + length - 1] if len(sb) else np.empty(0, np.int64),
        length=length.copy(),
        capped=bool(capped),
    )


def text_windows(
    offsets: np.ndarray, lo_pos: np.ndarray, hi_pos: np.ndarray, k: int, margin: int, ends: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per request, the characters [start, end) of a text to send for seeds at character offsets
    lo_pos..hi_pos: every unit from `margin` before the first seed to `margin` after the last
    seed's k-gram, whole units. `offsets` are the starts of the text's units, `ends` their ends
    (None: characters, each one character long). Also whether the text has units before (1) or
    after (2) the window."""
    n = len(offsets)
    if n == 0:
        zeros = np.zeros(len(lo_pos), np.int64)
        return zeros, zeros, zeros
    lo = np.maximum(np.searchsorted(offsets, lo_pos, side="left") - margin, 0)
    hi = np.clip(np.searchsorted(offsets, hi_pos, side="left") + k + margin, lo + 1, n)
    start = offsets[np.minimum(lo, n - 1)].astype(np.int64)
    end = ends[hi - 1].astype(np.int64) if ends is not None else offsets[hi - 1].astype(np.int64) + 1
    before = np.searchsorted(offsets, start, side="left") > 0
    after = np.searchsorted(offsets, end, side="left") < n
    return start, end, before.astype(np.int64) | (after.astype(np.int64) << 1)


def gather_ranges(data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte ranges data[lo[i]:hi[i]] one after another, and the offsets of each in the result
    (len(lo) + 1 of them): the windows' texts of a batch in one buffer."""
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    if len(lo) != len(hi) or (len(lo) and ((hi < lo).any() or lo.min() < 0 or hi.max() > len(data))):
        raise ValueError("ranges must lie within the data, each lo <= hi")
    offsets = np.zeros(len(lo) + 1, np.int64)
    np.cumsum(hi - lo, out=offsets[1:])
    return _gather_into(data, lo, hi, offsets, np.empty(offsets[-1], data.dtype)), offsets


@njit(**JIT_OPTIONS)
def _gather_into(data, lo, hi, offsets, out):
    # one memcpy per range: building a fancy index of every byte (np.repeat + np.arange) cost
    # most of the window pass's CPU on the docs corpus
    for i in range(lo.shape[0]):
        out[offsets[i] : offsets[i + 1]] = data[lo[i] : hi[i]]
    return out


@njit(**JIT_OPTIONS)
def _normalize_window(data, start, end, fold, expand, codes, offsets):
    """kernel._normalize_into with scratch arrays grown until they fit; returns (codes, offsets, n)."""
    n = kernel._normalize_into(data, start, end, fold, expand, codes, offsets)
    while n < 0:
        codes = np.empty(codes.shape[0] * 2, dtype=codes.dtype)
        offsets = np.empty(offsets.shape[0] * 2, dtype=offsets.dtype)
        n = kernel._normalize_into(data, start, end, fold, expand, codes, offsets)
    return codes, offsets, n


@njit(**JIT_OPTIONS)
def _covered(lo, hi, first, last, start, end):
    """Characters of [start, end) inside the sorted, disjoint intervals lo/hi[first:last]."""
    total = 0
    for i in range(first + np.searchsorted(hi[first:last], start, side="right"), last):
        if lo[i] >= end:
            break
        total += min(hi[i], end) - max(lo[i], start)
    return total


@njit(**JIT_OPTIONS)
def _longest_free(lo, hi, first, last, start, end):
    """The longest run of consecutive units of [start, end) outside the sorted, disjoint intervals
    lo/hi[first:last]: a span's longest stretch of content (its template's ragged edges, up to
    w - 1 units, are never w long)."""
    best = 0
    at = start
    for i in range(first + np.searchsorted(hi[first:last], start, side="right"), last):
        if lo[i] >= end:
            break
        if lo[i] > at:
            best = max(best, lo[i] - at)
        at = max(at, hi[i])
    return max(best, end - at)


@njit(**JIT_OPTIONS)
def _union_content(starts, lengths, lo, hi, first, last):
    """(characters in the union of the spans [starts, starts + lengths), those of them outside the
    sorted, disjoint intervals lo/hi[first:last]): what a pair copied of one text, counted once
    where spans overlap (a passage copied twice into the other text)."""
    order = np.argsort(starts, kind="mergesort")
    s = e = 0
    copied = 0
    content = 0
    run_start = -1
    run_end = -1
    for q in range(order.shape[0] + 1):
        if q < order.shape[0]:
            s = starts[order[q]]
            e = s + lengths[order[q]]
            if run_start >= 0 and s <= run_end:
                run_end = max(run_end, e)
                continue
        if run_start >= 0:
            copied += run_end - run_start
            content += run_end - run_start - _covered(lo, hi, first, last, run_start, run_end)
        if q < order.shape[0]:
            run_start = s
            run_end = e
    return copied, content


@njit(**JIT_OPTIONS)
def _window_units(unit, data, start, end, fold, expand, chars, offs, codes, starts, ends):
    """The units of one UTF-8 window (CHAR or WORD) in scratch arrays grown as needed:
    (chars, offs, codes, starts, ends, n) with units codes/starts[:n], and for WORD ends[:n].
    A character is its own unit, ending one past its start: CHAR normalizes straight into
    codes/starts and leaves chars, offs and ends as they were (copying every character of every
    b window into three more arrays cost a tenth of the passages kernel)."""
    if unit != WORD:
        codes, starts, n = _normalize_window(data, start, end, fold, expand, codes, starts)
        return chars, offs, codes, starts, ends, n
    chars, offs, n = _normalize_window(data, start, end, fold, expand, chars, offs)
    if codes.shape[0] < n:
        size = max(n, 2 * codes.shape[0])
        codes = np.empty(size, dtype=np.int64)
        starts = np.empty(size, dtype=np.int64)
        ends = np.empty(size, dtype=np.int64)
    n = _words_into(chars, offs, n, codes, starts, ends)
    return chars, offs, codes, starts, ends, n
