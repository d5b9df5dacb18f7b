"""The passages of a batch of pairs in one kernel call: the stages' way to webwinnow.analysis.spans.

A grow task hands the kernel a chunk of pairs at once (their windows or pages, seeds, and the a
windows' fingerprints): one call from Python per chunk, where a call per pair cost more than the
work. Each pair's spans are grown as analysis.spans grows them, then measured against the
template text of each side. Pages b are cut into units once for the pairs near one another that
share them (B_CACHE_UNITS).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..core import kernel
from ..core.charfold import fold_table
from ..core.codetokens import DEFAULT_LEXER
from ..core.jit import JIT_OPTIONS, njit
from ..core.units import CODE, WORD, _words_into, unit_number
from .spans import _covered, _grow_spans, _longest_free, _normalize_window, _union_content, _window_units


class Side(NamedTuple):
    """One side (a or b) of a batch of pairs, as the passages kernel takes it: int64 arrays but
    `data`. Pair p's window is data[starts[p]:ends[p]] (UTF-8, the whole text from character
    base[p] on), with units before it (open[p] & 1) or after it (& 2) in the whole text; its
    template text is tpl_lo/tpl_hi[tpl_offsets[p]:tpl_offsets[p + 1]], intervals of the window's
    unit indices; for code, its tokens are tok_codes[tok_bounds[p]:tok_bounds[p + 1]] with their
    ranges in the window (tok_starts, tok_ends; empty for the other units)."""

    data: np.ndarray  # uint8
    starts: np.ndarray
    ends: np.ndarray
    base: np.ndarray
    open: np.ndarray
    tpl_offsets: np.ndarray
    tpl_lo: np.ndarray
    tpl_hi: np.ndarray
    tok_bounds: np.ndarray
    tok_codes: np.ndarray
    tok_starts: np.ndarray
    tok_ends: np.ndarray
    # pages, not windows (empty: windows): data[starts[p]:ends[p]] is pair p's whole page, and
    # its window the units from character base[p] to win_end[p]
    win_end: np.ndarray
    # side b only (empty: none): data[page_start[p]:page_end[p]] is pair p's whole page, which the
    # kernel cuts into units once for the pairs that share it (B_CACHE_UNITS), its window the
    # units from character base[p] to win_end[p]; data[starts[p]:ends[p]] is still the window's
    page_start: np.ndarray
    page_end: np.ndarray


class Seeds(NamedTuple):
    """Pair p's seeds: a[offsets[p]:offsets[p + 1]] and b[...], whole texts' character offsets."""

    offsets: np.ndarray
    a: np.ndarray
    b: np.ndarray


class Marks(NamedTuple):
    """Pair p's a-window fingerprints: pos[offsets[p]:offsets[p + 1]] (sorted), flag 1 where boilerplate."""

    offsets: np.ndarray
    pos: np.ndarray
    flag: np.ndarray


#: Units of pages b the passages kernel keeps cut (8 bytes each for the codes, 8 for the starts,
#: 8 more for words' ends), in arrays a worker allocates once: pages that do not fit are cut a
#: window at a time, as before.
B_CACHE_UNITS = 4 << 20
#: Pages b the kernel keeps at most: half the slots of its table of them.
_B_TABLE_BITS = 14
B_CACHE_PAGES = 1 << (_B_TABLE_BITS - 1)
#: A seed's diagonal (its unit in b less its unit in a) offset to be positive in 32 bits, and the
#: mask of the low 32 bits: a seed is one 64-bit key, diagonal above unit of a, which sorts as
#: (diagonal, unit of a) while windows and pages stay under 2^31 units (batch_passages checks).
_DIAGONAL = 1 << 31
_LOW = np.uint64(0xFFFFFFFF)


@njit(**JIT_OPTIONS)
def _cached_page(table, gen, now, start):
    """The slot of the page b starting at byte `start` in the kernel's table of the pages it
    keeps, or -1 - the free slot where it goes (a slot of another generation is free)."""
    mask = table.shape[0] - 1
    s = np.int64((np.uint64(start) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _B_TABLE_BITS)) & mask
    while gen[s] == now:
        if table[s] == start:
            return s
        s = (s + 1) & mask
    return -1 - s


