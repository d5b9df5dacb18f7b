"""Compiling (or loading) the Numba kernels once in the driver, so that Spark's Python workers
find them in the on-disk cache instead of each compiling them again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

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
    (each process loads the ones it calls).

    Numba compiles one function at a time, so on a cold cache each group of the warm-up's calls
    but the first compiles in a helper process while the driver compiles the first (the
    fingerprint kernel, 18 of 31 s alone on this machine kind); the driver then calls the
    others too, loading what the helpers compiled and compiling what a failed one did not."""
    if kernels_fresh():
        return
    started = time.time()
    if not kernels_cached():
        console.say("compiling the winnowing and extraction kernels (first run only; cached afterwards) ...")
    from ..stages._kernels import GROUPS, drop_stale_indexes, exercise

    helpers = [_helper(group) for group in range(1, GROUPS)]
    try:
        exercise(0)
    finally:  # never leave a helper behind, even when the driver's own calls fail
        for helper in helpers:
            if helper is not None:
                helper.wait()
    for group in range(1, GROUPS):
        exercise(group)
    drop_stale_indexes()
    if time.time() - started > 2:
        console.say(f"kernels ready in {time.time() - started:.0f} s")


def _helper(group: int) -> subprocess.Popen | None:
    """A Python process of this interpreter that makes the warm-up's calls of `group` (None: it
    could not start; the driver makes them itself)."""
    import webwinnow

    package_root = str(Path(webwinnow.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    code = f"from webwinnow.stages._kernels import exercise; exercise({int(group)})"
    try:
        return subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None
