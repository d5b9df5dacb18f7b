"""Slow, obviously-correct reference implementations, written straight from the definitions.

Nothing here is clever: big-int arithmetic reduced ``% 2**64``, the minimum of every window found
by brute force, explicit loops over Python lists. The only thing taken from ``webwinnow`` is the
per-character fold (``unifold.fold_char``), which *is* the definition of normalization.
"""

from __future__ import annotations

import functools

from webwinnow.core.charfold import fold_char

HASH_BASE = 0x9E3779B97F4A7C15
MOD = 2**64


def to_signed(u: int) -> int:
    """An unsigned 64-bit value reinterpreted as two's-complement signed."""
    u %= MOD
    return u - MOD if u >= 2**63 else u


def to_unsigned(s: int) -> int:
    return s % MOD


def normalize(text: str) -> tuple[str, list[int]]:
    """Each character folds to 0..n characters, every one tagged with the character's index."""
    chars: list[str] = []
    offsets: list[int] = []
    for i, ch in enumerate(text):
        for out in fold_char(ch):
            chars.append(out)
            offsets.append(i)
    return "".join(chars), offsets


@functools.cache
def _power(e: int) -> int:
    """b^e, exact (a big int); cached only to keep the reference from being needlessly slow."""
    return HASH_BASE**e


def kgram_hash(kgram: str) -> int:
    """H = (c_1 b^(k-1) + ... + c_k) * b mod 2^64, as signed int64."""
    k = len(kgram)
    total = 0
    for j, ch in enumerate(kgram):
        total += ord(ch) * _power(k - 1 - j)
    return to_signed(total * HASH_BASE)


def kgram_hashes(text: str, k: int) -> tuple[list[int], list[int]]:
    """Hash of every k-gram of the normalized text, and the offset of its first character."""
    norm, offsets = normalize(text)
    hashes: list[int] = []
    starts: list[int] = []
    for i in range(len(norm) - k + 1):
        hashes.append(kgram_hash(norm[i : i + k]))
        starts.append(offsets[i])
    return hashes, starts


def _alone(ch: str) -> bool:
    """Kana and Han ideographs: each a word of its own."""
    cp = ord(ch)
    return any(
        lo <= cp <= hi for lo, hi in ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
    )


def words(text: str) -> list[tuple[str, int, int]]:
    """(normalized word, start, end) of every word: a run of normalized characters from
    consecutive original characters, each kana or Han ideograph alone; end exclusive."""
    out: list[tuple[str, int, int]] = []
    for i, ch in enumerate(text):
        for c in fold_char(ch):
            joins = out and not _alone(c) and not _alone(out[-1][0][-1]) and out[-1][2] >= i
            if joins:
                word, start, _ = out[-1]
                out[-1] = (word + c, start, i + 1)
            else:
                out.append((c, i, i + 1))
    return out


def word_code(word: str) -> int:
    """FNV-1a over the word's code points, then SplitMix64's finalizer; signed 64-bit."""
    h = 0xCBF29CE484222325
    for c in word:
        h = ((h ^ ord(c)) * 0x100000001B3) % MOD
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) % MOD
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) % MOD
    return to_signed(h ^ (h >> 31))


def codes_hash(codes: list[int]) -> int:
    """H = (c_1 b^(k-1) + ... + c_k) * b mod 2^64 over any codes (taken mod 2^64), as signed int64."""
    total = 0
    for j, c in enumerate(codes):
        total += to_unsigned(c) * _power(len(codes) - 1 - j)
    return to_signed(total * HASH_BASE)


def word_fingerprint(text: str, k: int, w: int, robust: bool = True) -> tuple[list[int], list[int]]:
    """Fingerprints of the word unit: k-grams of word codes, positions at their first word."""
    found = words(text)
    codes = [word_code(word) for word, _, _ in found]
    hashes = [codes_hash(codes[i : i + k]) for i in range(len(codes) - k + 1)]
    chosen = winnow(hashes, w, robust)
    return [hashes[i] for i in chosen], [found[i][1] for i in chosen]