@njit(**JIT_OPTIONS)
def _batch_passages(a, b, seeds, marks, fold, expand, k, max_spans, max_chars, unit, cache):
    """window_passages for every pair of a batch at once (one call from Python per batch).

    a and b are the pairs' two Sides, seeds and marks (the a-windows' fingerprints) as above.
    The windows are cut into units (CHAR, WORD) here; CODE units come made. Returns per span
    (pair, start_a, end_a, start_b, end_b, length, content_a, content_b, run_a, run_b), its boilerplate share
    or NaN, and per pair (capped, truncated) and (copied_a, content_a, copied_b, content_b) over
    the union of its spans on each side, lengths in units.
    """
    seed_offsets, seeds_a, seeds_b = seeds.offsets, seeds.a, seeds.b
    fp_offsets, fp_pos, fp_flag = marks.offsets, marks.pos, marks.flag
    starts_a, ends_a, base_a, open_a = a.starts, a.ends, a.base, a.open
    starts_b, ends_b, base_b, open_b = b.starts, b.ends, b.base, b.open
    tpl_offsets_a, tpl_lo_a, tpl_hi_a = a.tpl_offsets, a.tpl_lo, a.tpl_hi
    tpl_offsets_b, tpl_lo_b, tpl_hi_b = b.tpl_offsets, b.tpl_lo, b.tpl_hi
    npairs = starts_a.shape[0]
    capacity = 0
    longest = 64
    for p in range(npairs):
        capacity += min(max_spans, seed_offsets[p + 1] - seed_offsets[p])
        longest = max(longest, ends_a[p] - starts_a[p] + 64, ends_b[p] - starts_b[p] + 64)
    pair = np.empty(capacity, dtype=np.int64)
    cols = np.empty((capacity, 9), dtype=np.int64)
    share = np.empty(capacity, dtype=np.float64)
    capped = np.zeros(npairs, dtype=np.bool_)
    truncated = np.zeros(npairs, dtype=np.bool_)
    union = np.zeros((npairs, 4), dtype=np.int64)
    chars_a = np.empty(longest, dtype=np.int32)
    offs_a = np.empty(longest, dtype=np.int64)
    chars_b = np.empty(longest, dtype=np.int32)
    offs_b = np.empty(longest, dtype=np.int64)
    made = unit == CODE
    chars = unit != WORD and not made  # a unit's end is one past its start (_window_units)
    scratch = 0 if made else longest
    # side a as whole pages: a page is cut into units once for all of its pairs (they come one
    # after the other), not once per pair's window
    pages = a.win_end.shape[0] > 0 and not made
    page_lo, page_hi, page_n = -1, -1, 0
    pchars = np.empty(longest if pages else 0, dtype=np.int32)
    poffs = np.empty(longest if pages else 0, dtype=np.int64)
    pcodes = np.empty(longest if pages else 0, dtype=np.int64)
    pstart = np.empty(longest if pages else 0, dtype=np.int64)
    pend = np.empty(longest if pages else 0, dtype=np.int64)
    codes_a = np.empty(scratch, dtype=np.int64)
    ustart_a = np.empty(scratch, dtype=np.int64)
    uend_a = np.empty(scratch, dtype=np.int64)
    codes_b = np.empty(scratch, dtype=np.int64)
    ustart_b = np.empty(scratch, dtype=np.int64)
    uend_b = np.empty(scratch, dtype=np.int64)
    # side b's pages, each cut into units once while it fits among those kept (pairs that share a
    # page b come close together: stages._sides.by_partner); kept in the caller's arrays
    keep = b.page_start.shape[0] > 0 and not made
    kcodes, kstart, kend = cache[0], cache[1], cache[2]
    table = np.zeros(2 * B_CACHE_PAGES if keep else 1, dtype=np.int64)
    gen = np.zeros(table.shape[0], dtype=np.int64)
    kept_at = np.zeros(table.shape[0], dtype=np.int64)
    kept_n = np.zeros(table.shape[0], dtype=np.int64)
    now = 1
    used = 0
    pages_kept = 0
    bchars = np.empty(64 if keep and not chars else 0, dtype=np.int32)
    boffs = np.empty(64 if keep and not chars else 0, dtype=np.int64)
    most = 1
    for p in range(npairs):
        most = max(most, seed_offsets[p + 1] - seed_offsets[p])
    keys = np.empty(most, dtype=np.uint64)
    sa = np.empty(most, dtype=np.int64)
    sb = np.empty(most, dtype=np.int64)
    count = 0
    for p in range(npairs):
        at_b = base_b[p]  # a window's units are at their characters from its first
        if made:
            lo_a, hi_a = a.tok_bounds[p], a.tok_bounds[p + 1]
            codes_a, ustart_a, uend_a = a.tok_codes[lo_a:hi_a], a.tok_starts[lo_a:hi_a], a.tok_ends[lo_a:hi_a]
            na = codes_a.shape[0]
            lo_b, hi_b = b.tok_bounds[p], b.tok_bounds[p + 1]
            codes_b, ustart_b, uend_b = b.tok_codes[lo_b:hi_b], b.tok_starts[lo_b:hi_b], b.tok_ends[lo_b:hi_b]
            nb = codes_b.shape[0]
        else:
            if pages:
                if starts_a[p] != page_lo or ends_a[p] != page_hi:
                    pchars, poffs, pcodes, pstart, pend, page_n = _window_units(
                        unit, a.data, starts_a[p], ends_a[p], fold, expand, pchars, poffs, pcodes, pstart, pend
                    )
                    page_lo, page_hi = starts_a[p], ends_a[p]
                u0 = np.searchsorted(pstart[:page_n], base_a[p])
                u1 = np.searchsorted(pstart[:page_n], a.win_end[p])
                codes_a, ustart_a, uend_a = pcodes[u0:u1], pstart[u0:u1], pend[u0:u1]
                na = u1 - u0
            else:
                chars_a, offs_a, codes_a, ustart_a, uend_a, na = _window_units(
                    unit, a.data, starts_a[p], ends_a[p], fold, expand, chars_a, offs_a, codes_a, ustart_a, uend_a
                )
            slot = -1
            if keep and b.page_end[p] - b.page_start[p] + 64 <= kcodes.shape[0]:
                slot = _cached_page(table, gen, now, b.page_start[p])
                if slot < 0:
                    size = b.page_end[p] - b.page_start[p] + 64  # room the cutters ask for
                    if used + size > kcodes.shape[0] or 2 * (pages_kept + 1) > table.shape[0]:
                        now += 1  # every page kept so far is let go
                        used = 0
                        pages_kept = 0
                        slot = _cached_page(table, gen, now, b.page_start[p])
                    slot = -1 - slot
                    if chars:
                        got = kernel._normalize_into(
                            b.data, b.page_start[p], b.page_end[p], fold, expand, kcodes[used:], kstart[used:]
                        )
                    else:
                        bchars, boffs, got = _normalize_window(
                            b.data, b.page_start[p], b.page_end[p], fold, expand, bchars, boffs
                        )
                        if got <= kcodes.shape[0] - used:
                            got = _words_into(bchars, boffs, got, kcodes[used:], kstart[used:], kend[used:])
                        else:
                            got = -1
                    if got < 0:
                        slot = -1  # more units than bytes (characters that fold to several)
                    else:
                        table[slot] = b.page_start[p]
                        gen[slot] = now
                        kept_at[slot] = used
                        kept_n[slot] = got
                        used += got
                        pages_kept += 1
            if slot >= 0:
                first = kept_at[slot]
                u0 = first + np.searchsorted(kstart[first : first + kept_n[slot]], base_b[p])
                u1 = first + np.searchsorted(kstart[first : first + kept_n[slot]], b.win_end[p])
                codes_b, ustart_b = kcodes[u0:u1], kstart[u0:u1]
                if not chars:
                    uend_b = kend[u0:u1]
                nb = u1 - u0
                at_b = 0  # a page's units are at their characters in it
            else:
                chars_b, offs_b, codes_b, ustart_b, uend_b, nb = _window_units(
                    unit, b.data, starts_b[p], ends_b[p], fold, expand, chars_b, offs_b, codes_b, ustart_b, uend_b
                )
        lo, hi = seed_offsets[p], seed_offsets[p + 1]
        m = hi - lo
        at_a = 0 if pages else base_a[p]  # a page's units are at their characters in it
        # by diagonal, then by position in a (the order decides which spans a capped pair
        # keeps): one key each, the diagonal above the unit of a; seeds of one key are one seed
        units_a = ustart_a[:na]
        units_b = ustart_b[:nb]
        ia = ib = 0
        for q in range(m):
            ia = _unit_from(units_a, seeds_a[lo + q] - at_a, ia)
            ib = _unit_from(units_b, seeds_b[lo + q] - at_b, ib)
            keys[q] = (np.uint64(ib - ia + _DIAGONAL) << np.uint64(32)) | np.uint64(ia)
        _sort_small(keys, m)
        for q in range(m):
            sa[q] = np.int64(keys[q] & _LOW)
            sb[q] = sa[q] + np.int64(keys[q] >> np.uint64(32)) - _DIAGONAL
        spans, was_capped, was_truncated = _grow_spans(
            codes_a[:na], codes_b[:nb], sa[:m], sb[:m], k, max_spans, max_chars, open_a[p], open_b[p]
        )
        if was_truncated:
            truncated[p] = True
            continue
        capped[p] = was_capped
        union[p, 0], union[p, 1] = _union_content(
            spans[:, 0], spans[:, 2], tpl_lo_a, tpl_hi_a, tpl_offsets_a[p], tpl_offsets_a[p + 1]
        )
        union[p, 2], union[p, 3] = _union_content(
            spans[:, 1], spans[:, 2], tpl_lo_b, tpl_hi_b, tpl_offsets_b[p], tpl_offsets_b[p + 1]
        )
        # by start in a, then in b: no two spans start at the same pair of units
        n_spans = spans.shape[0]
        for q in range(n_spans):
            keys[q] = (np.uint64(spans[q, 0]) << np.uint64(32)) | np.uint64(spans[q, 1])
        by_start = np.argsort(keys[:n_spans])
        f_lo, f_hi = fp_offsets[p], fp_offsets[p + 1]
        for q in range(n_spans):
            s = by_start[q]
            x, y, length = spans[s, 0], spans[s, 1], spans[s, 2]
            pair[count] = p
            cols[count, 0] = ustart_a[x] + at_a
            cols[count, 1] = (ustart_a[x + length - 1] + 1 if chars else uend_a[x + length - 1]) + at_a
            cols[count, 2] = ustart_b[y] + at_b
            cols[count, 3] = (ustart_b[y + length - 1] + 1 if chars else uend_b[y + length - 1]) + at_b
            cols[count, 4] = length
            cols[count, 5] = length - _covered(tpl_lo_a, tpl_hi_a, tpl_offsets_a[p], tpl_offsets_a[p + 1], x, x + length)
            cols[count, 6] = length - _covered(tpl_lo_b, tpl_hi_b, tpl_offsets_b[p], tpl_offsets_b[p + 1], y, y + length)
            cols[count, 7] = _longest_free(tpl_lo_a, tpl_hi_a, tpl_offsets_a[p], tpl_offsets_a[p + 1], x, x + length)
            cols[count, 8] = _longest_free(tpl_lo_b, tpl_hi_b, tpl_offsets_b[p], tpl_offsets_b[p + 1], y, y + length)
            inside = 0
            flagged = 0
            for f in range(np.searchsorted(fp_pos[f_lo:f_hi], cols[count, 0]) + f_lo, f_hi):
                if fp_pos[f] >= cols[count, 1]:
                    break
                inside += 1
                flagged += fp_flag[f]
            share[count] = flagged / inside if inside else np.nan
            count += 1
    return pair[:count], cols[:count], share[:count], capped, truncated, union


