"""Numba kernels: normalize, hash k-grams, winnow. Typed arrays in, arrays out; no I/O, no globals.

Every kernel works on one document held in reusable scratch arrays, so the batch kernel makes no
allocation per document and a batch of many documents costs one call from Python. The public,
validating wrappers live in :mod:`webwinnow.fingerprint`.

Positions are code-point offsets into the original text (what Python's ``str`` indexing and
Spark's ``substring`` count), decoded here from the UTF-8 bytes Arrow stores.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Odd, so multiplication by it is a bijection on 64-bit words; its high bits are dense, so every
# character of a k-gram reaches every bit of the hash within one multiplication.
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)

_REPLACEMENT = 0xFFFD


@njit(cache=True, nogil=True)
def _decode_utf8(data, i, end):
    """Code point at data[i] and the index after it; malformed bytes read as U+FFFD, one byte each."""
    b0 = np.int64(data[i])
    if b0 < 0x80:
        return b0, i + 1
    if b0 >= 0xC2 and b0 < 0xE0 and i + 1 < end:
        b1 = np.int64(data[i + 1])
        if b1 & 0xC0 == 0x80:
            return ((b0 & 0x1F) << 6) | (b1 & 0x3F), i + 2
    elif b0 >= 0xE0 and b0 < 0xF0 and i + 2 < end:
        b1 = np.int64(data[i + 1])
        b2 = np.int64(data[i + 2])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80:
            cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
            if cp >= 0x800 and not (0xD800 <= cp <= 0xDFFF):
                return cp, i + 3
            if 0xD800 <= cp <= 0xDFFF:  # a lone surrogate (Python's surrogatepass): one character
                return np.int64(_REPLACEMENT), i + 3
    elif b0 >= 0xF0 and b0 < 0xF5 and i + 3 < end:
        b1 = np.int64(data[i + 1])
        b2 = np.int64(data[i + 2])
        b3 = np.int64(data[i + 3])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80 and b3 & 0xC0 == 0x80:
            cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
            if cp >= 0x10000 and cp <= 0x10FFFF:
                return cp, i + 4
    return np.int64(_REPLACEMENT), i + 1


@njit(cache=True, nogil=True)
def _normalize_into(data, start, end, fold, expand, codes, offsets):
    """Fold data[start:end] (UTF-8) into codes/offsets; returns the count, or -1 if they are too small.

    offsets[j] is the code-point index, in the original text, of the character codes[j] came from.
    codes/offsets need room for one entry per byte plus one: a dropped character is written and
    then overwritten, because a data-dependent branch here costs more than the store.
    """
    cap = codes.shape[0]
    if cap < end - start + 1:
        return -1
    n = 0
    char_index = 0
    i = start
    while i < end:
        if data[i] < 0x80:  # ASCII inline: a call per character would cost 5x
            cp = np.int64(data[i])
            i += 1
        else:
            cp, i = _decode_utf8(data, i, end)
        f = fold[cp]
        if f >= 0:
            codes[n] = f
            offsets[n] = char_index
            n += f != 0
        else:
            e = -f - 1
            length = expand[e]
            if n + length + (end - i) + 1 > cap:
                return -1
            for j in range(length):
                codes[n] = expand[e + 1 + j]
                offsets[n] = char_index
                n += 1
        char_index += 1
    return n


@njit(cache=True, nogil=True)
def _kgram_hashes_into(codes, n, k, out):
    """Karp-Rabin hashes of the n - k + 1 k-grams of codes[:n], into out; returns their count.

    The paper's variant: H = (c_1 b^(k-1) + ... + c_k) * b mod 2^64; the final multiplication lets
    the last character reach the high bits too, which decide the minimum a window selects.
    Rolled as H' = H b + (c_in b - c_out b^(k+1)): the term in parentheses does not depend on H,
    so the loop-carried chain is one multiply-add.
    """
    m = n - k + 1
    if m <= 0:
        return 0
    b = HASH_BASE
    leave = np.uint64(1)  # b^(k+1): the weight of the character leaving the k-gram
    for _ in range(k + 1):
        leave = leave * b
    h = np.uint64(0)
    for j in range(k):
        h = h * b + np.uint64(codes[j])
    h = h * b
    out[0] = np.int64(h)
    for j in range(1, m):
        h = h * b + (np.uint64(codes[j + k - 1]) * b - np.uint64(codes[j - 1]) * leave)
        out[j] = np.int64(h)
    return m


@njit(cache=True, nogil=True)
def _winnow_into(hashes, m, w, robust, selected):
    """Indices of the fingerprints winnowing selects from hashes[:m], into selected; returns count.

    Invariant: ``best`` is the selected minimum of the window [i - w + 1, i] and ``low`` its
    value: the rightmost minimum, or under robust winnowing the earlier selection on a tie.
    A smaller (standard: or equal) newcomer is the new rightmost minimum at once; otherwise the
    window is rescanned only when the selection leaves it (the paper's circular buffer,
    O(1) amortized on random input), as a min-reduction that vectorizes, then a search for its
    rightmost occurrence. Fewer than w hashes form a single window.
    """
    if m <= 0:
        return 0
    first = min(w, m)
    low = hashes[0]
    for j in range(1, first):
        low = min(low, hashes[j])
    best = first - 1
    while hashes[best] != low:
        best -= 1
    selected[0] = best
    count = 1
    for i in range(first, m):
        h = hashes[i]
        if h < low or (not robust and h == low):
            best = i
            low = h
            selected[count] = best
            count += 1
        elif best <= i - w:
            lo = i - w + 1
            low = hashes[lo]
            for j in range(lo + 1, i + 1):
                low = min(low, hashes[j])
            best = i
            while hashes[best] != low:
                best -= 1
            selected[count] = best
            count += 1
    return count


@njit(cache=True, nogil=True)
def _mod_p_into(hashes, m, p, selected):
    """The paper's baseline: every k-gram whose hash is 0 mod p (as an unsigned 64-bit value)."""
    count = 0
    up = np.uint64(p)
    for i in range(m):
        if np.uint64(hashes[i]) % up == 0:
            selected[count] = i
            count += 1
    return count


