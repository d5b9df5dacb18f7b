"""Numba kernels: normalize, hash k-grams, winnow. Typed arrays in, arrays out; no I/O, no globals.

Every kernel works on one document held in reusable scratch arrays, so a batch of many documents
costs one call from Python and allocates only per long document (the k-gram hash's step terms,
``_kgram_hashes_into``). The public, validating wrappers live in :mod:`webwinnow.core.winnowing`.

Positions are code-point offsets into the original text (what Python's ``str`` indexing and
Spark's ``substring`` count), decoded here from the UTF-8 bytes Arrow stores.

Speed notes (measured with ``bench/bench_kernel.py``):

* Numba wraps a negative signed index around (``a[-1]``), which costs three instructions per
  access and stops LLVM from vectorizing the loop; the inner loops therefore index with
  ``_u(i)``, an unsigned copy of an index known to be non-negative, for which Numba emits a
  plain load. This alone doubled the winnowing speed.
* ASCII text is folded a block at a time by a branch-free loop (see ``_normalize_into``).
* Hashing rolls several independent chains side by side, so the multiplier rather than the
  latency of one multiply-add chain bounds it (see ``_kgram_hashes_into``).
* The batch keeps offsets as int32 while they fit (4 bytes per character instead of 8).
"""

from __future__ import annotations

import numpy as np

from .jit import JIT_OPTIONS, njit
from .units import WORD, _words_into

# Odd, so multiplication by it is a bijection on 64-bit words; its high bits are dense, so every
# character of a k-gram reaches every bit of the hash within one multiplication.
HASH_BASE = np.uint64(0x9E3779B97F4A7C15)

_REPLACEMENT = 0xFFFD

# Normalization reads the text in blocks of this many bytes: an ASCII block runs a branch-free
# loop, any other block the general UTF-8 decoder. Web text is mostly ASCII with a non-ASCII
# character here and there (an accent, a typographic quote, a non-breaking space): the docs
# corpus's pages have 0.8% non-ASCII bytes, yet one 32-byte block in ten holds one, and each such
# block went through the decoder whole. 16 bytes: 1.10 -> 0.89 ns a byte over the corpus's texts,
# 1.31 -> 1.07 over the passages stage's b windows; pure ASCII and CJK-heavy text as fast or
# faster (8 and 12 bytes: no better).
_ASCII_BLOCK = 16

# Hashing runs this many independent rolling chains over consecutive segments of a document once
# every segment is at least this many k-grams long (each chain starts with a k-step warm-up).
_HASH_CHAINS = 4  # written out as h0..h3 in _kgram_hashes_into
_MIN_SEGMENT = 256
_HASH_STEP = 256  # d terms computed ahead per segment (4 x 2 KB, in L1)

# Offsets are stored as int32 while every document is shorter than this many bytes.
_INT32_DOC = 2**31 - 64

_u = np.uint64  # an index known to be >= 0, as unsigned: Numba skips the negative-index fix-up


@njit(**JIT_OPTIONS)
def _decode_utf8(data, i, end):
    """Code point at data[i] and the index after it; malformed bytes read as U+FFFD, one byte each.

    i and end must be >= 0.
    """
    b0 = np.int64(data[_u(i)])
    if b0 < 0x80:
        return b0, i + 1
    if b0 >= 0xC2 and b0 < 0xE0 and i + 1 < end:
        b1 = np.int64(data[_u(i + 1)])
        if b1 & 0xC0 == 0x80:
            return ((b0 & 0x1F) << 6) | (b1 & 0x3F), i + 2
    elif b0 >= 0xE0 and b0 < 0xF0 and i + 2 < end:
        b1 = np.int64(data[_u(i + 1)])
        b2 = np.int64(data[_u(i + 2)])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80:
            cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
            if cp >= 0x800 and not (0xD800 <= cp <= 0xDFFF):
                return cp, i + 3
            if 0xD800 <= cp <= 0xDFFF:  # a lone surrogate (Python's surrogatepass): one character
                return np.int64(_REPLACEMENT), i + 3
    elif b0 >= 0xF0 and b0 < 0xF5 and i + 3 < end:
        b1 = np.int64(data[_u(i + 1)])
        b2 = np.int64(data[_u(i + 2)])
        b3 = np.int64(data[_u(i + 3)])
        if b1 & 0xC0 == 0x80 and b2 & 0xC0 == 0x80 and b3 & 0xC0 == 0x80:
            cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
            if cp >= 0x10000 and cp <= 0x10FFFF:
                return cp, i + 4
    return np.int64(_REPLACEMENT), i + 1


