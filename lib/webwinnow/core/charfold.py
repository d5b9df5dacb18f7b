"""The character table behind normalization: which code points are kept, and what they fold to.

Normalization keeps letters, combining marks and digits of any script and drops everything
else; kept characters are compatibility-decomposed (NFKC) and casefolded one code point at a
time. Marks are kept because in Indic and South-East Asian scripts they carry the vowels:
dropping them would merge different words.

One code point may fold to several (``ß`` → ``ss``, ``ﬁ`` → ``fi``), so the table is two arrays:
``fold[cp]`` is the single folded code point, ``0`` when the character is dropped, or
``-(1 + i)`` when it expands to ``expand[i + 1 : i + 1 + expand[i]]``.

The table depends only on the Unicode version of this Python (``unicodedata.unidata_version``),
which every fingerprint table records, so hashes are reproducible across processes and machines
running the same Unicode version.

Building it walks all 1.1 M code points in Python (about a second of CPU), which every Spark
Python worker would pay again; so the built table goes to ``webwinnow.core.diskcache`` (beside
Numba's compiled kernels), under a name holding the Unicode version and the code that builds it.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

MAX_CODE_POINT = 0x10FFFF
UNICODE_VERSION = unicodedata.unidata_version


def is_kept(ch: str) -> bool:
    """Letters (L*), marks (M*) and numbers (N*) survive normalization."""
    return unicodedata.category(ch)[0] in "LMN"


def fold_char(ch: str) -> str:
    """What one original character becomes after normalization (possibly empty)."""
    if not is_kept(ch):
        return ""
    return "".join(c for c in unicodedata.normalize("NFKC", ch).casefold() if is_kept(c))


def _build() -> tuple[np.ndarray, np.ndarray]:
    fold = np.zeros(MAX_CODE_POINT + 1, dtype=np.int32)
    expand: list[int] = []
    for cp in range(MAX_CODE_POINT + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if unicodedata.category(ch)[0] not in "LMN":
            continue
        out = fold_char(ch)
        if len(out) == 1:
            fold[cp] = ord(out)
        elif len(out) > 1:
            fold[cp] = -(1 + len(expand))
            expand.append(len(out))
            expand.extend(ord(c) for c in out)
    return fold, np.asarray(expand or [0], dtype=np.int32)


@functools.lru_cache(maxsize=1)
def fold_table() -> tuple[np.ndarray, np.ndarray]:
    """The (fold, expand) arrays: loaded from the disk cache, or built once and stored there."""
    from . import diskcache  # the cross-process memo (like Numba's cache=True): no other I/O here

    arrays = diskcache.cached(table_cache_name(), ("fold", "expand"), lambda: dict(zip(("fold", "expand"), _build())), _valid)
    return arrays["fold"], arrays["expand"]


def table_cache_name() -> str:
    """The table's file name in the disk cache: the Unicode version and the building code in it."""
    from . import diskcache

    return diskcache.cache_name(
        f"charfold-{UNICODE_VERSION}", UNICODE_VERSION, str(MAX_CODE_POINT), code=(is_kept, fold_char, _build)
    )


def _valid(arrays: dict[str, np.ndarray]) -> bool:
    fold, expand = arrays["fold"], arrays["expand"]
    return (
        fold.shape == (MAX_CODE_POINT + 1,)
        and fold.dtype == np.int32
        and expand.dtype == np.int32
        and expand.ndim == 1
        and len(expand) >= 1
    )
