"""Spark's Python daemon, for the local runs webwinnow starts: pyspark's own, with pyspark and
py4j imported from where they are installed rather than from Spark's zip files.

Spark puts `pyspark.zip` and py4j's zip first on its Python workers' path. Python compiles a
module imported from a zip every time (no bytecode is cached there): a worker forked from the
daemon spent 0.6 CPU-s importing pyspark's worker modules, against 0.1 s from the installed
package's cached bytecode. Where the same pyspark is installed in a folder on the path (pip's
pyspark, which the zip was copied from), the zips leave the path before pyspark's daemon is
imported, with the jars on it that hold no Python (Spark's core jar), and the importers the
imports before made for them (pyspark's worker invalidates the import caches on its first task,
which read each archive's directory again: 45-56 ms a worker); anything else (another version,
no installed copy) keeps Spark's path as it is.

The daemon imports what every worker's tasks import (`PRELOADED`: NumPy, Arrow, pandas, Numba,
the stages' modules) before it forks them: each worker inherits the modules instead of importing
them again (1.2-1.3 CPU-s a worker on the docs corpus), and the kernels the driver's warm-up
calls, loaded from Numba's cache (each of a run's two workers loaded its own: 0.5-0.6 CPU-s
each on the docs corpus, Numba's first-use setup included). The threads those imports start,
NumPy's OpenBLAS pool and Arrow's jemalloc background thread, stop or reset themselves across a
fork (both libraries register fork handlers), and nothing else runs in the daemon when it forks.

pyspark's daemon collects a reused worker's garbage after each of its tasks with a full
collection, which walks every object the worker holds: 70 ms once numba's, pyarrow's and pandas'
modules are loaded, some sixty times a run, about 4 CPU-seconds of a run on the docs corpus
(docs/performance.md). Here each such collection is followed by gc.freeze(): what outlived a
task (the modules, the kernels, a worker's caches) moves to the permanent generation, and the
next task's collection walks only what was made since. Garbage of a task is collected as
before; what is frozen is still freed by reference counting, and only a reference cycle made
before a collection and dropped after it waits for the worker's end.
"""

from __future__ import annotations

import gc
import os
import sys
import zipfile

#: The zips Spark puts on its workers' path, by file name.
_ZIPS = ("pyspark.zip", "py4j-")


def installed_path(path: list[str]) -> list[str]:
    """`path` without Spark's zips of pyspark and py4j, where a folder on it holds the same pyspark
    (version.py identical) and a py4j, and then without the jars on it that hold no Python (Spark
    puts its core jar there); else `path` unchanged."""
    zips = [p for p in path if p.endswith(".zip") and os.path.basename(p).startswith(_ZIPS)]
    zipped = next((p for p in zips if os.path.basename(p) == "pyspark.zip"), None)
    if zipped is None:
        return path
    try:
        with zipfile.ZipFile(zipped) as z:
            version = z.read("pyspark/version.py")
    except (OSError, KeyError, zipfile.BadZipFile):
        return path
    folders = [p for p in path if p not in zips and os.path.isdir(p or ".")]
    if not any(_same(os.path.join(p or ".", "pyspark", "version.py"), version) for p in folders):
        return path
    if not any(os.path.isdir(os.path.join(p or ".", "py4j")) for p in folders):
        return path
    return [p for p in path if p not in zips and not _holds_no_python(p)]


