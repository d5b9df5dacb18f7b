"""webwinnow: copied and near-duplicate text across web crawls, by winnowing (Schleimer et al. 2003).

The Python API (``webwinnow.fingerprint`` and friends, from ``webwinnow.core.winnowing``) is
loaded on first use, so ``import webwinnow.config`` or ``webwinnow --help`` pull in neither
Numba nor pyarrow.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Fingerprints",
    "fingerprint",
    "fingerprint_batch",
    "kgram_hashes",
    "normalize",
    "resolve_window",
    "select_mod_p",
    "winnow",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from .core import winnowing

        return getattr(winnowing, name)
    raise AttributeError(f"module 'webwinnow' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
