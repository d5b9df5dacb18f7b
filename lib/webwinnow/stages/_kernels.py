"""Every Numba kernel the warm-up knows, called once on a tiny input: compiled on a cold cache,
loaded from Numba's on-disk cache on a warm one.

The driver calls it while the JVM starts, so that Spark's Python workers find the kernels
cached instead of compiling each its own (app.warmup). webwinnow's Python daemon calls it
before it forks the workers (stages._daemon): each worker inherits the kernels loaded, where
each loaded its own before, and paid Numba's first-use setup as it did (0.15-0.2 CPU-s a
process, then each kernel's load). The calls take the stages' own paths where a kernel's
argument types come from Arrow (read-only buffers) and NumPy alike: the passages stage's
windows and spans kernels through its window pass and grow functions on one pair.
"""

from __future__ import annotations

import os

#: The modules whose kernels exercise compiles.
WARMED = (
    "core.kernel",
    "core.units",
    "core.docfreq",
    "core.seedorder",
    "analysis.spans",
    "analysis.components",
    "analysis.template",
    "analysis.windows",
    "analysis.batchspans",
    "analysis.pairing",
    "text.html2text",
)


def kernels_fresh(remembered: bool = True) -> bool:
    """Whether Numba's on-disk cache holds every module of WARMED as compiled from its source by
    this Numba: each module has indexed kernels, and each index is stamped with its module's
    source and Numba's version (an index another source or Numba wrote reads as empty).

    Asking Numba imports it and every kernel's module (0.3 CPU-s), which a run's driver then
    never uses (core.jit): a fresh answer is remembered in a small file beside the cache, named
    after this Python, this Numba and the modules' sources, that lists the index files and their
    stamps; while none of them has changed, the answer is read from it (remembered=False: ask
    Numba). A wrong "fresh" would only leave each worker to load or compile its own kernels."""
    if remembered and _remembered_fresh():
        return True
    import importlib

    from ..core.jit import made

    try:
        made()
        from numba.core.dispatcher import Dispatcher

        indexes: list[str] = []
        for name in WARMED:
            module = importlib.import_module(f"webwinnow.{name}")
            # Numba's cache objects are not in its type stubs
            files = [d._cache._cache_file for d in vars(module).values() if isinstance(d, Dispatcher)]  # type: ignore[attr-defined]
            indexed = [f for f in files if os.path.exists(f._index_path)]
            if not indexed or not all(f._load_index() for f in indexed):
                return False
            indexes.extend(f._index_path for f in indexed)
    except Exception:  # noqa: BLE001 - a Numba without this layout: warm up, as when unsure
        return False
    _remember(indexes)
    return True


def drop_stale_indexes() -> list[str]:
    """Remove the index files of WARMED's kernels that no longer load (written for an older
    source of their module, or another Numba) and that this process did not make again; the
    paths removed. Call it after the warm-up's calls.

    A kernel compiled only inside others (windows._in_set, which the window and template-edge
    kernels call) is compiled again with them, not through its own entry, so its own index
    stays as an older source left it: kernels_fresh read that as a cache to fill, and every run
    warmed up again (after any change of the module's source, as an upgrade makes). Numba
    never reads such an index; it rewrites it when it compiles the kernel through its entry."""
    import importlib

    from numba.core.dispatcher import Dispatcher

    dropped = []
    for name in WARMED:
        module = importlib.import_module(f"webwinnow.{name}")
        for value in vars(module).values():
            if not isinstance(value, Dispatcher) or value.overloads:
                continue
            index = value._cache._cache_file  # type: ignore[attr-defined]
            try:
                if os.path.exists(index._index_path) and not index._load_index():
                    os.remove(index._index_path)
                    dropped.append(index._index_path)
            except (OSError, ValueError, EOFError):  # unreadable: Numba would write it again too
                continue
    return dropped


def _marker_name() -> str | None:
    """The file a fresh answer is remembered in, named after what the kernels depend on; None
    when that cannot be told without Numba."""
    import hashlib
    import importlib.util
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        numba = importlib.util.find_spec("numba")  # found, not imported
        if numba is None or not numba.origin:
            return None
        # Numba's version: its files as installed (an upgrade rewrites them)
        files = [numba.origin, os.path.join(os.path.dirname(numba.origin), "_version.py")]
        files += [os.path.join(package, *name.split(".")) + ".py" for name in WARMED]
        parts = [sys.version, package]
        for path in files:
            st = os.stat(path)
            parts.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
    except (OSError, ImportError, ValueError):
        return None
    return f"kernels-fresh-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}.json"