@njit(**JIT_OPTIONS)
def _ascii_folds_simply(fold):
    """Whether no ASCII character expands, so an ASCII block can take the branch-free path."""
    low = fold[0]
    for c in range(1, 128):
        low = min(low, fold[c])
    return low >= 0


@njit(**JIT_OPTIONS)
def _normalize_into(data, start, end, fold, expand, codes, offsets):
    """Fold data[start:end] (UTF-8) into codes/offsets; returns the count, or -1 if they are too small.

    offsets[j] is the code-point index, in the original text, of the character codes[j] came from.
    codes/offsets need room for one entry per byte plus one: a dropped character is written and
    then overwritten, because a data-dependent branch here costs more than the store.

    The text is read in blocks of _ASCII_BLOCK bytes. While blocks are ASCII, each is folded by a
    branch-free loop that ORs its bytes on the way, and rolled back (n reset) to take the general
    UTF-8 decoder if one of them turns out not to be ASCII; after such a block, the next one is
    tested before it is folded, so non-Latin text does not pay for the fast path twice.
    """
    cap = codes.shape[0]
    size = end - start
    if cap < size + 1:
        return -1
    doc = data[start:end]
    fast = _ascii_folds_simply(fold)
    guess_ascii = True
    n = 0
    char_index = 0
    i = 0
    while i < size:
        stop = size
        if i + _ASCII_BLOCK <= size and fast:
            stop = i + _ASCII_BLOCK
            if guess_ascii:
                n0 = n
                bits = 0
                for j in range(_ASCII_BLOCK):
                    byte = doc[_u(i + j)]
                    bits |= byte
                    f = fold[byte]
                    codes[_u(n)] = f
                    offsets[_u(n)] = char_index + j
                    n += f != 0
                if bits < 0x80:
                    i = stop
                    char_index += _ASCII_BLOCK
                    continue
                n = n0
                guess_ascii = False
            else:
                bits = 0
                for j in range(_ASCII_BLOCK):
                    bits |= doc[_u(i + j)]
                if bits < 0x80:
                    for j in range(_ASCII_BLOCK):
                        f = fold[doc[_u(i + j)]]
                        codes[_u(n)] = f
                        offsets[_u(n)] = char_index + j
                        n += f != 0
                    i = stop
                    char_index += _ASCII_BLOCK
                    guess_ascii = True
                    continue
        while i < stop:  # the general decoder, up to the block's end (a character may straddle it)
            cp, i = _decode_utf8(doc, i, size)
            f = fold[_u(cp)]
            if f >= 0:
                codes[_u(n)] = f
                offsets[_u(n)] = char_index
                n += f != 0
            else:
                e = -f - 1
                length = expand[_u(e)]
                if n + length + (size - i) + 1 > cap:
                    return -1
                for j in range(length):
                    codes[_u(n)] = expand[_u(e + 1 + j)]
                    offsets[_u(n)] = char_index
                    n += 1
            char_index += 1
    return n


@njit(**JIT_OPTIONS)
def _roll(codes, first, last, k, bk, h, out):
    """Continue the rolling hash h of the k-gram at first through the k-gram at last, into out."""
    b = HASH_BASE
    for j in range(first, last):
        h = (h + (np.uint64(codes[_u(j + k)]) - np.uint64(codes[_u(j)]) * bk)) * b
        out[_u(j + 1)] = np.int64(h)
    return h


@njit(**JIT_OPTIONS)
def _kgram_hash(codes, p, k):
    """Hash of the k-gram at p, from its definition."""
    b = HASH_BASE
    g = np.uint64(0)
    for i in range(k):
        g = g * b + np.uint64(codes[_u(p + i)])
    return g * b


