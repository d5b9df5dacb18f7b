"""Units: what a k-gram counts. Normalized characters (the default), words, or code tokens.

Every unit turns a text into a sequence of integer codes, each with the character range
[start, end) of the original text it came from; k-grams of codes are hashed and winnowed the
same way whatever the unit, and a fingerprint's position is the start of its k-gram's first unit.

* ``char``: one code per normalized character (webwinnow.core.charfold); start = end - 1 = the
  offset of the original character it folds from.
* ``word``: one code per word. A word is a maximal run of normalized characters that come from
  consecutive original characters (nothing dropped between them: a space, a hyphen or an
  apostrophe ends a word), except that each Han ideograph and each kana is a word of its own
  (Chinese and Japanese write no spaces; search engines index them the same way, as unigrams).
  Its code is a 64-bit hash of its normalized characters, so equal words have equal codes
  whatever their case, accents or compatibility forms. Runs of Thai, Lao, Khmer or Myanmar
  letters (no spaces either, but no split without a dictionary) are one word each.
* ``code``: tokens of program code (webwinnow.core.codetokens): identifiers and literals
  normalized, so renaming a variable does not hide a copy.

The guarantee holds in the unit: any shared run of at least t = w + k - 1 codes yields a shared
fingerprint, and no run shorter than k codes matches. Words and tokens are split the same way
in a window of a text (cut at unit boundaries) as in the whole text, which the passages stage
relies on for words; its code windows carry the tokens their page's lexing made (a lexer's state
depends on what precedes in a block). Each unit's default k and w: webwinnow.config.UNITS.
"""

from __future__ import annotations

import numpy as np

from .jit import JIT_OPTIONS, njit

CHAR, WORD, CODE = 0, 1, 2
UNITS = ("char", "word", "code")
#: What the tables' counts of normalized units (norm_chars, length, content_chars...) count.
NOUNS = {"char": "normalized characters", "word": "words", "code": "code tokens"}

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_u = np.uint64  # an index known to be >= 0, as unsigned (see core.kernel)


def unit_number(unit: str) -> int:
    """The kernels' number for a unit name."""
    try:
        return UNITS.index(unit)
    except ValueError:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}") from None


@njit(**JIT_OPTIONS)
def _alone(cp):
    """Whether a normalized code point is a word of its own: kana and Han ideographs."""
    return (
        0x3040 <= cp <= 0x30FF
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
    )


@njit(**JIT_OPTIONS)
def _finish(h):
    """SplitMix64's finalizer: FNV-1a alone leaves the low bits of short words weakly mixed."""
    h = (h ^ (h >> _S30)) * _MIX1
    h = (h ^ (h >> _S27)) * _MIX2
    return np.int64(h ^ (h >> _S31))


@njit(**JIT_OPTIONS)
def _words_into(chars, offsets, n, codes, starts, ends):
    """The words of the normalized characters chars[:n] (offsets: each one's original offset)
    into codes/starts/ends (room for n entries); returns their count.

    One pass: a word's code (FNV-1a over its code points, then _finish) is made while its end is
    sought. Below U+3040 no character stands alone, which spares most texts the range tests.
    """
    count = 0
    i = 0
    while i < n:
        c = chars[_u(i)]
        h = (_FNV_OFFSET ^ np.uint64(c)) * _FNV_PRIME
        j = i + 1
        if c < 0x3040 or not _alone(c):
            prev = offsets[_u(i)]
            while j < n:
                cj = chars[_u(j)]
                at = offsets[_u(j)]
                if at - prev > 1 or (cj >= 0x3040 and _alone(cj)):
                    break
                h = (h ^ np.uint64(cj)) * _FNV_PRIME
                prev = at
                j += 1
        codes[_u(count)] = _finish(h)
        starts[_u(count)] = offsets[_u(i)]
        ends[_u(count)] = offsets[_u(j - 1)] + 1
        count += 1
        i = j
    return count


@njit(**JIT_OPTIONS)
def _words(chars, offsets):
    n = chars.shape[0]
    codes = np.empty(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    count = _words_into(chars, offsets, n, codes, starts, ends)
    return codes[:count], starts[:count], ends[:count]