@njit(**JIT_OPTIONS)
def _unit_from(starts, x, hint):
    """np.searchsorted(starts, x): the first unit starting at or after character x, searched
    outwards from unit `hint` (a pair's seeds lie close together in each text: a few steps in
    cache, where a search of the whole page took 17 steps over it)."""
    n = starts.shape[0]
    if hint > n:
        hint = n
    # the answer is in (below, above]: starts[below] < x <= starts[above] (-1 and n: beyond)
    step = 1
    if hint < n and starts[hint] < x:
        below = hint
        above = hint + 1
        while above < n and starts[above] < x:
            below = above
            step *= 2
            above = below + step
        if above > n:
            above = n
    else:
        above = hint
        below = hint - 1
        while below >= 0 and starts[below] >= x:
            above = below
            step *= 2
            below = above - step
        if below < -1:
            below = -1
    while above - below > 1:
        mid = (below + above) // 2
        if starts[mid] < x:
            below = mid
        else:
            above = mid
    return above


@njit(**JIT_OPTIONS)
def _sort_small(keys, m):
    """keys[:m] sorted in place: by insertion when few (a pair's seeds, about ten), else NumPy's."""
    if m > 24:
        keys[:m] = np.sort(keys[:m])
        return
    for i in range(1, m):
        key = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key