def _stamps(paths: list[str]) -> list[list]:
    stamped = []
    for path in paths:
        st = os.stat(path)
        stamped.append([path, st.st_mtime_ns, st.st_size])
    return stamped


def _remembered_fresh() -> bool:
    import json

    from ..core.diskcache import cache_dirs

    name = _marker_name()
    if name is None:
        return False
    for folder in cache_dirs():
        try:
            listed = json.loads((folder / name).read_text())["indexes"]
            return bool(listed) and _stamps([row[0] for row in listed]) == listed
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue
    return False


def _remember(indexes: list[str]) -> None:
    """Write the marker (atomically) in the first cache folder that takes it; nothing if none."""
    import json
    import tempfile

    from ..core.diskcache import cache_dirs

    name = _marker_name()
    if name is None or not indexes:
        return
    try:
        text = json.dumps({"indexes": _stamps(sorted(set(indexes)))})
    except OSError:
        return
    for folder in cache_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, folder / name)
            return
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def exercise(group: int | None = None) -> None:
    """Call each kernel once, on an input that takes the path a stage's call takes (the same
    argument types: Numba keeps one compiled version per type signature). `group`: only the calls
    of that one of GROUPS, which a cold warm-up compiles in processes of their own at once."""
    for i, calls in enumerate(_CALLS):
        if group is None or i == group:
            calls()


def _winnowing() -> None:
    """The fingerprint kernel and what shares its compiled parts (the units' cutters)."""
    import pyarrow as pa

    from ..core.winnowing import fingerprint, fingerprint_batch, text_keys, units

    text = WARM_TEXT
    fingerprint_batch([text], 5, 4)
    fingerprint(text, 5, 4)
    # the clusters stage's keying tasks: the normalizer called on Arrow's read-only buffer
    text_keys(pa.RecordBatch.from_arrays([pa.array([text])], names=["text"]).column("text"))
    for unit in ("word", "code"):  # their own kernels: the word cutter, the kernel for made codes
        fingerprint_batch([text], 5, 4, unit=unit)
        units(text, unit)


