"""The local daemon's path: Spark's zips of pyspark and py4j leave it only for the same pyspark,
installed in a folder beside a py4j."""

from __future__ import annotations

import zipfile

import pytest

from webwinnow.stages._daemon import installed_path

VERSION = b'__version__: str = "4.3.0"\n'


def _spark(tmp_path, version: bytes = VERSION):
    lib = tmp_path / "spark" / "lib"
    lib.mkdir(parents=True)
    with zipfile.ZipFile(lib / "pyspark.zip", "w") as z:
        z.writestr("pyspark/version.py", version)
    with zipfile.ZipFile(lib / "py4j-0.10.9.9-src.zip", "w") as z:
        z.writestr("py4j/__init__.py", b"")
    return [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]


def _installed(tmp_path, version: bytes = VERSION, py4j: bool = True) -> str:
    site = tmp_path / "site"
    (site / "pyspark").mkdir(parents=True)
    (site / "pyspark" / "version.py").write_bytes(version)
    if py4j:
        (site / "py4j").mkdir()
    return str(site)


def test_the_zips_leave_the_path_for_the_same_installed_pyspark(tmp_path):
    zips = _spark(tmp_path)
    path = ["/app", *zips, "/usr/lib/python3.11", _installed(tmp_path)]
    assert installed_path(path) == ["/app", "/usr/lib/python3.11", path[-1]]


def test_another_version_or_no_py4j_or_no_installed_copy_keeps_sparks_path(tmp_path):
    zips = _spark(tmp_path)
    other = ["/app", *zips, _installed(tmp_path / "a", b'__version__: str = "4.2.0"\n')]
    assert installed_path(other) == other
    no_py4j = [*zips, _installed(tmp_path / "b", py4j=False)]
    assert installed_path(no_py4j) == no_py4j
    alone = ["/app", *zips]
    assert installed_path(alone) == alone


def test_a_path_without_sparks_zip_or_with_a_damaged_one_is_kept(tmp_path):
    site = _installed(tmp_path)
    assert installed_path(["/app", site]) == ["/app", site]
    bad = tmp_path / "pyspark.zip"
    bad.write_bytes(b"not a zip")
    assert installed_path([str(bad), site]) == [str(bad), site]


def _jar(path, names: dict[str, bytes]) -> str:
    """A jar as the jar tool writes it: each folder an entry of its own."""
    folders = sorted({name[: i + 1] for name in names for i, c in enumerate(name) if c == "/"})
    with zipfile.ZipFile(path, "w") as z:
        for name in folders:
            z.writestr(name, b"")
        for name, data in names.items():
            z.writestr(name, data)
    return str(path)


def test_jars_without_python_leave_with_the_zips_and_jars_with_python_stay(tmp_path):
    zips = _spark(tmp_path)
    core = _jar(tmp_path / "spark-core_2.13-4.3.0.jar", {"org/apache/spark/SparkContext.class": b"\xca\xfe"})
    python = _jar(tmp_path / "with-python.jar", {"pkg/__init__.py": b"", "org/A.class": b""})
    site = _installed(tmp_path)
    assert installed_path(["/app", *zips, core, python, site]) == ["/app", python, site]
    # another pyspark installed: Spark's path as it was, its jar too
    other = ["/app", *zips, core, _installed(tmp_path / "o", b'__version__: str = "4.2.0"\n')]
    assert installed_path(other) == other


_LEAVES = """
import importlib, sys, zipimport
jar = sys.argv[1]
sys.path.insert(0, jar)
try:  # as the standard library's copy module probes for Jython
    from org.python.core import PyStringMap  # noqa: F401
except ImportError:
    pass
assert "org" in sys.modules and any(k.startswith(jar) for k in sys.path_importer_cache)
if sys.argv[2] == "leave":
    from webwinnow.stages._daemon import leave_path
    leave_path([p for p in sys.path if p != jar])
else:
    sys.path.remove(jar)
reads = []
original = zipimport._read_directory
zipimport._read_directory = lambda archive: reads.append(archive) or original(archive)
importlib.invalidate_caches()
print(len(reads), "org" in sys.modules, sum(k.startswith(jar) for k in sys.path_importer_cache))
"""