_KEPT = threading.local()


def _kept_units(words: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays the kernel keeps pages b's units in (codes, starts, and words' ends): made once
    per thread, since fresh memory of this size costs its page faults at every call."""
    held = getattr(_KEPT, "arrays", None)
    if held is None or (words and not len(held[2])):
        held = tuple(np.empty(B_CACHE_UNITS if i < 2 or words else 0, np.int64) for i in range(3))
        _KEPT.arrays = held
    return held


def _string_ranges(texts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An Arrow (large) string array's UTF-8 buffer and each value's [start, end) in it."""
    import pyarrow as pa

    n = len(texts)
    wide = pa.types.is_large_string(texts.type) or pa.types.is_large_binary(texts.type)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64 if wide else np.int32)[texts.offset : texts.offset + n + 1]
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8) if texts.buffers()[2] is not None else np.zeros(0, np.uint8)
    return data, offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)


@dataclass(frozen=True)
class BatchPassages:
    """Spans of many pairs: span i belongs to pair `pair[i]`; per pair capped and truncated."""

    pair: np.ndarray
    start_a: np.ndarray
    end_a: np.ndarray
    start_b: np.ndarray
    end_b: np.ndarray
    length: np.ndarray
    content_a: np.ndarray  # normalized characters of the span outside a's template text
    content_b: np.ndarray
    run_a: np.ndarray  # the longest run of them: consecutive units outside a's template text
    run_b: np.ndarray
    boilerplate: np.ndarray
    capped: np.ndarray  # per pair
    truncated: np.ndarray  # per pair: a span reached an open window edge; its spans are omitted
    union: np.ndarray  # per pair (copied_a, content_a, copied_b, content_b): normalized characters
    # of the union of its spans on each side, and those outside the side's template