def _the_others() -> None:
    """HTML's pre-pass, the passages', the clusters', the template edges', the report's sample
    counting and the pair tasks' seed ordering kernels."""
    import numpy as np
    import pyarrow as pa

    from ..analysis.boilerplate import HashSet
    from ..analysis.components import _union_all
    from ..analysis.spans import copied_passages, gather_ranges
    from ..analysis.template import batch_edge_hashes
    from ..core.docfreq import document_frequencies
    from ..core.seedorder import seed_order
    from ..core.winnowing import _text_buffers
    from ..text.html2text import html_to_text

    text = WARM_TEXT
    html_to_text(f"<html><body><p>{text}</p></body></html>")
    copied_passages(text, text, np.zeros(1, np.int64), np.zeros(1, np.int64), 5, max_spans=1, max_chars=1000)
    # the kernel itself: components() runs few edges (the warm-up's) as a Python loop
    _union_all(np.arange(2, dtype=np.int64), np.array([0], np.int64), np.array([1], np.int64))
    gather_ranges(np.zeros(4, np.uint8), np.array([0], np.int64), np.array([2], np.int64))
    # as the passages stage's edge tasks call it: a page's bytes and bounds from an Arrow array
    data, starts, ends = _text_buffers(pa.array([text]))
    template = HashSet(np.zeros(0, np.int64))
    batch_edge_hashes(data, starts, ends, False, 5, 4, True, 0, template.members, template.table())
    document_frequencies(np.arange(4, dtype=np.int64), np.array([0, 2, 4], np.int64))
    # as a pair task calls it: the columns of an Arrow table (read-only arrays), a pair of 20
    # seeds and one of 40 taking both of its sorts
    seeds = pa.table(
        [np.arange(60, dtype=np.int64) // 20 % 2] * 2 + [np.arange(60, dtype=np.int32)[::-1]] * 2, names=list("abcd")
    )
    seed_order(*(column.to_numpy() for column in seeds.columns))
    _pairing()


class _Dropped:
    """A part writer that keeps nothing (the counting task's rows of hashes seen once)."""

    def write(self, batch) -> None:
        pass


def _pairing() -> None:
    """The hash_freq and candidates stages' pairing kernels (hosts counted per hash, seeds made
    per hash), through their tasks' own functions on rows sorted as a partition's are: Arrow's
    read-only columns. Not warmed, each worker compiled its own on a first run."""
    from typing import cast

    import pyarrow as pa

    from ..outputs.parts import PartWriter
    from .candidates import seed_arrow
    from .hash_freq import HOSTED, counted_arrow

    rows = pa.table(
        {
            "hash": [1, 1, 2, 2, 2],
            "doc_id": [10, 11, 10, 11, 12],
            "pos": [0, 5, 9, 3, 4],
            "host_id": [1, 2, 1, 2, None],
            "file": [0, 0, 0, 0, 0],
        },
        schema=HOSTED,
    )
    # a partition in one batch (its columns Arrow's) and in several (joined into NumPy's)
    for size in (None, 2):
        list(counted_arrow(rows.to_batches(max_chunksize=size), cast("PartWriter", _Dropped())))
        list(seed_arrow(rows.select(["hash", "doc_id", "pos"]).to_batches(max_chunksize=size), 10))


def _passages() -> None:
    """The passages stage's windows and spans kernels, through the stage's own functions on one
    pair as the driver's path hands it to a grow task (its page a whole, its b window without
    text, its seeds as bytes, its page b held once): the argument types of a task's calls. Not
    warmed, each worker compiled them itself on a first run (the sample's passages stage 20 s)."""
    import numpy as np
    import pyarrow as pa

    from ..config import RunConfig
    from ._sides import GROW_ROWS, SEEDS, PagesB, listed_seeds, packed_seeds
    from ._windows import WINDOWS, pair_chunks, window_arrow, with_a_windows
    from .passages import grow_arrow, min_content, settle

    cfg = RunConfig()
    # the same 1,200 characters in both pages, its k-grams at the same distance from their
    # pages' starts seeds (found here, not by the fingerprint kernel: another group compiles it)
    shared = " ".join(f"w{(i * 7919) % 10007}" for i in range(200))
    texts = [f"page a {shared} its end", f"page b {shared}"]
    seeds = [{"pos_a": p, "pos_b": p} for p in range(7, 900, 97)]
    boilerplate = template = np.zeros(0, np.int64)
    lo, hi = min(x["pos_b"] for x in seeds), max(x["pos_b"] for x in seeds)
    request = pa.RecordBatch.from_pydict(
        {"doc_id": [1], "requests": [[{"doc_a": 0, "doc_b": 1, "side": 1, "lo": lo, "hi": hi}]], "text": texts[1:]},
    )
    window = pa.Table.from_batches(list(window_arrow(request, cfg, boilerplate, template, texts=False)), schema=WINDOWS)
    rows = {name: window.column(name) for name in WINDOWS.names}
    rows["seeds"] = packed_seeds(pa.array([seeds], SEEDS))
    page = {name: pa.nulls(1, GROW_ROWS.field(name).type) for name in GROW_ROWS.names}
    page.update(doc_a=pa.array([0], pa.int64()), doc_b=pa.array([-1], pa.int64()), side=pa.array([-1], pa.int32()))
    page["text"] = pa.array(texts[:1], pa.string())
    both = pa.concat_tables(
        [
            pa.table(page, schema=GROW_ROWS),
            pa.table({f.name: rows.get(f.name, pa.nulls(1, f.type)) for f in GROW_ROWS}, schema=GROW_ROWS),
        ]
    )
    pages_b = PagesB.of(np.array([1], np.int64), pa.array(texts[1:], pa.string()))
    for chunk in pair_chunks(both.to_batches()):
        table = with_a_windows(listed_seeds(chunk), cfg, boilerplate, template, False)
        settle(grow_arrow(table, cfg, pages_b), table, min_content(cfg))


WARM_TEXT = "warm up " * 40
#: The warm-up's calls in groups of about the same compile time on a cold cache (the fingerprint
#: kernel alone 18 s of 31 on this machine kind).
_CALLS = (_winnowing, _the_others, _passages)
#: How many groups exercise() has.
GROUPS = len(_CALLS)
