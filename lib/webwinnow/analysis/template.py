"""Template text: which normalized characters of a document are site template, and how much of a
copied span is content.

Definition. A hash is boilerplate when more than max_df documents have it as a fingerprint (the
candidates stage's cap). A document's **template text** is, in normalized characters, the union of

- the k-gram [p, p + k) of every fingerprint of the document whose hash is boilerplate,
- the stretch [p, q) between two consecutive such fingerprints p < q with q − p ≤ g, and
- the text's first p characters when the first such fingerprint is at p ≤ g, and its last
  characters from q on when the last one is at q ≥ n − k − g (n normalized characters),

where g = max(w, k) — the **blocks** — and, in the whole text, every k-gram (selected or not)
whose hash is a **template k-gram**: a k-gram that more than max_df documents hold within w
positions of one of their blocks (before its first k-gram or after its last).

Why the gaps: winnowing selects a fingerprint in every window of w consecutive k-grams, so inside
a stretch of template text shared by many pages the selected k-grams are boilerplate and lie at
most w apart, but their k-grams cover only part of it (on average k of every (w + 1)/2
positions). Filling the gaps makes a page's navigation bar template from end to end, while a
stretch of content longer than g − k characters between two template blocks stays content.

Why template k-grams: a block's first boilerplate fingerprint may lie up to w − 1 characters
into the template (its ragged edge), and a line of template shorter than t = w + k − 1 (a
licence line, "Navigation index next previous") has no window of its own, so which of its
k-grams is selected depends on the page around it: each is selected in a few pages, below the
cap, although every page holds it. Counting the k-grams next to the blocks — a bounded set, at
most 2w per block — marks those edges and lines by their own frequency, and where a page never
selected them (its neighbours' hashes were smaller) they are found by their hash all the same.

A copied span's **content** on one side is its characters outside that side's template text. A
pair is a content pair when one of its passages holds a run of at least t = w + k − 1
consecutive content characters on both sides (passages.min_content), not merely k or w of them:
template pieces that template k-grams do not reach (a page-family title between two template
lines) are shorter than t. The guarantee is kept: a shared passage of at least t characters with
no template character holds a fingerprint whose hash is below the cap (a boilerplate one would
make its characters template), so it seeds the pair and grows into a span holding a run of at
least t content characters.
"""

from __future__ import annotations

import numpy as np

from ..core import kernel
from ..core.codetokens import DEFAULT_LEXER
from ..core.jit import JIT_OPTIONS, njit
from ..core.units import _words
from ..core.winnowing import fingerprint, units
from .boilerplate import is_boilerplate
from .windows import _in_set


