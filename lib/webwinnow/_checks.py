"""Argument checks shared by every layer: plain Python, so the config can use them without NumPy."""

from __future__ import annotations

import numbers
import operator
from typing import Any


def integer(value: Any, what: str) -> int:
    """value as an int (numpy integers included); bool and non-integers are a TypeError naming what."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}") from None


DEFAULT_W = 100
#: k, w and t index characters of one document (positions are int32 in the tables).
MAX_WINDOW = 2**31 - 1


def resolve_window(k: int, w: int | None = None, t: int | None = None) -> int:
    """The window w, given directly or through the guarantee threshold t = w + k - 1 (else 100)."""
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= MAX_WINDOW:
        raise ValueError(f"k (the noise threshold) must be an integer >= 1 and <= {MAX_WINDOW}, got {k!r}")
    if t is not None:
        if w is not None:
            raise ValueError("give either w (the window) or t (the guarantee threshold), not both")
        if not isinstance(t, numbers.Integral) or isinstance(t, bool) or t < k:
            raise ValueError(
                f"t (the guarantee threshold) must be an integer >= k = {k}, got {t!r}: no match shorter than k is ever found"
            )
        if t > MAX_WINDOW:
            raise ValueError(f"t (the guarantee threshold) must be <= {MAX_WINDOW}, got {t!r}")
        return int(t) - int(k) + 1
    if w is None:
        return DEFAULT_W
    if not isinstance(w, numbers.Integral) or isinstance(w, bool) or not 1 <= w <= MAX_WINDOW:
        raise ValueError(f"w (the window) must be an integer >= 1 and <= {MAX_WINDOW}, got {w!r}")
    return int(w)
