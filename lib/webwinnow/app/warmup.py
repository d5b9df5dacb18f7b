"""Compiling (or loading) the Numba kernels once in the driver, so that Spark's Python workers
find them in the on-disk cache instead of each compiling them again."""

from __future__ import annotations

import os
import time

from ..stages._kernels import kernels_fresh
from .console import Console

__all__ = ["kernels_cached", "kernels_fresh", "warm_kernels"]


def kernels_cached() -> bool:
    """Whether Numba's on-disk cache holds the main kernel (else this is a first run, which
    compiles all of them: about 20 s)."""
    from ..core import kernel

    try:
        return os.path.exists(kernel._fingerprint_batch._cache._cache_file._index_path)
    except AttributeError:
        return True  # a Numba without this layout: say nothing rather than guess


def warm_kernels(console: Console) -> None:
    """Compile the kernels once in the driver, so the workers find them cached, unless the cache
    is fresh: loading them all then cost the driver 0.5 CPU-s for kernels it mostly never calls
    (each process loads the ones it calls)."""
    if kernels_fresh():
        return
    started = time.time()
    if not kernels_cached():
        console.say("compiling the winnowing and extraction kernels (first run only; cached afterwards) ...")
    from ..stages._kernels import exercise

    exercise()
    if time.time() - started > 2:
        console.say(f"kernels ready in {time.time() - started:.0f} s")