@njit(cache=True, nogil=True)
def _grow(a, need):
    size = a.shape[0]
    while size < need:
        size *= 2
    out = np.empty(size, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _fingerprint_batch(data, starts, ends, fold, expand, k, w, robust, mod_p):
    """Fingerprints of texts data[starts[d]:ends[d]] (UTF-8) for every document d.

    Each document is normalized, hashed and winnowed in scratch arrays reused across the batch
    (sized for the longest document), so the batch allocates nothing per document. mod_p > 0
    selects by 0 mod p instead of winnowing. Returns (doc, hash, pos, norm_chars, kgrams,
    fingerprints): the first three per fingerprint, the last three per document.
    """
    ndocs = starts.shape[0]
    norm_chars = np.zeros(ndocs, dtype=np.int64)
    kgrams = np.zeros(ndocs, dtype=np.int64)
    nfp = np.zeros(ndocs, dtype=np.int64)
    longest = 0
    total = 0
    for d in range(ndocs):
        size = ends[d] - starts[d]
        total += size
        longest = max(longest, size)
    scratch = longest + 64
    codes = np.empty(scratch, dtype=np.int32)
    offsets = np.empty(scratch, dtype=np.int64)
    hashes = np.empty(scratch, dtype=np.int64)
    selected = np.empty(scratch, dtype=np.int64)
    cap = max(1024, 3 * total // (w + 1) + 64)
    out_doc = np.empty(cap, dtype=np.int64)
    out_hash = np.empty(cap, dtype=np.int64)
    out_pos = np.empty(cap, dtype=np.int64)
    n_out = 0
    for d in range(ndocs):
        n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        while n < 0:  # expansions (ß → ss, ﷺ → 18 letters) outgrew the scratch arrays
            scratch *= 2
            codes = np.empty(scratch, dtype=np.int32)
            offsets = np.empty(scratch, dtype=np.int64)
            hashes = np.empty(scratch, dtype=np.int64)
            selected = np.empty(scratch, dtype=np.int64)
            n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        m = _kgram_hashes_into(codes, n, k, hashes)
        if mod_p > 0:
            s = _mod_p_into(hashes, m, mod_p, selected)
        else:
            s = _winnow_into(hashes, m, w, robust, selected)
        if n_out + s > out_doc.shape[0]:
            out_doc = _grow(out_doc, n_out + s)
            out_hash = _grow(out_hash, n_out + s)
            out_pos = _grow(out_pos, n_out + s)
        for j in range(s):
            out_doc[n_out + j] = d
            out_hash[n_out + j] = hashes[selected[j]]
            out_pos[n_out + j] = offsets[selected[j]]
        n_out += s
        norm_chars[d] = n
        kgrams[d] = m
        nfp[d] = s
    return out_doc[:n_out], out_hash[:n_out], out_pos[:n_out], norm_chars, kgrams, nfp


@njit(cache=True, nogil=True)
def _normalize(data, fold, expand):
    """Normalized code points and their original offsets for one UTF-8 text."""
    size = data.shape[0] + 64
    codes = np.empty(size, dtype=np.int32)
    offsets = np.empty(size, dtype=np.int64)
    n = _normalize_into(data, 0, data.shape[0], fold, expand, codes, offsets)
    while n < 0:
        size *= 2
        codes = np.empty(size, dtype=np.int32)
        offsets = np.empty(size, dtype=np.int64)
        n = _normalize_into(data, 0, data.shape[0], fold, expand, codes, offsets)
    return codes[:n], offsets[:n]


@njit(cache=True, nogil=True)
def _kgram_hashes(codes, k):
    out = np.empty(max(codes.shape[0] - k + 1, 0), dtype=np.int64)
    _kgram_hashes_into(codes, codes.shape[0], k, out)
    return out


@njit(cache=True, nogil=True)
def _winnow(hashes, w, robust):
    selected = np.empty(hashes.shape[0], dtype=np.int64)
    count = _winnow_into(hashes, hashes.shape[0], w, robust, selected)
    return selected[:count]


@njit(cache=True, nogil=True)
def _mod_p(hashes, p):
    selected = np.empty(hashes.shape[0], dtype=np.int64)
    count = _mod_p_into(hashes, hashes.shape[0], p, selected)
    return selected[:count]