@njit(**JIT_OPTIONS)
def _kgram_hashes_into(codes, n, k, out):
    """Karp-Rabin hashes of the n - k + 1 k-grams of codes[:n], into out; returns their count.

    The paper's variant: H = (c_1 b^(k-1) + ... + c_k) * b mod 2^64; the final multiplication lets
    the last character reach the high bits too, which decide the minimum a window selects.
    Rolled as H' = (H + d) b with d = c_in - c_out b^k: one multiplication on the loop-carried
    chain. That chain (~4 cycles) bounds a single pass, so long texts are cut into
    _HASH_CHAINS segments rolled side by side in one loop, each started from the definition;
    the d terms do not depend on H and are computed ahead, _HASH_STEP at a time per segment,
    by a loop that vectorizes.
    """
    m = n - k + 1
    if m <= 0:
        return 0
    b = HASH_BASE
    bk = np.uint64(1)  # b^k: the weight of the character leaving the k-gram, before the final b
    for _ in range(k):
        bk = bk * b
    seg = m // _HASH_CHAINS
    if seg < _MIN_SEGMENT or seg < 4 * k:
        h = _kgram_hash(codes, 0, k)
        out[0] = np.int64(h)
        _roll(codes, 0, m - 1, k, bk, h, out)
        return m
    p1 = seg
    p2 = 2 * seg
    p3 = 3 * seg
    h0 = _kgram_hash(codes, 0, k)
    h1 = _kgram_hash(codes, p1, k)
    h2 = _kgram_hash(codes, p2, k)
    h3 = _kgram_hash(codes, p3, k)
    out[0] = np.int64(h0)
    out[_u(p1)] = np.int64(h1)
    out[_u(p2)] = np.int64(h2)
    out[_u(p3)] = np.int64(h3)
    d = np.empty(_HASH_CHAINS * _HASH_STEP, dtype=np.uint64)
    j0 = 0
    while j0 < seg - 1:
        count = min(_HASH_STEP, seg - 1 - j0)
        for s in range(_HASH_CHAINS):
            at = s * seg + j0
            row = s * _HASH_STEP
            for t in range(count):
                d[_u(row + t)] = np.uint64(codes[_u(at + t + k)]) - np.uint64(codes[_u(at + t)]) * bk
        for t in range(count):
            j = j0 + t
            h0 = (h0 + d[_u(t)]) * b
            h1 = (h1 + d[_u(_HASH_STEP + t)]) * b
            h2 = (h2 + d[_u(2 * _HASH_STEP + t)]) * b
            h3 = (h3 + d[_u(3 * _HASH_STEP + t)]) * b
            out[_u(j + 1)] = np.int64(h0)
            out[_u(p1 + j + 1)] = np.int64(h1)
            out[_u(p2 + j + 1)] = np.int64(h2)
            out[_u(p3 + j + 1)] = np.int64(h3)
        j0 += count
    _roll(codes, p3 + seg - 1, m - 1, k, bk, h3, out)
    return m


@njit(**JIT_OPTIONS)
def _rightmost_min(hashes, lo, hi):
    """(index, value) of the rightmost minimum of hashes[lo:hi + 1], 0 <= lo <= hi.

    A min-reduction, which vectorizes, then a search back for its rightmost occurrence.
    """
    window = hashes[lo : hi + 1]
    low = window[0]
    for j in range(1, window.shape[0]):
        low = min(low, window[j])
    best = hi
    while hashes[_u(best)] != low:
        best -= 1
    return best, low


@njit(**JIT_OPTIONS)
def _winnow_into(hashes, m, w, robust, selected):
    """Indices of the fingerprints winnowing selects from hashes[:m], into selected; returns count.

    Invariant: ``best`` is the selected minimum of the window [i - w + 1, i] and ``low`` its
    value: the rightmost minimum, or under robust winnowing the earlier selection on a tie.
    A smaller (standard: or equal) newcomer is the new rightmost minimum at once; otherwise the
    window is rescanned only when the selection leaves it (the paper's circular buffer,
    O(1) amortized on random input). The scan runs to the next event, whichever comes first:
    a new minimum, or the step where the selection leaves the window (``best + w``).
    Fewer than w hashes form a single window.
    """
    if m <= 0:
        return 0
    first = min(w, m)
    best, low = _rightmost_min(hashes, 0, first - 1)
    selected[0] = best
    count = 1
    i = first
    while i < m:
        deadline = min(best + w, m)
        if robust:
            while i < deadline and hashes[_u(i)] >= low:
                i += 1
        else:
            while i < deadline and hashes[_u(i)] > low:
                i += 1
        if i == m:
            break
        if i < deadline:
            best = i
            low = hashes[_u(i)]
        else:
            best, low = _rightmost_min(hashes, i - w + 1, i)
        selected[_u(count)] = best
        count += 1
        i += 1
    return count


@njit(**JIT_OPTIONS)
def _mod_p_into(hashes, m, p, selected):
    """The paper's baseline: every k-gram whose hash is 0 mod p (as an unsigned 64-bit value)."""
    count = 0
    up = np.uint64(p)
    for i in range(m):
        if np.uint64(hashes[i]) % up == 0:
            selected[_u(count)] = i
            count += 1
    return count


