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