def template_intervals(
    norm_positions: np.ndarray,
    boilerplate: np.ndarray,
    k: int,
    w: int,
    norm_chars: int,
    kgram_starts: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A document's template text as sorted, disjoint half-open intervals [lo, hi) of normalized
    indices, from its fingerprints' normalized positions (sorted) and whether each is boilerplate,
    and the normalized starts of its template k-grams (any order), if known."""
    lo, hi = block_intervals(norm_positions, boilerplate, k, w, norm_chars)
    if kgram_starts is None or not len(kgram_starts):
        return lo, hi
    starts = np.asarray(kgram_starts, np.int64)
    return merge_intervals(np.concatenate([lo, starts]), np.concatenate([hi, np.minimum(starts + k, norm_chars)]))


def merge_intervals(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of half-open intervals [lo, hi) as sorted, disjoint ones (touching ones merged)."""
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    breaks = np.flatnonzero(lo[1:] > hi[:-1]) + 1
    return lo[np.concatenate([[0], breaks])], hi[np.concatenate([breaks - 1, [len(lo) - 1]])]


def edge_kgrams(lo: np.ndarray, hi: np.ndarray, kgram_starts: np.ndarray, k: int, w: int) -> np.ndarray:
    """Which k-grams (by sorted normalized start) lie next to a block [lo, hi) of template text:
    at most w positions before its start, or after its last k-gram's start (hi − k). Where a
    block's ragged edge is, if it has one: winnowing selects a k-gram in every w."""
    starts = np.asarray(kgram_starts, np.int64)
    near = np.zeros(len(starts) + 1, np.int64)
    for a, b in ((lo - w, lo), (hi - k + 1, hi - k + w + 1)):
        np.add.at(near, np.searchsorted(starts, a), 1)
        np.add.at(near, np.searchsorted(starts, b), -1)
    return np.cumsum(near)[:-1] > 0


def page_edge_hashes(
    kgram_hashes: np.ndarray,
    kgram_starts: np.ndarray,
    kgram_bounds: np.ndarray,
    fp_starts: np.ndarray,
    fp_flags: np.ndarray,
    fp_lo: np.ndarray,
    fp_hi: np.ndarray,
    norm_chars: np.ndarray,
    k: int,
    w: int,
) -> np.ndarray:
    """Per page, the distinct hashes of its k-grams next to a block of its template text
    (edge_kgrams of block_intervals), sorted, page after page: what counting template k-grams
    needs of a batch of pages, in one kernel call instead of a dozen NumPy calls a page.

    Page i's k-grams are rows kgram_bounds[i]:kgram_bounds[i + 1] of kgram_hashes and
    kgram_starts (where each starts in the text, ascending; k-gram j starts at normalized unit
    j); its fingerprints are rows fp_lo[i]:fp_hi[i] of fp_starts (ascending, each a start of one
    of its k-grams) and fp_flags (boilerplate or not); norm_chars[i] its normalized units."""
    if k < 1 or w < 1:
        raise ValueError("k and w must be >= 1")
    pages = len(norm_chars)
    if not (len(kgram_bounds) == pages + 1 and len(fp_lo) == len(fp_hi) == pages):
        raise ValueError("kgram_bounds must have a row per page and one more; fp_lo and fp_hi a row per page")
    if kgram_hashes.shape != kgram_starts.shape or fp_starts.shape != fp_flags.shape:
        raise ValueError("hashes and starts, and fingerprint starts and flags, must have the same length")
    if pages and (
        kgram_bounds[0] != 0
        or kgram_bounds[-1] != len(kgram_hashes)
        or np.any(np.diff(kgram_bounds) < 0)
        or np.any(fp_lo > fp_hi)
        or (len(fp_hi) and (int(fp_lo.min()) < 0 or int(fp_hi.max()) > len(fp_starts)))
    ):
        raise ValueError("the page bounds must lie within the arrays, in order")
    return _page_edge_hashes(
        np.ascontiguousarray(kgram_hashes, np.int64),
        np.ascontiguousarray(kgram_starts, np.int64),
        np.ascontiguousarray(kgram_bounds, np.int64),
        np.ascontiguousarray(fp_starts, np.int64),
        np.ascontiguousarray(fp_flags, np.bool_),
        np.ascontiguousarray(fp_lo, np.int64),
        np.ascontiguousarray(fp_hi, np.int64),
        np.ascontiguousarray(norm_chars, np.int64),
        k,
        w,
    )


@njit(**JIT_OPTIONS)
def _page_edge_hashes(kh, ks, kb, fs, ff, flo, fhi, norm_chars, k, w):
    out = np.empty(len(kh), np.int64)
    used = 0
    for page in range(len(norm_chars)):
        base, n = kb[page], kb[page + 1] - kb[page]
        starts = ks[base : base + n]
        ats = np.empty(fhi[page] - flo[page], np.int64)
        m = 0
        for f in range(flo[page], fhi[page]):
            if ff[f]:
                ats[m] = np.searchsorted(starts, fs[f])  # the fingerprint's k-gram: its normalized start
                m += 1
        used = _edge_hashes_into(kh[base : base + n], ats[:m], norm_chars[page], k, w, out, used)
    return out[:used]


@njit(**JIT_OPTIONS)
def _edge_hashes_into(hashes, ats, norm, k, w, out, used):
    """One page's distinct edge hashes, sorted, into out[used:]; returns the new `used`. hashes:
    the page's k-grams' (k-gram j starts at normalized unit j); ats: its boilerplate
    fingerprints' k-grams, ascending; norm: its normalized units."""
    n = hashes.shape[0]
    gap = max(w, k)
    near = np.zeros(n + 1, np.int64)  # +1 at an interval's start, -1 past its end (edge_kgrams)
    first, last, previous = -1, -1, -1
    any_block = False
    for f in range(ats.shape[0] + 1):
        at = ats[f] if f < ats.shape[0] else -1
        if previous >= 0 and (at < 0 or at - previous > gap):  # the block [first, last] ends
            lo = 0 if not any_block and first <= gap else first
            hi = min(last + k, norm)
            if at < 0 and last >= norm - k - gap:
                hi = norm
            any_block = True
            for a, b in ((lo - w, lo), (hi - k + 1, hi - k + w + 1)):
                near[min(max(a, 0), n)] += 1
                near[min(max(b, 0), n)] -= 1
            first = at
        if at < 0:
            break
        if previous < 0:
            first = at
        previous = last = at
    if not any_block:
        return used
    found = np.empty(n, np.int64)
    m, depth = 0, 0
    for j in range(n):
        depth += near[j]
        if depth > 0:
            found[m] = hashes[j]
            m += 1
    found = np.sort(found[:m])
    for j in range(m):
        if j == 0 or found[j] != found[j - 1]:
            out[used] = found[j]
            used += 1
    return used


def batch_edge_hashes(
    data: np.ndarray,
    text_starts: np.ndarray,
    text_ends: np.ndarray,
    words: bool,
    k: int,
    w: int,
    robust: bool,
    mod_p: int,
    boilerplate: np.ndarray,
    boilerplate_table: np.ndarray,
) -> np.ndarray:
    """page_edge_hashes for pages given as UTF-8, page d data[text_starts[d]:text_ends[d]]: each
    is normalized (and cut into words), hashed and winnowed (or selected mod p) here, as
    fingerprint_batch does, and its fingerprints looked up in the sorted boilerplate hashes
    (boilerplate_table: their HashSet table). Characters and words only: code is lexed in Python.

    One pass a page: fingerprinting the pages, then hashing every k-gram of those with template
    text again with w = 1 (16 bytes of output a character) and finding the fingerprints among
    them cost five times as much on the docs corpus."""
    from ..core.charfold import fold_table

    n = len(text_starts)
    if len(text_ends) != n:
        raise ValueError("a start and an end per page")
    if n and (
        (np.asarray(text_ends) < np.asarray(text_starts)).any()
        or int(np.max(text_ends)) > len(data)
        or int(np.min(text_starts)) < 0
    ):
        raise ValueError("pages must lie within the data")
    if k < 1 or w < 1:
        raise ValueError("k and w must be >= 1")
    if not len(boilerplate_table) or len(boilerplate_table) & (len(boilerplate_table) - 1):
        raise ValueError("a set's table must have a power-of-two length")
    fold, expand = fold_table()
    return _batch_edge_hashes(
        np.ascontiguousarray(data, np.uint8),
        np.ascontiguousarray(text_starts, np.int64),
        np.ascontiguousarray(text_ends, np.int64),
        fold,
        expand,
        bool(words),
        k,
        w,
        bool(robust),
        mod_p,
        np.ascontiguousarray(boilerplate, np.int64),
        np.ascontiguousarray(boilerplate_table, np.bool_),
    )


@njit(**JIT_OPTIONS)
def _batch_edge_hashes(data, text_starts, text_ends, fold, expand, words, k, w, robust, mod_p, bp, bp_seen):
    out = np.empty(1024, np.int64)
    used = 0
    for d in range(text_starts.shape[0]):
        chars, offsets = kernel._normalize(data[text_starts[d] : text_ends[d]], fold, expand)
        if words:
            codes, _starts, _ends = _words(chars, offsets)
            hashes = kernel._kgram_hashes(codes, k)
            norm = codes.shape[0]
        else:
            hashes = kernel._kgram_hashes(chars, k)
            norm = chars.shape[0]
        selected = kernel._mod_p(hashes, mod_p) if mod_p else kernel._winnow(hashes, w, robust)
        ats = np.empty(selected.shape[0], np.int64)
        m = 0
        for s in selected:
            if _in_set(hashes[s], bp, bp_seen):
                ats[m] = s
                m += 1
        if m:
            if used + hashes.shape[0] > out.shape[0]:
                grown = np.empty(max(used + hashes.shape[0], 2 * out.shape[0]), np.int64)
                grown[:used] = out[:used]
                out = grown
            used = _edge_hashes_into(hashes, ats[:m], norm, k, w, out, used)
    return out[:used]


def block_intervals(
    norm_positions: np.ndarray, boilerplate: np.ndarray, k: int, w: int, norm_chars: int
) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of template text: from the boilerplate fingerprints and the gaps between them."""
    if k < 1 or w < 1:
        raise ValueError("k and w must be >= 1")
    norm_positions = np.asarray(norm_positions, np.int64)
    flags = np.asarray(boilerplate, bool)
    if norm_positions.shape != flags.shape:
        raise ValueError("norm_positions and boilerplate must have the same length")
    starts = norm_positions[flags]
    if not len(starts):
        empty = np.zeros(0, np.int64)
        return empty, empty.copy()
    if np.any(np.diff(starts) < 0):
        raise ValueError("norm_positions must be sorted")
    gap = max(w, k)
    breaks = np.flatnonzero(np.diff(starts) > gap) + 1
    lo = starts[np.concatenate([[0], breaks])]
    hi = np.minimum(starts[np.concatenate([breaks - 1, [len(starts) - 1]])] + k, norm_chars)
    if lo[0] <= gap:
        lo[0] = 0
    if starts[-1] >= norm_chars - k - gap:
        hi[-1] = norm_chars
    return lo, hi


def window_intervals(
    lo: np.ndarray, hi: np.ndarray, win_lo: np.ndarray, win_hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The intervals [lo, hi) (sorted, disjoint) clipped to each window [win_lo[r], win_hi[r]) and
    shifted to start at the window: (counts per window, lo, hi), the windows' intervals one after
    the other."""
    first = np.searchsorted(hi, win_lo, side="right")
    last = np.searchsorted(lo, win_hi, side="left")
    counts = np.maximum(last - first, 0)
    index = np.repeat(first - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
    base_lo, base_hi = np.repeat(win_lo, counts), np.repeat(win_hi, counts)
    return counts, np.maximum(lo[index], base_lo) - base_lo, np.minimum(hi[index], base_hi) - base_lo


def text_template(
    text: str,
    k: int,
    w: int,
    robust: bool,
    mod_p: int,
    boilerplate: np.ndarray,
    template_kgrams: np.ndarray | None = None,
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One page's units (their character starts and ends) and its template text as intervals of
    their indices: its blocks, from the boilerplate hashes (sorted), and every occurrence of a
    template k-gram (their hashes, sorted), when given."""
    hashes, positions = fingerprint(text, k=k, w=w, robust=robust, mod_p=mod_p, unit=unit, lexer=lexer)
    _, offsets, ends = units(text, unit, lexer)
    starts = None
    if template_kgrams is not None and len(template_kgrams):
        every, _ = fingerprint(text, k=k, w=1, robust=False, mod_p=mod_p, unit=unit, lexer=lexer)
        starts = np.flatnonzero(is_boilerplate(every, template_kgrams))
    flags = is_boilerplate(hashes, boilerplate)
    lo, hi = template_intervals(np.searchsorted(offsets, positions), flags, k, w, len(offsets), starts)
    return offsets, ends, lo, hi