@pytest.mark.parametrize("how,expected", [("leave", "0 False 0"), ("remove", None)])
def test_an_archive_that_left_the_path_is_not_read_again_when_the_import_caches_are_invalidated(tmp_path, how, expected):
    """pyspark's worker invalidates the import caches on its first task: an importer left for a
    jar that left the path read its directory again (45-56 ms for Spark's core jar, a worker)."""
    import subprocess
    import sys

    jar = _jar(tmp_path / "core.jar", {f"org/apache/C{i}.class": b"" for i in range(50)})
    got = subprocess.run([sys.executable, "-c", _LEAVES, jar, how], capture_output=True, text=True, check=True).stdout.split()
    if expected:
        assert " ".join(got) == expected
    else:  # only taking it off the path: the jar's importers stay, and read it again
        assert int(got[0]) >= 1 and got[1] == "True"


def test_the_collector_collects_a_tasks_cycles_and_freezes_what_outlives_it():
    import gc
    import weakref

    from webwinnow.stages._daemon import FreezingCollector

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    collector = FreezingCollector()
    assert collector.isenabled is gc.isenabled  # the rest of gc as pyspark's daemon finds it
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection between the steps
    try:
        kept = Node()
        first = cycle()
        assert collector.collect() >= 2 and first() is None
        assert gc.get_freeze_count() > 0
        assert gc.is_tracked(kept) and all(o is not kept for o in gc.get_objects())  # frozen: not walked
        second = cycle()  # a later task's garbage is collected after the freeze too
        assert collector.collect() >= 2 and second() is None
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def test_huge_pages_go_off_for_the_process_and_what_it_starts():
    import subprocess
    import sys

    code = (
        "import subprocess; from webwinnow.stages._daemon import no_huge_pages; print(no_huge_pages()); "
        "print(open('/proc/self/status').read().count('THP_enabled:\\t0')); "
        "print(subprocess.run(['grep', '-c', 'THP_enabled:.0', '/proc/self/status'], capture_output=True, text=True).stdout.strip())"
    )
    with open("/proc/self/status") as fh:
        if "THP_enabled" not in fh.read():
            pytest.skip("this kernel does not say whether a process may take huge pages")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert got == ["True", "1", "1"]  # set, and inherited by a child process


_REUSE = """
import os, resource, sys
import numpy as np
from webwinnow.stages._daemon import keep_freed_memory, no_huge_pages
no_huge_pages()  # as the daemon: pages of 4 KiB, counted one fault each
print(",".join(keep_freed_memory()) or "-")
import pyarrow as pa
print(pa.default_memory_pool().backend_name)
def faults(size):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = np.empty(size, np.uint8)
    a[::4096] = 1  # every page touched
    del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
faults(200 << 20)
print(faults(200 << 20), faults(40 << 20))
"""


def _reuse(env_extra: dict) -> list[str]:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "ARROW_DEFAULT_MEMORY_POOL"))}
    return subprocess.run(
        [sys.executable, "-c", _REUSE], capture_output=True, text=True, check=True, env={**env, **env_extra}
    ).stdout.split()


