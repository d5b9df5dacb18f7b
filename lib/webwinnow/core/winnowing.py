"""Public fingerprinting API: validated wrappers around the Numba kernels.

>>> hashes, positions = fingerprint(text, k=50, w=100)

``positions[i]`` is the character offset in ``text`` where the k-gram behind ``hashes[i]``
starts (the offset of its first kept character).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .._checks import DEFAULT_W, MAX_WINDOW, resolve_window  # noqa: F401  (re-exported)
from . import kernel
from .charfold import fold_table
from .codetokens import DEFAULT_LEXER, code_tokens
from .units import CODE, WORD, unit_number


def _check_mod_p(mod_p: int) -> int:
    if not isinstance(mod_p, (int, np.integer)) or isinstance(mod_p, bool) or not 0 <= mod_p < 2**63:
        raise ValueError(f"mod_p must be an integer >= 0 and < 2**63 (0 = winnowing), got {mod_p!r}")
    return int(mod_p)


def _check_text(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    return text


def normalize(text: str) -> tuple[str, np.ndarray]:
    """The normalized text and, per normalized character, its offset in ``text``."""
    _check_text(text)
    fold, expand = fold_table()
    codes, offsets = kernel._normalize(_utf8(text), fold, expand)
    return "".join(map(chr, codes.tolist())), offsets


def normalized_offsets(text: str, unit: str = "char", lexer: str = DEFAULT_LEXER) -> np.ndarray:
    """Per normalized unit of ``text`` (character, word or code token), its start offset in ``text``."""
    return units(text, unit, lexer)[1]


def units(text: str, unit: str = "char", lexer: str = DEFAULT_LEXER) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The units of ``text`` (webwinnow.core.units): (codes, starts, ends), int64, in text order;
    unit i comes from the characters text[starts[i]:ends[i]]."""
    _check_text(text)
    number = unit_number(unit)
    if number == CODE:
        return code_tokens(text, lexer)
    fold, expand = fold_table()
    codes, offsets = kernel._normalize(_utf8(text), fold, expand)
    if number == WORD:
        return _words(codes, offsets)
    offsets = offsets.astype(np.int64)
    return codes.astype(np.int64), offsets, offsets + 1


