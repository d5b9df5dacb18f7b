"""A page's windows for the passages stage, cut in one kernel call a page (page_windows), or
many pages' in one call (batch_windows, which also normalizes, hashes and winnows them).

What the window pass needs of a page for each of its pairs' windows (see
webwinnow.stages._windows): the window's characters (spans.text_windows), its bytes, its units,
the side-a window's fingerprints and whether each is boilerplate, and the page's template text
(template.template_intervals) clipped to the window (template.window_intervals). Those
functions, called a page at a time, were some forty NumPy calls a page: their fixed cost per call
was most of cutting the windows (docs corpus: 22,700 pages cut as side a or b). Tested against
them in tests/unit/test_window_pass.py.
"""

from __future__ import annotations

import numpy as np

from ..core import kernel
from ..core.jit import JIT_OPTIONS, njit
from ..core.units import _words


def page_windows(
    doc: np.ndarray,
    offsets: np.ndarray,
    ends: np.ndarray,
    hashes: np.ndarray,
    selected: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    side: np.ndarray,
    k: int,
    w: int,
    margin: int,
    mod_p: int,
    boilerplate: np.ndarray,
    boilerplate_table: np.ndarray,
    template: np.ndarray,
    template_table: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Per request (lo, hi: the characters of a pair's first and last seed on the page; side: 0
    for side a), for the page's UTF-8 bytes `doc`, its units' character starts `offsets` (and
    ends, or an empty array where a unit is one character), the hashes of all its k-grams and
    the indices of those selected:
    (start, end, opened, text_lo, text_hi, win_lo, win_hi, fp_len, fp_pos, fp_flag, tpl_len,
    tpl_lo, tpl_hi): the window's characters [start, end), whether the text goes on before it
    (1) or after it (2), its bytes, its units [win_lo, win_hi), and, one window after the other,
    the side-a windows' fingerprints (characters, boilerplate or not) and every window's
    template intervals (units from the window's start). Sets are sorted arrays with a table of
    their low bits (boilerplate.HashSet.table); an empty template: none known."""
    if k < 1 or w < 1 or margin < 0:
        raise ValueError("k and w must be >= 1 and margin >= 0")
    if not (len(lo) == len(hi) == len(side)):
        raise ValueError("lo, hi and side must have a value per request")
    if len(ends) and len(ends) != len(offsets):
        raise ValueError("ends must be empty (characters) or have a value per unit")
    if len(hashes) != max(len(offsets) - k + 1, 0) or (len(selected) and int(selected.max()) >= len(hashes)):
        raise ValueError("hashes must have a value per k-gram, and selected index them")
    for table in (boilerplate_table, template_table):
        if not len(table) or len(table) & (len(table) - 1):
            raise ValueError("a set's table must have a power-of-two length")
    return _page_windows(
        np.ascontiguousarray(doc, np.uint8),
        np.ascontiguousarray(offsets, np.int64),
        np.ascontiguousarray(ends, np.int64),
        np.ascontiguousarray(hashes, np.int64),
        np.ascontiguousarray(selected, np.int64),
        np.ascontiguousarray(lo, np.int64),
        np.ascontiguousarray(hi, np.int64),
        np.ascontiguousarray(side, np.int64),
        k,
        w,
        margin,
        mod_p,
        np.ascontiguousarray(boilerplate, np.int64),
        np.ascontiguousarray(boilerplate_table, np.bool_),
        np.ascontiguousarray(template, np.int64),
        np.ascontiguousarray(template_table, np.bool_),
    )


@njit(**JIT_OPTIONS)
def _in_set(h, members, seen):
    """Whether hash h is in the sorted array members; `seen` marks the members' low bits."""
    if not members.shape[0] or not seen[h & (seen.shape[0] - 1)]:
        return False
    at = np.searchsorted(members, h)
    return at < members.shape[0] and members[at] == h


#: Characters between the checkpoints _page_windows finds a window's bytes from.
CHECKPOINT = 64


@njit(**JIT_OPTIONS)
def _char_byte(doc, marks, target, chars):
    """The byte character `target` of the UTF-8 `doc` starts at (its length for `target` >=
    `chars`, the characters it holds), walked from the byte of character CHECKPOINT * k in marks[k]."""
    if target >= chars:
        return doc.shape[0]
    at = target // CHECKPOINT
    j = marks[at]
    for _ in range(target - at * CHECKPOINT):
        j += 1
        while (doc[j] & 0xC0) == 0x80:
            j += 1
    return j


@njit(**JIT_OPTIONS)
def _page_windows(doc, offs, ends, hashes, selected, req_lo, req_hi, req_side, k, w, margin, mod_p, bp, bp_seen, tp, tp_seen):
    """One page's windows, as _slice_windows defines them: per request (lo, hi, side), the
    window's units' characters [start, end), whether the text goes on before (1) or after (2) it,
    its bytes in the page's UTF-8 `doc`, its units [win_lo, win_hi), and the side-a windows'
    fingerprints and every window's template intervals, one window after the other. `ends` is
    empty for characters (a unit is one character); tp (the template k-grams) empty: none known.
    One call a page instead of some forty NumPy calls (text_windows, template_intervals,
    window_intervals): their per-call cost was most of cutting the windows."""
    n, r = offs.shape[0], req_lo.shape[0]
    start = np.zeros(r, np.int64)
    end = np.zeros(r, np.int64)
    opened = np.zeros(r, np.int64)
    if n:
        for i in range(r):
            lo = max(np.searchsorted(offs, req_lo[i]) - margin, 0)
            hi = min(max(np.searchsorted(offs, req_hi[i]) + k + margin, lo + 1), n)
            start[i] = offs[min(lo, n - 1)]
            end[i] = ends[hi - 1] if ends.shape[0] else offs[hi - 1] + 1
            before = np.searchsorted(offs, start[i]) > 0
            after = np.searchsorted(offs, end[i]) < n
            opened[i] = (1 if before else 0) | (2 if after else 0)
    # the windows' bytes: a character's first byte (ASCII: the same)
    text_lo, text_hi = start.copy(), end.copy()
    ascii_only = True
    for b in doc:
        if b >= 0x80:
            ascii_only = False
            break
    if not ascii_only:
        # each window's edges found from the byte of every CHECKPOINT-th character, walked forward
        # from there: a table of every character's byte cost a store a byte (a fifth of the
        # kernel's time on the docs corpus's pages, most of which hold a character or two beyond
        # ASCII). No sort of the edges: a walk over them in sorted order gave, in two CI runs out
        # of four, empty windows for edges visited out of order (never reproduced otherwise).
        size = doc.shape[0]
        marks = np.empty(size // CHECKPOINT + 2, np.int64)
        chars = 0
        for j in range(size):
            if (doc[j] & 0xC0) != 0x80:
                if chars % CHECKPOINT == 0:
                    marks[chars // CHECKPOINT] = j
                chars += 1
        text_lo = np.empty(r, np.int64)
        text_hi = np.empty(r, np.int64)
        for i in range(r):
            text_lo[i] = _char_byte(doc, marks, start[i], chars)
            text_hi[i] = _char_byte(doc, marks, end[i], chars)
    # fingerprints: positions (characters) and whether boilerplate
    m = selected.shape[0]
    positions = np.empty(m, np.int64)
    flags = np.zeros(m, np.bool_)
    for j in range(m):
        positions[j] = offs[selected[j]]
        flags[j] = _in_set(hashes[selected[j]], bp, bp_seen)
    fp_len = np.zeros(r, np.int64)
    total = 0
    firsts = np.zeros(r, np.int64)
    for i in range(r):
        if req_side[i] == 0:
            firsts[i] = np.searchsorted(positions, start[i])
            fp_len[i] = np.searchsorted(positions, end[i]) - firsts[i]
            total += fp_len[i]
    fp_pos = np.empty(total, np.int64)
    fp_flag = np.empty(total, np.bool_)
    at = 0
    for i in range(r):
        for j in range(firsts[i], firsts[i] + fp_len[i]):
            fp_pos[at], fp_flag[at] = positions[j], flags[j]
            at += 1
    # the page's template text (template_intervals): blocks of boilerplate fingerprints, gaps
    # of at most max(w, k) between them, and the template k-grams
    gap = max(w, k)
    units = np.empty(m, np.int64)
    nb = 0
    for j in range(m):
        if flags[j]:
            units[nb] = np.searchsorted(offs, positions[j])  # its character's first unit
            nb += 1
    lo_list = np.empty(nb + max(hashes.shape[0], 0), np.int64)
    hi_list = np.empty(nb + max(hashes.shape[0], 0), np.int64)
    t = 0
    if nb:
        first = units[0]
        for j in range(1, nb + 1):
            if j == nb or units[j] - units[j - 1] > gap:
                lo_list[t] = first
                hi_list[t] = min(units[j - 1] + k, n)
                t += 1
                if j < nb:
                    first = units[j]
        if lo_list[0] <= gap:
            lo_list[0] = 0
        if units[nb - 1] >= n - k - gap:
            hi_list[t - 1] = n
    blocks = t
    if tp.shape[0]:
        for j in range(hashes.shape[0]):
            h = hashes[j]
            if _in_set(h, tp, tp_seen) and (mod_p == 0 or (np.uint64(h) % np.uint64(mod_p)) == 0):
                lo_list[t] = j
                hi_list[t] = min(j + k, n)
                t += 1
    t_lo, t_hi = lo_list[:t], hi_list[:t]
    if t > blocks:  # merge_intervals: sorted by start (stable), touching ones merged
        order = np.argsort(t_lo, kind="mergesort")
        s_lo, s_hi = t_lo[order], t_hi[order]
        for j in range(1, t):
            s_hi[j] = max(s_hi[j], s_hi[j - 1])
        keep = 0
        out_lo = np.empty(t, np.int64)
        out_hi = np.empty(t, np.int64)
        for j in range(t):
            if j == 0 or s_lo[j] > s_hi[j - 1]:
                out_lo[keep] = s_lo[j]
                keep += 1
            out_hi[keep - 1] = s_hi[j]
        t_lo, t_hi = out_lo[:keep], out_hi[:keep]
    # window_intervals: the template intervals clipped to each window, from its start
    win_lo = np.empty(r, np.int64)
    win_hi = np.empty(r, np.int64)
    tpl_len = np.zeros(r, np.int64)
    firsts_t = np.zeros(r, np.int64)
    total = 0
    for i in range(r):
        win_lo[i] = np.searchsorted(offs, start[i])
        win_hi[i] = np.searchsorted(offs, end[i])
        firsts_t[i] = np.searchsorted(t_hi, win_lo[i], side="right")
        tpl_len[i] = max(np.searchsorted(t_lo, win_hi[i]) - firsts_t[i], 0)
        total += tpl_len[i]
    tpl_lo = np.empty(total, np.int64)
    tpl_hi = np.empty(total, np.int64)
    at = 0
    for i in range(r):
        for j in range(firsts_t[i], firsts_t[i] + tpl_len[i]):
            tpl_lo[at] = max(t_lo[j], win_lo[i]) - win_lo[i]
            tpl_hi[at] = min(t_hi[j], win_hi[i]) - win_lo[i]
            at += 1
    return start, end, opened, text_lo, text_hi, win_lo, win_hi, fp_len, fp_pos, fp_flag, tpl_len, tpl_lo, tpl_hi


def batch_windows(
    data: np.ndarray,
    text_starts: np.ndarray,
    text_ends: np.ndarray,
    req_offsets: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    side: np.ndarray,
    words: bool,
    k: int,
    w: int,
    robust: bool,
    margin: int,
    mod_p: int,
    boilerplate: np.ndarray,
    boilerplate_table: np.ndarray,
    template: np.ndarray,
    template_table: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """page_windows for many pages in one call: page d is data[text_starts[d]:text_ends[d]]
    (UTF-8), its requests lo/hi/side[req_offsets[d]:req_offsets[d + 1]]. Each page is
    normalized (and cut into words), hashed and winnowed (or selected mod p) here, as
    fingerprint_batch does. Per request: (start, end, opened, text_lo, text_hi, norm, fp_len,
    tpl_len), text_lo/hi its bytes in its page and norm its page's units; then, one request
    after the other, (fp_pos, fp_flag, tpl_lo, tpl_hi). Characters and words only: code is
    lexed in Python. A page at a time, the calls from Python were most of the windows' cost."""
    from ..core.charfold import fold_table

    n = len(text_starts)
    if len(text_ends) != n or len(req_offsets) != n + 1 or not (len(lo) == len(hi) == len(side) == (req_offsets[-1] if n else 0)):
        raise ValueError("a start and end per page, n + 1 request offsets, and lo, hi and side per request")
    if n and (
        (np.asarray(text_ends) < np.asarray(text_starts)).any()
        or int(np.max(text_ends)) > len(data)
        or int(np.min(text_starts)) < 0
    ):
        raise ValueError("pages must lie within the data")
    if k < 1 or w < 1 or margin < 0:
        raise ValueError("k and w must be >= 1 and margin >= 0")
    for table in (boilerplate_table, template_table):
        if not len(table) or len(table) & (len(table) - 1):
            raise ValueError("a set's table must have a power-of-two length")
    fold, expand = fold_table()
    i64 = lambda a: np.ascontiguousarray(a, np.int64)
    return _batch_windows(
        np.ascontiguousarray(data, np.uint8),
        i64(text_starts),
        i64(text_ends),
        i64(req_offsets),
        i64(lo),
        i64(hi),
        i64(side),
        fold,
        expand,
        bool(words),
        k,
        w,
        bool(robust),
        margin,
        mod_p,
        i64(boilerplate),
        np.ascontiguousarray(boilerplate_table, np.bool_),
        i64(template),
        np.ascontiguousarray(template_table, np.bool_),
    )


@njit(**JIT_OPTIONS)
def _grown(values, size):
    """values with room for at least `size` (doubled: appends stay linear)."""
    if size <= values.shape[0]:
        return values
    out = np.empty(max(size, 2 * values.shape[0]), values.dtype)
    out[: values.shape[0]] = values
    return out


@njit(**JIT_OPTIONS)
def _batch_windows(
    data,
    text_starts,
    text_ends,
    req_offsets,
    req_lo,
    req_hi,
    req_side,
    fold,
    expand,
    words,
    k,
    w,
    robust,
    margin,
    mod_p,
    bp,
    bp_seen,
    tp,
    tp_seen,
):
    r = req_lo.shape[0]
    start = np.empty(r, np.int64)
    end = np.empty(r, np.int64)
    opened = np.empty(r, np.int64)
    text_lo = np.empty(r, np.int64)
    text_hi = np.empty(r, np.int64)
    norm = np.empty(r, np.int64)
    fp_len = np.empty(r, np.int64)
    tpl_len = np.empty(r, np.int64)
    fp_pos = np.empty(1024, np.int64)
    fp_flag = np.empty(1024, np.bool_)
    tpl_lo = np.empty(1024, np.int64)
    tpl_hi = np.empty(1024, np.int64)
    n_fp = 0
    n_tpl = 0
    no_ends = np.zeros(0, np.int64)
    for d in range(text_starts.shape[0]):
        lo, hi = req_offsets[d], req_offsets[d + 1]
        if hi == lo:
            continue
        doc = data[text_starts[d] : text_ends[d]]
        chars, offsets = kernel._normalize(doc, fold, expand)
        if words:
            codes, unit_starts, unit_ends = _words(chars, offsets)
            hashes = kernel._kgram_hashes(codes, k)
        else:
            unit_starts, unit_ends = offsets, no_ends
            hashes = kernel._kgram_hashes(chars, k)
        selected = kernel._mod_p(hashes, mod_p) if mod_p else kernel._winnow(hashes, w, robust)
        got = _page_windows(
            doc, unit_starts, unit_ends, hashes, selected, req_lo[lo:hi], req_hi[lo:hi], req_side[lo:hi],
            k, w, margin, mod_p, bp, bp_seen, tp, tp_seen,
        )  # fmt: skip
        start[lo:hi], end[lo:hi], opened[lo:hi], text_lo[lo:hi], text_hi[lo:hi] = got[0], got[1], got[2], got[3], got[4]
        norm[lo:hi] = unit_starts.shape[0]
        fp_len[lo:hi], tpl_len[lo:hi] = got[7], got[10]
        m, t = got[8].shape[0], got[11].shape[0]
        fp_pos, fp_flag = _grown(fp_pos, n_fp + m), _grown(fp_flag, n_fp + m)
        fp_pos[n_fp : n_fp + m], fp_flag[n_fp : n_fp + m] = got[8], got[9]
        tpl_lo, tpl_hi = _grown(tpl_lo, n_tpl + t), _grown(tpl_hi, n_tpl + t)
        tpl_lo[n_tpl : n_tpl + t], tpl_hi[n_tpl : n_tpl + t] = got[11], got[12]
        n_fp += m
        n_tpl += t
    return (
        start,
        end,
        opened,
        text_lo,
        text_hi,
        norm,
        fp_len,
        tpl_len,
        fp_pos[:n_fp],
        fp_flag[:n_fp],
        tpl_lo[:n_tpl],
        tpl_hi[:n_tpl],
    )