def copied_word_spans(text_a: str, text_b: str, k: int, w: int) -> set[tuple[int, int, int, int, int]]:
    """copied_spans in words: maximal runs of equal words around every shared word fingerprint."""
    wa, wb = words(text_a), words(text_b)
    ha, pa = word_fingerprint(text_a, k, w)
    hb, pb = word_fingerprint(text_b, k, w)
    xa = [x for x, _, _ in wa]
    xb = [x for x, _, _ in wb]
    starts_a = [s for _, s, _ in wa]
    starts_b = [s for _, s, _ in wb]
    spans = set()
    for x, p in zip(ha, pa):
        for y, q in zip(hb, pb):
            i, j = starts_a.index(p), starts_b.index(q)
            if x != y or xa[i : i + k] != xb[j : j + k]:
                continue
            s, t, e, f = _maximal(xa, xb, i, j, k)
            spans.add((wa[s][1], wa[e - 1][2], wb[t][1], wb[f - 1][2], e - s))
    return spans


def windows(m: int, w: int) -> list[tuple[int, int]]:
    """The windows [lo, hi] (inclusive): all of length w, or the whole sequence if shorter."""
    if m == 0:
        return []
    if m < w:
        return [(0, m - 1)]
    return [(i, i + w - 1) for i in range(m - w + 1)]


def rightmost_min(hashes: list[int], lo: int, hi: int) -> int:
    low = min(hashes[lo : hi + 1])
    best = -1
    for j in range(lo, hi + 1):
        if hashes[j] == low:
            best = j
    return best


def window_selections(hashes: list[int], w: int, robust: bool) -> list[int]:
    """The index each window selects, one entry per window (repeats included)."""
    hashes = [int(h) for h in hashes]
    picks: list[int] = []
    for lo, hi in windows(len(hashes), w):
        low = min(hashes[lo : hi + 1])
        if robust and picks and lo <= picks[-1] <= hi and hashes[picks[-1]] == low:
            picks.append(picks[-1])
        else:
            picks.append(rightmost_min(hashes, lo, hi))
    return picks


def winnow(hashes: list[int], w: int, robust: bool = True) -> list[int]:
    """Distinct selections in window order: a new entry whenever a window's pick changes."""
    out: list[int] = []
    for pick in window_selections(hashes, w, robust):
        if not out or out[-1] != pick:
            out.append(pick)
    return out


def select_mod_p(hashes: list[int], p: int) -> list[int]:
    return [i for i, h in enumerate(hashes) if to_unsigned(int(h)) % p == 0]


def fingerprint(text: str, k: int, w: int, robust: bool = True, mod_p: int = 0) -> tuple[list[int], list[int]]:
    hashes, starts = kgram_hashes(text, k)
    chosen = select_mod_p(hashes, mod_p) if mod_p > 0 else winnow(hashes, w, robust)
    return [hashes[i] for i in chosen], [starts[i] for i in chosen]


def _maximal(xa, xb, i: int, j: int, k: int) -> tuple[int, int, int, int]:
    """The match of xa[i:i + k] and xb[j:j + k] grown one unit at a time in both directions:
    (start_a, start_b, end_a, end_b)."""
    s, t = i, j
    while s > 0 and t > 0 and xa[s - 1] == xb[t - 1]:
        s, t = s - 1, t - 1
    e, f = i + k, j + k
    while e < len(xa) and f < len(xb) and xa[e] == xb[f]:
        e, f = e + 1, f + 1
    return s, t, e, f