def _words(codes: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .units import _words as words_kernel

    return words_kernel(codes, offsets.astype(np.int64))


def text_keys(texts: Iterable[str | None] | pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(key int64, normalized length int64) per text: texts equal after normalization (casefold,
    letters and digits) have equal keys (a 63-bit hash of the normalized code points, one
    kernel call for all: kernel._text_keys). Null texts count as empty (length 0)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str or an Arrow string array, not a single string")
    fold, expand = fold_table()
    # Arrow's buffers as they are (no Python strings made and encoded again)
    data, starts, ends = _text_buffers(texts)
    return kernel._text_keys(data, starts, ends, fold, expand)


def kgram_hashes(text: str, k: int = 50, unit: str = "char", lexer: str = DEFAULT_LEXER) -> tuple[np.ndarray, np.ndarray]:
    """The hash of every k-gram of the text's units, and each k-gram's start offset in ``text``."""
    _check_text(text)
    resolve_window(k, w=1)
    codes, starts, _ = units(text, unit, lexer)
    hashes = kernel._kgram_hashes(codes, int(k))
    return hashes, starts[: hashes.shape[0]].copy()


def winnow(hashes: Sequence[int] | np.ndarray, w: int, robust: bool = True) -> np.ndarray:
    """Indices into ``hashes`` that winnowing with window w selects, in increasing order."""
    resolve_window(1, w=w)
    arr = np.ascontiguousarray(hashes, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"hashes must be one-dimensional, got shape {arr.shape}")
    return kernel._winnow(arr, int(w), bool(robust))


def select_mod_p(hashes: Sequence[int] | np.ndarray, p: int) -> np.ndarray:
    """Indices of the hashes that are 0 mod p (unsigned): the baseline winnowing is compared with."""
    if _check_mod_p(p) < 1:
        raise ValueError(f"p must be >= 1, got {p!r}")
    return kernel._mod_p(np.ascontiguousarray(hashes, dtype=np.int64), int(p))


def fingerprint(
    text: str,
    k: int = 50,
    w: int | None = None,
    robust: bool = True,
    *,
    t: int | None = None,
    mod_p: int = 0,
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
) -> tuple[np.ndarray, np.ndarray]:
    """Fingerprints of one text: ``(hashes int64, positions int64)``, equal length, in text order.

    Texts with fewer than k units (normalized characters, words or code tokens) have none;
    texts with fewer than w k-grams still yield their minimum. ``mod_p > 0`` selects by 0 mod p
    instead of winnowing. The window is w, or t - k + 1 when the guarantee threshold t is given,
    else 100.
    """
    _check_text(text)
    batch = fingerprint_batch([text], k, w, robust, t=t, mod_p=mod_p, unit=unit, lexer=lexer)
    return batch.hashes, batch.positions


@dataclass(frozen=True)
class Fingerprints:
    """Fingerprints of a batch of documents.

    Per fingerprint: ``doc`` (index into the batch), ``hashes``, ``positions``. Per document:
    ``norm_chars`` (normalized length), ``kgrams`` and ``counts`` (fingerprints selected).
    """

    doc: np.ndarray
    hashes: np.ndarray
    positions: np.ndarray
    norm_chars: np.ndarray
    kgrams: np.ndarray
    counts: np.ndarray

    @property
    def density(self) -> float:
        """Fingerprints per k-gram over the whole batch (2/(w+1) expected on random text)."""
        total = int(self.kgrams.sum())
        return float(self.counts.sum()) / total if total else 0.0


def fingerprint_batch(
    texts: Iterable[str | None] | pa.Array | pa.ChunkedArray,
    k: int = 50,
    w: int | None = None,
    robust: bool = True,
    *,
    t: int | None = None,
    mod_p: int = 0,
    unit: str = "char",
    lexer: str = DEFAULT_LEXER,
) -> Fingerprints:
    """Fingerprints of many texts in one kernel call; nulls count as empty texts.

    Takes an Arrow string array (its buffers are used as they are, no copy) or any iterable of
    ``str``/``None``. The window is w, or t - k + 1 when t is given, else 100. ``unit``: what a
    k-gram counts (webwinnow.core.units); ``lexer`` names the Pygments lexer of the code unit.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str or an Arrow string array, not a single string")
    w = resolve_window(k, w, t)
    mod_p = _check_mod_p(mod_p)
    number = unit_number(unit)
    if number == CODE:
        return _fingerprint_code(texts, int(k), w, bool(robust), mod_p, lexer)
    data, starts, ends = _text_buffers(texts)
    fold, expand = fold_table()
    doc, hashes, pos, norm, kg, counts = kernel._fingerprint_batch(
        data, starts, ends, fold, expand, int(k), w, bool(robust), mod_p, number
    )
    return Fingerprints(doc, hashes, pos, norm, kg, counts)


def code_units_batch(texts, lexer: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The code tokens of many texts (nulls: none): flat (codes, starts, ends) and per text the
    bounds of its tokens (n + 1 offsets)."""
    values = texts.to_pylist() if isinstance(texts, (pa.Array, pa.ChunkedArray)) else list(texts)
    parts = [code_tokens(_check_text(t), lexer) if t is not None else (np.zeros(0, np.int64),) * 3 for t in values]
    bounds = np.zeros(len(parts) + 1, np.int64)
    bounds[1:] = np.cumsum([len(p[0]) for p in parts])
    flat = [np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, np.int64) for i in range(3)]
    return flat[0], flat[1], flat[2], bounds


def _fingerprint_code(texts, k: int, w: int, robust: bool, mod_p: int, lexer: str) -> Fingerprints:
    codes, starts, _, bounds = code_units_batch(texts, lexer)
    doc, hashes, pos, norm, kg, counts = kernel._fingerprint_codes(codes, starts, bounds, k, w, robust, mod_p)
    return Fingerprints(doc, hashes, pos, norm, kg, counts)


def _utf8(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _text_buffers(texts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UTF-8 bytes and per-text [start, end) byte ranges, straight from Arrow buffers."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not isinstance(texts, pa.Array):
        # Encoded here rather than by Arrow, so a lone surrogate becomes one U+FFFD character
        # (as in normalize) instead of an encoding error.
        texts = pa.array(
            [_check_text(t).encode("utf-8", "surrogatepass") if t is not None else None for t in texts], type=pa.large_binary()
        )
    if pa.types.is_string(texts.type) or pa.types.is_binary(texts.type):
        offset_type: type[np.signedinteger[Any]] = np.int32
    elif pa.types.is_large_string(texts.type) or pa.types.is_large_binary(texts.type):
        offset_type = np.int64
    else:
        raise TypeError(f"expected an Arrow string array, got {texts.type}")
    n = len(texts)
    _, offsets_buf, data_buf = texts.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[texts.offset : texts.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and data_buf.size else np.zeros(0, np.uint8)
    starts = offsets[:-1].copy()
    ends = offsets[1:].copy()
    if texts.null_count:
        valid = texts.is_valid().to_numpy(zero_copy_only=False)
        ends[~valid] = starts[~valid]
    return data, starts, ends
