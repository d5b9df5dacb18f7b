"""Every Numba kernel the warm-up knows, called once on a tiny input: compiled on a cold cache,
loaded from Numba's on-disk cache on a warm one.

The driver calls it while the JVM starts, so that Spark's Python workers find the kernels
cached instead of compiling each its own (app.warmup). webwinnow's Python daemon calls it
before it forks the workers (stages._daemon): each worker inherits the kernels loaded, where
each loaded its own before, and paid Numba's first-use setup as it did (0.15-0.2 CPU-s a
process, then each kernel's load).
"""

from __future__ import annotations

import os

#: The modules whose kernels exercise compiles.
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


def exercise(group: int | None = None) -> None:
    """Call each kernel once, on an input that takes the path a stage's call takes (the same
    argument types: Numba keeps one compiled version per type signature). `group`: only the calls
    of that one of GROUPS, which a cold warm-up compiles in processes of their own at once."""
    for i, calls in enumerate(_CALLS):
        if group is None or i == group:
            calls()


def _winnowing() -> None:
    """The fingerprint kernel and what shares its compiled parts (the units' cutters)."""
    from ..core.winnowing import fingerprint, fingerprint_batch, units

    text = WARM_TEXT
    fingerprint_batch([text], 5, 4)
    fingerprint(text, 5, 4)
    for unit in ("word", "code"):  # their own kernels: the word cutter, the kernel for made codes
        fingerprint_batch([text], 5, 4, unit=unit)
        units(text, unit)


def _the_others() -> None:
    """HTML's pre-pass, the passages', the clusters' and the template edges' kernels."""
    import numpy as np
    import pyarrow as pa

    from ..analysis.boilerplate import HashSet
    from ..analysis.components import components
    from ..analysis.spans import copied_passages, gather_ranges
    from ..analysis.template import batch_edge_hashes
    from ..core.winnowing import _text_buffers
    from ..text.html2text import html_to_text

    text = WARM_TEXT
    html_to_text(f"<html><body><p>{text}</p></body></html>")
    copied_passages(text, text, np.zeros(1, np.int64), np.zeros(1, np.int64), 5, max_spans=1, max_chars=1000)
    components(np.array([1], np.int64), np.array([2], np.int64))
    gather_ranges(np.zeros(4, np.uint8), np.array([0], np.int64), np.array([2], np.int64))
    # as the passages stage's edge tasks call it: a page's bytes and bounds from an Arrow array
    data, starts, ends = _text_buffers(pa.array([text]))
    template = HashSet(np.zeros(0, np.int64))
    batch_edge_hashes(data, starts, ends, False, 5, 4, True, 0, template.members, template.table())


WARM_TEXT = "warm up " * 40
#: The warm-up's calls in groups of about the same compile time on a cold cache (the fingerprint
#: kernel alone 18 s of 31 on this machine kind).
_CALLS = (_winnowing, _the_others)
#: How many groups exercise() has.
GROUPS = len(_CALLS)