@njit(**JIT_OPTIONS)
def _grow(a, need):
    size = a.shape[0]
    while size < need:
        size *= 2
    out = np.empty(size, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(**JIT_OPTIONS)
def _select_into(hashes, m, w, robust, mod_p, selected, positions, base, d, out_doc, out_hash, out_pos, n_out):
    """Select document d's fingerprints from hashes[:m] (winnowing, or 0 mod p when mod_p > 0)
    and append them from out_*[n_out] on, the k-gram at i starting at positions[base + i];
    returns (count, out_doc, out_hash, out_pos), the arrays grown when they were full."""
    if mod_p > 0:
        s = _mod_p_into(hashes, m, mod_p, selected)
    else:
        s = _winnow_into(hashes, m, w, robust, selected)
    if n_out + s > out_doc.shape[0]:
        out_doc = _grow(out_doc, n_out + s)
        out_hash = _grow(out_hash, n_out + s)
        out_pos = _grow(out_pos, n_out + s)
    for j in range(s):
        at = selected[_u(j)]
        out_doc[_u(n_out + j)] = d
        out_hash[_u(n_out + j)] = hashes[_u(at)]
        out_pos[_u(n_out + j)] = positions[_u(base + at)]
    return s, out_doc, out_hash, out_pos


@njit(**JIT_OPTIONS)
def _fingerprint_docs(data, starts, ends, fold, expand, k, w, robust, mod_p, unit, total, codes, offsets):
    """The body of _fingerprint_batch, given scratch codes/offsets (offsets int32 or int64)."""
    ndocs = starts.shape[0]
    norm_chars = np.zeros(ndocs, dtype=np.int64)
    kgrams = np.zeros(ndocs, dtype=np.int64)
    nfp = np.zeros(ndocs, dtype=np.int64)
    scratch = codes.shape[0]
    hashes = np.empty(scratch, dtype=np.int64)
    selected = np.empty(scratch, dtype=np.int64)
    cap = max(1024, 3 * total // (w + 1) + 64)
    out_doc = np.empty(cap, dtype=np.int64)
    out_hash = np.empty(cap, dtype=np.int64)
    out_pos = np.empty(cap, dtype=np.int64)
    # words (unit WORD): codes, first and last offsets, from the normalized characters
    word_codes = np.empty(scratch if unit == WORD else 0, dtype=np.int64)
    word_starts = np.empty(scratch if unit == WORD else 0, dtype=np.int64)
    word_ends = np.empty(scratch if unit == WORD else 0, dtype=np.int64)
    n_out = 0
    for d in range(ndocs):
        n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        while n < 0:  # expansions (ß → ss, ﷺ → 18 letters) outgrew the scratch arrays
            scratch *= 2
            codes = np.empty(scratch, dtype=np.int32)
            offsets = np.empty(scratch, dtype=offsets.dtype)
            hashes = np.empty(scratch, dtype=np.int64)
            selected = np.empty(scratch, dtype=np.int64)
            if unit == WORD:
                word_codes = np.empty(scratch, dtype=np.int64)
                word_starts = np.empty(scratch, dtype=np.int64)
                word_ends = np.empty(scratch, dtype=np.int64)
            n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        if unit == WORD:
            n = _words_into(codes, offsets, n, word_codes, word_starts, word_ends)
            m = _kgram_hashes_into(word_codes, n, k, hashes)
            s, out_doc, out_hash, out_pos = _select_into(
                hashes, m, w, robust, mod_p, selected, word_starts, 0, d, out_doc, out_hash, out_pos, n_out
            )
        else:
            m = _kgram_hashes_into(codes, n, k, hashes)
            s, out_doc, out_hash, out_pos = _select_into(
                hashes, m, w, robust, mod_p, selected, offsets, 0, d, out_doc, out_hash, out_pos, n_out
            )
        n_out += s
        norm_chars[d] = n
        kgrams[d] = m
        nfp[d] = s
    return out_doc[:n_out], out_hash[:n_out], out_pos[:n_out], norm_chars, kgrams, nfp


@njit(**JIT_OPTIONS)
def _fingerprint_batch(data, starts, ends, fold, expand, k, w, robust, mod_p, unit):
    """Fingerprints of texts data[starts[d]:ends[d]] (UTF-8) for every document d.

    Each document is normalized (and cut into words when unit is WORD), hashed and winnowed in
    scratch arrays reused across the batch (sized for the longest document), so the batch
    allocates nothing per document. mod_p > 0 selects by 0 mod p instead of winnowing. Returns
    (doc, hash, pos, norm_chars, kgrams, fingerprints): the first three per fingerprint, the
    last three per document (norm_chars counts units). Offsets are kept as int32 while they
    fit, which halves their memory traffic.
    """
    ndocs = starts.shape[0]
    longest = 0
    total = 0
    for d in range(ndocs):
        size = ends[d] - starts[d]
        total += size
        longest = max(longest, size)
    scratch = longest + 64
    codes = np.empty(scratch, dtype=np.int32)
    if longest < _INT32_DOC:
        offsets32 = np.empty(scratch, dtype=np.int32)
        return _fingerprint_docs(data, starts, ends, fold, expand, k, w, robust, mod_p, unit, total, codes, offsets32)
    offsets64 = np.empty(scratch, dtype=np.int64)
    return _fingerprint_docs(data, starts, ends, fold, expand, k, w, robust, mod_p, unit, total, codes, offsets64)


@njit(**JIT_OPTIONS)
def _text_keys(data, starts, ends, fold, expand):
    """(key, normalized length) of each text data[starts[d]:ends[d]] (UTF-8): the key a 63-bit
    hash of its normalized code points (MurmurHash3's block mix over each, its finalizer over
    the length), equal for texts equal after normalization. Scratch arrays reused across texts."""
    ndocs = starts.shape[0]
    longest = 0
    for d in range(ndocs):
        longest = max(longest, ends[d] - starts[d])
    scratch = longest + 64
    codes = np.empty(scratch, dtype=np.int32)
    offsets = np.empty(scratch, dtype=np.int64)
    keys = np.empty(ndocs, dtype=np.int64)
    lengths = np.empty(ndocs, dtype=np.int64)
    c1 = np.uint64(0x87C37B91114253D5)
    c2 = np.uint64(0x4CF5AD432745937F)
    for d in range(ndocs):
        n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        while n < 0:
            scratch *= 2
            codes = np.empty(scratch, dtype=np.int32)
            offsets = np.empty(scratch, dtype=np.int64)
            n = _normalize_into(data, starts[d], ends[d], fold, expand, codes, offsets)
        h = np.uint64(0x9E3779B97F4A7C15)
        for j in range(n):
            b = np.uint64(codes[j]) * c1
            b = ((b << np.uint64(31)) | (b >> np.uint64(33))) * c2
            h ^= b
            h = ((h << np.uint64(27)) | (h >> np.uint64(37))) * np.uint64(5) + np.uint64(0x52DCE729)
        h ^= np.uint64(n)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> np.uint64(33)
        keys[d] = np.int64(h >> np.uint64(1))
        lengths[d] = n
    return keys, lengths


@njit(**JIT_OPTIONS)
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


@njit(**JIT_OPTIONS)
def _kgram_hashes(codes, k):
    out = np.empty(max(codes.shape[0] - k + 1, 0), dtype=np.int64)
    _kgram_hashes_into(codes, codes.shape[0], k, out)
    return out


@njit(**JIT_OPTIONS)
def _winnow(hashes, w, robust):
    selected = np.empty(hashes.shape[0], dtype=np.int64)
    count = _winnow_into(hashes, hashes.shape[0], w, robust, selected)
    return selected[:count]


@njit(**JIT_OPTIONS)
def _mod_p(hashes, p):
    selected = np.empty(hashes.shape[0], dtype=np.int64)
    count = _mod_p_into(hashes, hashes.shape[0], p, selected)
    return selected[:count]


@njit(**JIT_OPTIONS)
def _fingerprint_codes(codes, code_starts, bounds, k, w, robust, mod_p):
    """_fingerprint_batch for units made outside the kernels (code tokens): document d's codes
    are codes[bounds[d]:bounds[d + 1]], each starting at character code_starts[...] of its text."""
    ndocs = bounds.shape[0] - 1
    norm = np.zeros(ndocs, dtype=np.int64)
    kgrams = np.zeros(ndocs, dtype=np.int64)
    nfp = np.zeros(ndocs, dtype=np.int64)
    longest = 1
    for d in range(ndocs):
        longest = max(longest, bounds[d + 1] - bounds[d])
    hashes = np.empty(longest, dtype=np.int64)
    selected = np.empty(longest, dtype=np.int64)
    out_doc = np.empty(max(1024, 3 * codes.shape[0] // (w + 1) + 64), dtype=np.int64)
    out_hash = np.empty(out_doc.shape[0], dtype=np.int64)
    out_pos = np.empty(out_doc.shape[0], dtype=np.int64)
    n_out = 0
    for d in range(ndocs):
        lo = bounds[d]
        n = bounds[d + 1] - lo
        m = _kgram_hashes_into(codes[lo : lo + n], n, k, hashes)
        s, out_doc, out_hash, out_pos = _select_into(
            hashes, m, w, robust, mod_p, selected, code_starts, lo, d, out_doc, out_hash, out_pos, n_out
        )
        n_out += s
        norm[d] = n
        kgrams[d] = m
        nfp[d] = s
    return out_doc[:n_out], out_hash[:n_out], out_pos[:n_out], norm, kgrams, nfp
