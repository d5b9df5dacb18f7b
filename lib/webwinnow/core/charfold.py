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
Python worker would pay again; so the built table is kept on disk where Numba keeps the compiled
kernels (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside this file, else the user's cache
folder), under a name holding the Unicode version and a digest of the code that builds it.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import tempfile
import unicodedata
from pathlib import Path

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


def _cache_name() -> str:
    code = "".join(inspect.getsource(f) for f in (is_kept, fold_char, _build))
    digest = hashlib.sha256(f"{UNICODE_VERSION}\0{MAX_CODE_POINT}\0{code}".encode()).hexdigest()[:16]
    return f"charfold-{UNICODE_VERSION}-{digest}.npz"


def _cache_dirs() -> list[Path]:
    dirs = [Path(os.environ["NUMBA_CACHE_DIR"])] if os.environ.get("NUMBA_CACHE_DIR") else []
    dirs.append(Path(__file__).resolve().parent / "__pycache__")
    dirs.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webwinnow")
    return dirs


def _load(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            fold, expand = data["fold"], data["expand"]
    except (OSError, KeyError, ValueError, EOFError):
        return None  # absent, or a damaged file: build the table again
    if fold.shape != (MAX_CODE_POINT + 1,) or fold.dtype != np.int32 or expand.dtype != np.int32 or expand.ndim != 1:
        return None
    return fold, expand


def _store(folder: Path, name: str, fold: np.ndarray, expand: np.ndarray) -> bool:
    """Write atomically (a temporary file renamed into place): workers may race to write it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".charfold-", suffix=".npz", dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, fold=fold, expand=expand)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide it from other users of a shared cache
        os.replace(tmp, folder / name)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


@functools.lru_cache(maxsize=1)
def fold_table() -> tuple[np.ndarray, np.ndarray]:
    """The (fold, expand) arrays: loaded from the on-disk cache, or built once and stored there."""
    name = _cache_name()
    dirs = _cache_dirs()
    for folder in dirs:
        found = _load(folder / name)
        if found is not None:
            return found
    fold, expand = _build()
    for folder in dirs:
        if _store(folder, name, fold, expand):
            break
    return fold, expand
