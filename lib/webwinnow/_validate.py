"""Argument checks shared by modules that take numbers from tables and callers."""

from __future__ import annotations

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