def copied_spans(text_a: str, text_b: str, k: int, w: int) -> set[tuple[int, int, int, int, int]]:
    """Every maximal common normalized span that contains a shared fingerprint of both texts.

    Brute force: for every pair of fingerprints with equal hashes whose normalized k-grams are
    equal, grow the match one character at a time in both directions. Returns spans as
    (start_a, end_a, start_b, end_b, length) with original-text offsets, end exclusive.
    """
    na, offs_a = normalize(text_a)
    nb, offs_b = normalize(text_b)
    ha, pa = fingerprint(text_a, k, w)
    hb, pb = fingerprint(text_b, k, w)
    spans = set()
    for x, p in zip(ha, pa):
        for y, q in zip(hb, pb):
            if x != y:
                continue
            i = offs_a.index(p)
            j = offs_b.index(q)
            if na[i : i + k] != nb[j : j + k]:
                continue
            s, t, e, f = _maximal(na, nb, i, j, k)
            spans.add((offs_a[s], offs_a[e - 1] + 1, offs_b[t], offs_b[f - 1] + 1, e - s))
    return spans


def pair_seeds(rows: list[tuple[int, int, int]], max_df: int) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """Per document pair (a < b): (hash, pos_a, pos_b) of every two fingerprints (doc, hash, pos)
    with the same hash, for hashes in 2..max_df documents; the definition of pairing."""
    docs_of: dict[int, set[int]] = {}
    for doc, h, _ in rows:
        docs_of.setdefault(h, set()).add(doc)
    out: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for da, ha, pa in rows:
        for db, hb, pb in rows:
            if ha == hb and da < db and len(docs_of[ha]) <= max_df:
                out.setdefault((da, db), []).append((ha, pa, pb))
    return out


def longest_gap(selected: list[int], n: int) -> int:
    """The longest run of consecutive indices in range(n) none of which is in selected."""
    chosen, best, run = set(selected), 0, 0
    for i in range(n):
        run = 0 if i in chosen else run + 1
        best = max(best, run)
    return best


def unselected_windows(selected: list[int], n: int, w: int) -> tuple[int, int]:
    """Every window [i, i + w) in range(n) checked for a selected index, one by one."""
    chosen = set(selected)
    starts = range(n - w + 1)
    return sum(1 for i in starts if not any(j in chosen for j in range(i, i + w))), len(starts)


def pairs_under_cap(rows: list[tuple[int, int]], cap: int, min_shared: int) -> set[tuple[int, int]]:
    """Document pairs sharing at least min_shared distinct hashes that are in 2..cap documents,
    from (hash, doc) rows: every hash's documents, every two of them, counted."""
    docs_of: dict[int, set[int]] = {}
    for h, d in rows:
        docs_of.setdefault(h, set()).add(d)
    shared: dict[tuple[int, int], int] = {}
    for docs in docs_of.values():
        if 2 <= len(docs) <= cap:
            for a in docs:
                for b in docs:
                    if a < b:
                        shared[(a, b)] = shared.get((a, b), 0) + 1
    return {p for p, n in shared.items() if n >= min_shared}


def doc_frequency_counts(per_doc_hashes: list[list[int]]) -> dict[int, int]:
    """(document frequency -> distinct hashes with it) by counting each document's set."""
    df: dict[int, int] = {}
    for hashes in per_doc_hashes:
        for h in set(hashes):
            df[h] = df.get(h, 0) + 1
    out: dict[int, int] = {}
    for n in df.values():
        out[n] = out.get(n, 0) + 1
    return out


def components_of(edges: list[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Per node on an edge, (its component's smallest node, the component's size), by flood fill."""
    adjacency: dict[int, set[int]] = {}
    for x, y in edges:
        adjacency.setdefault(x, set()).add(y)
        adjacency.setdefault(y, set()).add(x)
    found: dict[int, tuple[int, int]] = {}
    for node in adjacency:
        if node in found:
            continue
        seen, stack = {node}, [node]
        while stack:
            for nxt in adjacency[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        for member in seen:
            found[member] = (min(seen), len(seen))
    return found


def stable_order(*columns: list[int]) -> list[int]:
    """The row numbers in order of the columns' values, first column first; rows equal on
    every column in their own order (Python's sort is stable)."""
    return sorted(range(len(columns[0])), key=lambda i: tuple(c[i] for c in columns))