def _holds_no_python(entry: str) -> bool:
    """Whether a path entry is a jar without a Python module in it."""
    if not entry.endswith(".jar"):
        return False
    try:
        with zipfile.ZipFile(entry) as z:
            return not any(name.endswith((".py", ".pyc")) for name in z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def leave_path(kept: list[str]) -> None:
    """sys.path becomes `kept`, and the archives that left it leave the importers' cache too.

    pyspark's worker calls importlib.invalidate_caches() on its first task, which reads again the
    directory of every archive an importer was made for: Spark's zips and its core jar (5,973
    entries), which the imports before the path was trimmed went through. That cost 45-56 ms a
    worker, in each worker the daemon forks."""
    left = tuple(set(sys.path) - set(kept))
    sys.path[:] = kept
    if not left:
        return

    def inside(entry: str) -> bool:  # an archive that left, or a folder in one (jar/org)
        return any(entry == p or entry.startswith(p + os.sep) for p in left)

    for entry in [e for e in sys.path_importer_cache if inside(e)]:
        del sys.path_importer_cache[entry]
    # a namespace package found only in an archive that left: the jar's "org", which the standard
    # library's copy module probes for Jython (`from org.python.core import ...`); its path would
    # make the importer again
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        locations = getattr(spec, "submodule_search_locations", None)
        if spec is not None and spec.origin is None and locations is not None:
            paths = list(getattr(locations, "_path", locations))
            if paths and all(inside(p) for p in paths):
                del sys.modules[name]


#: prctl's PR_SET_THP_DISABLE (Linux 3.15 on).
_PR_SET_THP_DISABLE = 41


def no_huge_pages() -> bool:
    """Turns transparent huge pages off for this process and those it starts (the flag is
    inherited); whether it could (Linux only).

    Arrow's allocator (mimalloc) asks the kernel for huge pages for its arenas, NumPy for every
    array of 4 MB or more. Where the kernel gives them on request (THP "madvise", the common
    default), each 2 MiB page a task touches is faulted and zeroed whole, and memory given back
    between tasks is faulted and zeroed again: on the docs corpus the kernel spent 13% of the
    Python processes' CPU zeroing huge pages (7 CPU-s a run); with small pages the tasks' own CPU
    is the same (docs/performance.md)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError, TypeError):  # no prctl (macOS), no C library by that name (Windows)
        return False


#: mallopt's parameters (glibc's malloc.h): the heap's free top kept up to M_TRIM_THRESHOLD bytes,
#: and at most M_MMAP_MAX allocations of their own mapping.
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
#: The free memory a process keeps at its heap's top for its next allocations.
KEPT_BYTES = 1 << 30


def keep_freed_memory() -> list[str]:
    """Lets this process (and those it forks) reuse the memory its tasks free rather than give it
    back to the kernel and fault it in again; what it changed.

    A worker's task allocates and frees arrays and Arrow buffers of tens to hundreds of MB each
    (a pair task's seeds, a partition's windows, a row group's pages). glibc maps each allocation
    of more than 32 MB on its own and unmaps it when freed, and Arrow's allocator (mimalloc) gives
    freed pages back within milliseconds: every such buffer was faulted and zeroed page by page
    again. On the docs corpus the Python processes took 1.1 M page faults, 3.1-3.5 of their
    22-24 CPU-s in the kernel; with glibc's heap for every allocation (no mapping of their own),
    its free top kept up to KEPT_BYTES, and Arrow on the system allocator, 0.48 M faults, 1.8-2.4
    CPU-s. A process's peak memory is what its largest task holds, as before; between tasks it
    keeps that much. What the user chose stays: ARROW_DEFAULT_MEMORY_POOL, glibc's
    MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_MAX_; nothing changes where glibc is not the C
    library (mallopt missing)."""
    changed: list[str] = []
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no mallopt (macOS, musl), no C library by that name (Windows)
        return changed
    for env, param, value in (("MALLOC_MMAP_MAX_", _M_MMAP_MAX, 0), ("MALLOC_TRIM_THRESHOLD_", _M_TRIM_THRESHOLD, KEPT_BYTES)):
        if env not in os.environ and mallopt(param, value) == 1:
            changed.append(env.lower().strip("_"))
    if changed and "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        if "pyarrow" in sys.modules:
            sys.modules["pyarrow"].set_memory_pool(sys.modules["pyarrow"].system_memory_pool())
        else:  # read by Arrow when it first allocates: no import of pyarrow for a command that needs none
            os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
        changed.append("arrow_system_pool")
    return changed


class FreezingCollector:
    """The gc module as pyspark's daemon uses it, whose collect() freezes what survives."""

    def __getattr__(self, name: str):
        return getattr(gc, name)

    @staticmethod
    def collect(generation: int = 2) -> int:
        found = gc.collect(generation)
        gc.freeze()
        return found


def _same(name: str, content: bytes) -> bool:
    try:
        with open(name, "rb") as fh:
            return fh.read() == content
    except OSError:
        return False


#: What every worker imports for its tasks (the stages' modules and what they import): imported
#: once by the daemon, before it forks, instead of once by each worker.
PRELOADED = (
    "numpy",
    "pyarrow",
    "pyarrow.compute",
    "pyarrow.ipc",
    "pyarrow.parquet",
    "pandas",
    "numba",
    "pyspark.worker",
    "webwinnow.stages.extract",
    "webwinnow.stages.fingerprint",
    "webwinnow.stages.hash_freq",
    "webwinnow.stages.candidates",
    "webwinnow.stages.passages",
    "webwinnow.stages.clusters",
)


def preload(names: tuple[str, ...] = PRELOADED, kernels: bool = True) -> list[str]:
    """Import the modules the workers' tasks import, load the kernels the warm-up calls from
    Numba's cache when it holds them fresh (kernels=True: stages._kernels), then freeze it all
    (paused_collection; gc.freeze: no collection in a worker walks them, and none writes to
    their pages, which the workers share with the daemon); the names that could not be imported,
    which the workers import as before."""
    import importlib

    missing = []
    with paused_collection():
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                missing.append(name)
        if kernels:
            load_kernels()
    return missing


class paused_collection:
    """No automatic collection inside, then (freeze) gc.freeze() without one: the Python manual's
    recipe for a process that forks workers, here for the imports and kernels they inherit.
    Importing the daemon's modules set off full collections that walked every object loaded so
    far (0.2 CPU-s on the docs corpus, then 0.15 for the collection before the freeze, in
    Spark's start, where the JVM waits on the same two cores). Imports leave little garbage
    (2,500 objects, 0.5 MB for all of PRELOADED and the figures' modules): it stays, frozen.
    The driver pauses the same way while the JVM starts (app.runner): freeze only in a process
    webwinnow owns, since a frozen cycle is never collected."""

    def __init__(self, freeze: bool = True) -> None:
        self.freeze = freeze

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.freeze:
            gc.freeze()
        if self.enabled:
            gc.enable()


def load_kernels() -> bool:
    """Load the kernels the warm-up calls, when Numba's cache holds them fresh (never compiled
    here: the first fork would wait for it); whether they were loaded."""
    try:
        from webwinnow.stages._kernels import exercise, kernels_fresh

        if kernels_fresh():
            with paused_collection():
                exercise()
            return True
    except Exception:  # noqa: BLE001 - each worker loads (or compiles) its kernels, as before
        pass
    return False


def _prepared(also: tuple[str, ...] = ()) -> None:
    no_huge_pages()
    keep_freed_memory()
    preload(PRELOADED + also, kernels=False)


def _serve() -> None:
    """pyspark's daemon, its collections freezing what outlives a task; ended without the
    interpreter's teardown.

    pyspark's daemon leaves by sys.exit once Spark stops it (SIGTERM, or its standard input
    closed), after it has told its workers (SIGHUP). The interpreter then tears down every
    module the daemon loaded for its workers (Numba, Arrow, pandas, matplotlib): 0.1 s at the
    end of every local run, which the driver waits for (stages._prestart). It has nothing to
    flush but its standard streams."""
    import pyspark.daemon

    pyspark.daemon.gc = FreezingCollector()  # type: ignore[assignment]
    try:
        pyspark.daemon.manager()
    except SystemExit as stop:
        code = pyspark.daemon.compute_real_exit_code(stop.code if stop.code is not None else 0)
    else:
        code = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--prestart"]:  # started by the driver beside the JVM (stages._prestart)
        from webwinnow.stages._prestart import serve

        serve(int(sys.argv[2]), lambda: _prepared(tuple(sys.argv[3:])), load_kernels, _serve)
        sys.exit(0)
    installed = installed_path(sys.path)
    stripped = installed != sys.path
    leave_path(installed)
    # the driver's prestarted daemon has loaded all that follows: this process stands in for it
    if stripped and os.environ.get("WEBWINNOW_DAEMON_SOCKET"):
        from webwinnow.stages._prestart import hand_over

        if hand_over(os.environ["WEBWINNOW_DAEMON_SOCKET"]):
            sys.exit(0)
    no_huge_pages()
    keep_freed_memory()
    preload()
    _serve()