def batch_passages(
    texts_a,
    texts_b,
    base_a: np.ndarray,
    base_b: np.ndarray,
    open_a: np.ndarray,
    open_b: np.ndarray,
    seed_offsets: np.ndarray,
    seeds_a: np.ndarray,
    seeds_b: np.ndarray,
    fp_offsets: np.ndarray,
    fp_pos: np.ndarray,
    fp_flags: np.ndarray,
    k: int,
    *,
    template_a: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    template_b: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    max_spans: int = 1000,
    max_chars: int = 20_000_000,
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
    tokens_a: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    tokens_b: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    pages_a: tuple[Any, np.ndarray, np.ndarray] | None = None,
    pages_b: tuple[Any, np.ndarray, np.ndarray, np.ndarray] | None = None,
    end_b: np.ndarray | None = None,
) -> BatchPassages:
    """window_passages for each pair p of Arrow string arrays texts_a/texts_b (windows), with the
    boilerplate share of every span from the a-window's sorted fingerprint positions and flags,
    and its content units per side: template_a = (offsets, lo, hi), pair p's template
    intervals lo/hi[offsets[p]:offsets[p + 1]] in its a-window's unit indices (None: no
    template). For code, tokens_a/tokens_b give the windows' tokens as the whole texts' lexing
    made them, (bounds, codes, starts, ends) with ranges from each window's start; without them
    the windows are lexed here, and must then be whole blocks (a lexer's state depends on what
    precedes within a block).

    pages_a = (pages, page, end): side a from whole pages instead of windows (not for code):
    pair p's a window is the units of pages[page[p]] from character base_a[p] to end[p], whole
    units, and texts_a is not read. A page is cut into units once for its pairs when they come
    one after the other, where each window was cut on its own: on the docs corpus the pairs'
    windows held ten times their pages' text.

    pages_b = (pages, page, lo, hi): side b's windows as bytes [lo[p], hi[p]) of its page
    pages[page[p]] (UTF-8; base_b[p] still the window's first character), and texts_b is not
    read: a grow task holds each page b once, not a window per pair. texts_a (texts_b) may be
    None where pages_a (pages_b) or, for code, the tokens stand for it. With end_b, each
    window's characters end (not for code): a page b is cut into units once for the pairs near
    one another that share it, while it fits among the pages the kernel keeps (B_CACHE_UNITS),
    its window the units from character base_b[p] to end_b[p], whole units."""
    import pyarrow as pa

    if k < 1 or max_spans < 1 or max_chars < 1:
        raise ValueError("k, max_spans and max_chars must be >= 1")
    n = len(base_a)
    if not (
        len(base_b) == len(open_a) == len(open_b) == n
        and all(texts is None or len(texts) == n for texts in (texts_a, texts_b))
        and len(seed_offsets) == len(fp_offsets) == n + 1
    ):
        raise ValueError("one window of each side, one base and open flag each, and n + 1 offsets per pair")
    number = unit_number(unit)
    arrays = []
    tokens: list[tuple[np.ndarray, ...]] = []
    for texts, made, pages in ((texts_a, tokens_a, pages_a), (texts_b, tokens_b, pages_b)):
        if texts is None:
            if (made is None) if number == CODE else (pages is None):
                raise ValueError("each side needs its windows' texts, its pages or (code) its tokens")
            texts = pa.nulls(n, pa.string())  # not read; its tokens or pages are
        texts = pa.array(texts, pa.string()) if not isinstance(texts, pa.Array) else texts
        if number == CODE and made is not None:
            # writable: the kernel's variables hold these slices or its own scratch arrays
            bounds, codes, starts, ends = (np.require(x, np.int64, ["C", "W"]) for x in made)
            if len(bounds) != n + 1 or not (len(codes) == len(starts) == len(ends) == (bounds[-1] if n else 0)):
                raise ValueError("tokens: n + 1 bounds and one code, start and end per token")
            tokens.append((bounds, codes, starts, ends))
        elif number == CODE:
            from ..core.winnowing import code_units_batch

            codes, starts, ends, bounds = code_units_batch(texts, lexer)
            tokens.append((bounds, codes, starts, ends))
        else:
            tokens.append((np.zeros(n + 1, np.int64), *(np.zeros(0, np.int64),) * 3))
        if texts.null_count == n and (pages is not None or (number == CODE and made is not None)):
            arrays.append((np.zeros(0, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.int64)))
            continue
        if texts.null_count:
            raise ValueError("windows must not be null")
        arrays.append(_string_ranges(texts))
    fold, expand = fold_table()
    i64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)
    templates: list[tuple[np.ndarray, ...]] = []
    for template in (template_a, template_b):
        if template is None:
            template = (np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        bounds, lo, hi = (i64(x) for x in template)
        if len(bounds) != n + 1 or lo.shape != hi.shape or (n and bounds[-1] != len(lo)):
            raise ValueError("template intervals: n + 1 offsets and one lo and hi per interval")
        templates.append((bounds, lo, hi))
    win_end = np.zeros(0, np.int64)
    if pages_a is not None and number != CODE:
        pages, page, end = pages_a
        page, win_end = i64(page), i64(end)
        if len(page) != n or len(win_end) != n or (n and (page.min() < 0 or page.max() >= len(pages))):
            raise ValueError("pages_a: a page (an index of pages) and a window end per pair")
        if pages.null_count:
            raise ValueError("pages must not be null")
        data, starts, ends = _string_ranges(pages)
        arrays[0] = (data, starts[page], ends[page])
    page_start = page_end = end = np.zeros(0, np.int64)
    if end_b is not None and (pages_b is None or len(end_b) != n):
        raise ValueError("end_b: one window end per pair, with pages_b")
    if pages_b is not None:
        pages, page, lo, hi = pages_b
        page, lo, hi = i64(page), i64(lo), i64(hi)
        if not (len(page) == len(lo) == len(hi) == n) or (n and (page.min() < 0 or page.max() >= len(pages))):
            raise ValueError("pages_b: a page (an index of pages) and a window's bytes per pair")
        if pages.null_count:
            raise ValueError("pages must not be null")
        data, starts, ends = _string_ranges(pages)
        size = ends[page] - starts[page]
        if n and ((lo < 0) | (lo > hi) | (hi > size)).any():
            raise ValueError("pages_b: each window's bytes must lie within its page")
        arrays[1] = (data, starts[page] + lo, starts[page] + hi)
        if end_b is not None and number != CODE:
            page_start, page_end, end = starts[page], ends[page], i64(end_b)
            if n and (end < i64(base_b)).any():
                raise ValueError("end_b: a window must not end before it starts")
    sides = []
    for i, (base, edges) in enumerate(((base_a, open_a), (base_b, open_b))):
        data, starts, ends = arrays[i]
        tpl_offsets, tpl_lo, tpl_hi = templates[i]
        tok_bounds, tok_codes, tok_starts, tok_ends = tokens[i]
        ending = win_end if i == 0 else end
        sides.append(
            Side(
                data,
                starts,
                ends,
                i64(base),
                i64(edges),
                tpl_offsets,
                tpl_lo,
                tpl_hi,
                tok_bounds,
                tok_codes,
                tok_starts,
                tok_ends,
                ending,
                page_start if i == 1 else np.zeros(0, np.int64),
                page_end if i == 1 else np.zeros(0, np.int64),
            )
        )
    longest = max(
        [int((side.ends - side.starts).max()) for side in sides if len(side.starts)]
        + [int((page_end - page_start).max()) if len(page_start) else 0]
        + [int(np.diff(side.tok_bounds).max()) for side in sides if len(side.tok_bounds) > 1]
    )
    if longest >= _DIAGONAL:
        raise ValueError(f"a window or page of {longest:,} bytes or tokens: the passages kernel takes them under 2 GiB")
    pair, cols, share, capped, truncated, union = _batch_passages(
        sides[0],
        sides[1],
        Seeds(i64(seed_offsets), i64(seeds_a), i64(seeds_b)),
        Marks(i64(fp_offsets), i64(fp_pos), np.ascontiguousarray(fp_flags, dtype=np.int64)),
        fold,
        expand,
        int(k),
        int(max_spans),
        int(max_chars),
        number,
        _kept_units(number == WORD) if len(page_start) else (np.zeros(0, np.int64),) * 3,
    )
    return BatchPassages(
        pair=pair,
        start_a=cols[:, 0].copy(),
        end_a=cols[:, 1].copy(),
        start_b=cols[:, 2].copy(),
        end_b=cols[:, 3].copy(),
        length=cols[:, 4].copy(),
        content_a=cols[:, 5].copy(),
        content_b=cols[:, 6].copy(),
        run_a=cols[:, 7].copy(),
        run_b=cols[:, 8].copy(),
        boilerplate=share,
        capped=capped,
        truncated=truncated,
        union=union,
    )
