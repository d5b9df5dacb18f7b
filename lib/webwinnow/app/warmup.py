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


def warm_kernels(console: Console) -> None:
    """Compile (or load) the kernels once in the driver, so the workers find them cached."""
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
