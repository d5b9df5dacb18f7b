"""Compiling (or loading) the Numba kernels once in the driver, so that Spark's Python workers
find them in the on-disk cache instead of each compiling them again."""

from __future__ import annotations

import os
import time

from .console import Console


def kernels_cached() -> bool:
    """Whether Numba's on-disk cache holds the main kernel (else this is a first run, which
    compiles all of them: about 20 s)."""
    from ..core import kernel

    try:
        return os.path.exists(kernel._fingerprint_batch._cache._cache_file._index_path)
    except AttributeError:
        return True  # a Numba without this layout: say nothing rather than guess


#: The modules whose kernels warm_kernels compiles.
WARMED = ("core.kernel", "core.units", "analysis.spans", "analysis.components", "analysis.template", "text.html2text")


def kernels_fresh() -> bool:
    """Whether Numba's on-disk cache holds every module of WARMED as compiled from its source by
    this Numba: each module has indexed kernels, and each index is stamped with its module's
    source and Numba's version (an index another source or Numba wrote reads as empty)."""
    import importlib

    from numba.core.dispatcher import Dispatcher

    try:
        for name in WARMED:
            module = importlib.import_module(f"webwinnow.{name}")
            # Numba's cache objects are not in its type stubs
            files = [d._cache._cache_file for d in vars(module).values() if isinstance(d, Dispatcher)]  # type: ignore[attr-defined]
            indexed = [f for f in files if os.path.exists(f._index_path)]
            if not indexed or not all(f._load_index() for f in indexed):
                return False
    except Exception:  # noqa: BLE001 - a Numba without this layout: warm up, as when unsure
        return False
    return True


def warm_kernels(console: Console) -> None:
    """Compile the kernels once in the driver, so the workers find them cached, unless the cache
    is fresh: loading them all then cost the driver 0.5 CPU-s for kernels it mostly never calls
    (each process loads the ones it calls)."""
    if kernels_fresh():
        return
    started = time.time()
    if not kernels_cached():
        console.say("compiling the winnowing and extraction kernels (first run only; cached afterwards) ...")
    import numpy as np

    from ..analysis.components import components
    from ..analysis.spans import copied_passages, gather_ranges
    from ..analysis.template import batch_edge_hashes
    from ..core.winnowing import fingerprint, fingerprint_batch, units
    from ..text.html2text import html_to_text

    text = "warm up " * 40
    fingerprint_batch([text], 5, 4)
    fingerprint(text, 5, 4)
    for unit in ("word", "code"):  # their own kernels: the word cutter, the kernel for made codes
        fingerprint_batch([text], 5, 4, unit=unit)
        units(text, unit)
    html_to_text(f"<html><body><p>{text}</p></body></html>")
    copied_passages(text, text, np.zeros(1, np.int64), np.zeros(1, np.int64), 5, max_spans=1, max_chars=1000)
    components(np.array([1], np.int64), np.array([2], np.int64))
    gather_ranges(np.zeros(4, np.uint8), np.array([0], np.int64), np.array([2], np.int64))
    data = np.frombuffer(text.encode(), np.uint8)
    batch_edge_hashes(
        data, np.zeros(1, np.int64), np.array([len(data)]), False, 5, 4, True, 0, np.zeros(0, np.int64), np.zeros(1024, bool)
    )
    if time.time() - started > 2:
        console.say(f"kernels ready in {time.time() - started:.0f} s")