def test_freed_memory_is_reused_without_faulting_it_in_again_unless_the_user_chose():
    """A 200 MB array freed and made again is not faulted in a second time (51,200 pages of 4 KiB
    did each time: glibc maps such an allocation on its own and unmaps it when freed); Arrow
    allocates from the same heap; what the user set in the environment is left as it is."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt  # noqa: B018 - whether the C library is glibc's
    except (OSError, AttributeError):
        pytest.skip("no glibc mallopt here: nothing is changed")
    changed, pool, again, smaller = _reuse({})
    assert changed == "malloc_mmap_max,malloc_trim_threshold,arrow_system_pool" and pool == "system"
    assert int(again) < 1000 and int(smaller) < 1000  # a few pages of NumPy's own, not 51,200
    # the user's own choices: nothing of ours, and the allocation is faulted in again as glibc does
    changed, pool, again, _ = _reuse(
        {"MALLOC_MMAP_MAX_": "65536", "MALLOC_TRIM_THRESHOLD_": "131072", "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}
    )
    assert changed == "-" and pool == "mimalloc" and int(again) > 40_000


def test_the_daemon_preloads_every_module_it_names_and_its_forked_children_run_kernels():
    """Each name of PRELOADED imports (a renamed module would quietly cost every worker its
    imports again); a name that does not is returned, not raised; and a child forked after the
    preload (as pyspark's daemon forks its workers) runs NumPy, Arrow and a Numba kernel."""
    import subprocess
    import sys

    code = (
        "import gc, os, sys\n"
        "from webwinnow.stages._daemon import PRELOADED, preload\n"
        "print(preload(PRELOADED + ('webwinnow.no_such_module',)), gc.get_freeze_count() > 0)\n"
        "sys.stdout.flush()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    import numpy as np, pyarrow as pa\n"
        "    from webwinnow.core.winnowing import fingerprint\n"
        "    h, p = fingerprint('a shared sentence of some length ' * 20, 5, 4)\n"
        "    ok = len(h) > 0 and pa.array(np.sort(h)).to_numpy().tolist() == sorted(h.tolist())\n"
        "    os._exit(0 if ok else 1)\n"
        "print(os.waitpid(pid, 0)[1])\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout
    assert got.split("\n")[:2] == ["['webwinnow.no_such_module'] True", "0"]


_PAUSED = (
    "import gc, sys\n"
    "from webwinnow.stages._daemon import PRELOADED, paused_collection, preload\n"
    "ran = []\n"
    "gc.callbacks.append(lambda phase, info: ran.append(info['generation']) if phase == 'start' else None)\n"
    "if sys.argv[1] == 'disabled':\n"
    "    gc.disable()\n"
    "if sys.argv[1] == 'unfrozen':\n"
    "    with paused_collection(freeze=False):\n"
    "        import pyarrow, numba\n"
    "else:\n"
    "    preload(PRELOADED)\n"
    "print(len(ran), gc.get_freeze_count() > 0, gc.isenabled())\n"
)


@pytest.mark.parametrize(
    "before,expected", [("enabled", "0 True True"), ("disabled", "0 True False"), ("unfrozen", "0 False True")]
)
def test_the_preload_runs_no_collection_freezes_and_leaves_the_collector_as_it_found_it(before, expected):
    """Importing PRELOADED set off full collections that walked every module loaded so far: none
    runs while the daemon imports (the count of collections is 0, where a plain import of the
    same modules runs dozens), what it loaded is frozen, and automatic collection is back on only
    where it was on. freeze=False (the driver's start, in a process it does not own) freezes nothing."""
    import subprocess
    import sys

    got = subprocess.run([sys.executable, "-c", _PAUSED, before], capture_output=True, text=True, check=True, timeout=300)
    assert got.stdout.strip() == expected
    plain = _PAUSED.replace("preload(PRELOADED)", "[__import__(n) for n in PRELOADED]")
    again = subprocess.run([sys.executable, "-c", plain, "enabled"], capture_output=True, text=True, check=True, timeout=300)
    assert int(again.stdout.split()[0]) > 0  # what the pause spares: the test can tell


@pytest.mark.parametrize("kernels", [True, False])
def test_the_daemon_loads_the_warm_up_kernels_before_it_forks_when_the_cache_holds_them(kernels):
    """With Numba's cache fresh (the driver's warm-up wrote it), the preload loads the kernels,
    and a child forked after it runs one without loading anything; kernels=False, as before this
    step: the child loads it itself."""
    import subprocess
    import sys

    from webwinnow.app.console import Console
    from webwinnow.app.warmup import kernels_fresh, warm_kernels

    warm_kernels(Console(quiet=True))
    assert kernels_fresh()
    code = (
        "import os, sys\n"
        "from webwinnow.stages._daemon import preload\n"
        f"preload(kernels={kernels})\n"
        "from webwinnow.core import kernel\n"
        "from webwinnow.text import html2text\n"
        "loaded = [len(d.overloads) for d in (kernel._fingerprint_batch, html2text._prepare)]\n"
        "print(loaded)\n"
        "sys.stdout.flush()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    from webwinnow.text.html2text import html_to_text\n"
        "    ok = html_to_text('<p>a page</p>') == 'a page' and len(html2text._prepare.overloads) == 1\n"
        "    os._exit(0 if ok else 1)\n"
        "print(os.waitpid(pid, 0)[1])\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout
    assert got.split("\n")[:2] == ["[1, 1]" if kernels else "[0, 0]", "0"]


@pytest.mark.parametrize("how, code", [("SystemExit(0)", 0), ("SystemExit(1)", 1), ("SystemExit('stopped')", 1), ("None", 0)])
def test_the_daemon_ends_with_pysparks_code_without_the_interpreters_teardown(tmp_path, how, code):
    """pyspark's daemon leaves by sys.exit (or returns): the process ends with that code, its
    standard output flushed, and no atexit handler or module teardown run (which took 0.1 s
    with the workers' modules loaded, waited for at the end of every local run)."""
    import subprocess
    import sys

    marker = tmp_path / "torn-down"
    script = f"""
import atexit, sys
import pyspark.daemon
from webwinnow.stages import _daemon
atexit.register(lambda: open({str(marker)!r}, "w").write("atexit ran"))
def manager():
    sys.stdout.write("served")  # buffered: written only if the daemon flushes it
    value = {how}
    if value is not None:
        raise value
pyspark.daemon.manager = manager
_daemon._serve()
sys.stdout.write(" and returned")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    assert done.stdout == "served" and not marker.exists()
