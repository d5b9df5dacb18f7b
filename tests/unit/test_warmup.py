"""The driver compiles the kernels once for the workers, and skips loading them when Numba's cache
already holds them as compiled from this source by this Numba (app.warmup)."""

from __future__ import annotations

import pytest

from webwinnow.app import warmup
from webwinnow.app.console import Console


def _main_index():
    from webwinnow.core import kernel

    return kernel._fingerprint_batch._cache._cache_file


def test_a_cache_the_warm_up_wrote_is_fresh_and_the_next_warm_up_loads_nothing(monkeypatch):
    warmup.warm_kernels(Console(quiet=True))  # compiles on a cold cache, loads on a warm one
    assert warmup.kernels_fresh()
    from webwinnow.core import winnowing

    def refuse(*args, **kwargs):
        raise AssertionError("a fresh cache's kernels are not loaded by the driver")

    monkeypatch.setattr(winnowing, "fingerprint_batch", refuse)
    warmup.warm_kernels(Console(quiet=True))


@pytest.fixture
def unremembered(monkeypatch):
    """kernels_fresh asks Numba: these tests make an index stale in memory, which the remembered
    answer (stamps of files) cannot see."""
    from webwinnow.stages import _kernels

    monkeypatch.setattr(_kernels, "_remembered_fresh", lambda: False)


@pytest.mark.parametrize("field", ["_source_stamp", "_version"])
def test_an_index_from_another_source_or_numba_is_stale(monkeypatch, field, unremembered):
    warmup.warm_kernels(Console(quiet=True))
    monkeypatch.setattr(_main_index(), field, b"another" if field == "_source_stamp" else "0.0.0")
    assert not warmup.kernels_fresh()
    called = []
    from webwinnow.core import winnowing

    real = winnowing.fingerprint_batch
    monkeypatch.setattr(winnowing, "fingerprint_batch", lambda *a, **k: called.append(1) or real(*a, **k))
    warmup.warm_kernels(Console(quiet=True))
    assert called  # warmed up again


def test_a_module_never_compiled_is_not_fresh(monkeypatch, tmp_path, unremembered):
    from numba.core.dispatcher import Dispatcher

    from webwinnow.core import kernel
    from webwinnow.core.jit import made

    made()

    for value in vars(kernel).values():
        if isinstance(value, Dispatcher):
            monkeypatch.setattr(value._cache._cache_file, "_index_path", str(tmp_path / "none.nbi"))
    assert not warmup.kernels_fresh()


def test_the_warm_up_calls_the_edge_kernel_with_the_types_the_passages_stage_does():
    """Numba keeps a compiled version per argument types: a warm-up call with other types
    (writable arrays where the stage passes Arrow's read-only ones) left every worker loading
    the stage's version itself."""
    import numpy as np
    import pyarrow as pa

    from webwinnow.analysis import template
    from webwinnow.analysis.boilerplate import HashSet
    from webwinnow.config import RunConfig
    from webwinnow.stages._kernels import exercise
    from webwinnow.stages.passages import edge_arrow

    exercise()
    versions = len(template._batch_edge_hashes.overloads)
    pages = pa.RecordBatch.from_arrays([pa.array(["a page of text " * 40, "another page " * 30])], names=["text"])
    list(edge_arrow(pages, RunConfig(), HashSet(np.array([1, 2, 3], np.int64))))
    assert len(template._batch_edge_hashes.overloads) == versions


_GROWS = """
import dataclasses
import numpy as np
import pyarrow as pa
from webwinnow.analysis import batchspans, windows
from webwinnow.config import RunConfig
from webwinnow.core.winnowing import fingerprint_batch
from webwinnow.stages._kernels import exercise
from webwinnow.stages._sides import GROW_ROWS, SEEDS, GrowingPages, PagesB, listed_seeds, packed_seeds
from webwinnow.stages._windows import WINDOWS, pair_chunks, window_arrow, with_a_windows
from webwinnow.stages.passages import grow_arrow, min_content, settle

exercise()
kernels = (batchspans._batch_passages, windows._batch_windows)
versions = [len(k.overloads) for k in kernels]
cfg = RunConfig()
w = cfg.winnow
copied = " ".join(f"x{i * 31 % 997}y" for i in range(400))
texts = ["another page, " + copied + " and more", "this page: " + copied]
fp = fingerprint_batch(pa.array(texts), w.k, w.w, w.robust)
at = [dict(zip(fp.hashes[fp.doc == d].tolist(), fp.positions[fp.doc == d].tolist())) for d in (0, 1)]
seeds = [{"pos_a": at[0][h], "pos_b": at[1][h]} for h in sorted(set(at[0]) & set(at[1]))]
assert seeds
boilerplate, template = np.sort(fp.hashes[:5]), np.sort(fp.hashes[5:7])
request = pa.RecordBatch.from_pydict({"doc_id": [1], "requests": [[{"doc_a": 0, "doc_b": 1, "side": 1,
    "lo": min(x["pos_b"] for x in seeds), "hi": max(x["pos_b"] for x in seeds)}]], "text": texts[1:]})
window = pa.Table.from_batches(list(window_arrow(request, cfg, boilerplate, template, texts=False)), schema=WINDOWS)
columns = {name: window.column(name) for name in WINDOWS.names}
columns["seeds"] = packed_seeds(pa.array([seeds], SEEDS))
page = {f.name: pa.nulls(1, f.type) for f in GROW_ROWS}
page.update(doc_a=pa.array([0], pa.int64()), doc_b=pa.array([-1], pa.int64()), side=pa.array([-1], pa.int32()),
            text=pa.array(texts[:1]))
rows = pa.concat_tables([pa.table(page, schema=GROW_ROWS),
    pa.table({f.name: columns.get(f.name, pa.nulls(1, f.type)) for f in GROW_ROWS}, schema=GROW_ROWS)])
growing = GrowingPages()
growing.add(np.array([1], np.int64), pa.array(texts[1:]))
grown = 0
for pages_b in (PagesB.of(np.array([1], np.int64), pa.array(texts[1:])), growing):
    for whole in (False, True):
        for chunk in pair_chunks(rows.to_batches()):
            table = with_a_windows(listed_seeds(chunk), cfg, boilerplate, template, whole)
            got = grow_arrow(table, cfg, pages_b)
            settle(got, table, min_content(cfg), whole)
            grown += got.num_rows
assert grown, "no passage grown"
assert [len(k.overloads) for k in kernels] == versions, "a grow task loaded another version"
"""


def test_the_warm_up_calls_the_windows_and_spans_kernels_with_the_types_the_grow_tasks_do():
    """A grow task's window and span kernels, warmed up through the stage's own functions: on a
    first run each worker compiled its own (the sample's passages stage, 20 s), and on every run
    each loaded its own. In a new process, after the warm-up, both paths of the grow tasks (pages
    b held whole, pages b gathered as Spark's rows bring them), windows around seeds and whole
    pages, use only what it loaded."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _GROWS], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]


_COUNTS_AND_SEEDS = """
import pyarrow as pa
from webwinnow.analysis import pairing
from webwinnow.stages._kernels import exercise
from webwinnow.stages.candidates import seed_arrow
from webwinnow.stages.hash_freq import HOSTED, counted_arrow

exercise()
kernels = (pairing._fill_seeds, pairing._distinct_valid_per_run)
versions = [len(k.overloads) for k in kernels]
assert all(versions), "the warm-up calls both"
n = 60
rows = pa.table({"hash": [i // 6 for i in range(n)], "doc_id": [100 + i % 7 for i in range(n)],
                 "pos": [3 * i for i in range(n)], "host_id": [None if i % 5 else i % 3 for i in range(n)],
                 "file": [1] * n}, schema=HOSTED)
rows = rows.sort_by([("hash", "ascending"), ("doc_id", "ascending"), ("pos", "ascending")])

class Dropped:
    def write(self, batch):
        pass

counted = [b for size in (None, 25) for b in counted_arrow(rows.to_batches(max_chunksize=size), Dropped())]
seeds = [b for size in (None, 25) for b in seed_arrow(rows.select(["hash", "doc_id", "pos"]).to_batches(max_chunksize=size), 6)]
assert counted and sum(b.num_rows for b in seeds)
assert [len(k.overloads) for k in kernels] == versions, "a task loaded another version"
"""


def test_the_warm_up_calls_the_counting_and_seeding_kernels_with_the_types_their_tasks_do():
    """hash_freq's counting tasks and the candidates stage's seeding tasks, on Arrow rows sorted
    as their partitions are: after the warm-up, in a new process, they use only what it loaded
    (each worker compiled its own on a first run before)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _COUNTS_AND_SEEDS], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_warm_up_calls_the_normalizer_with_the_types_the_clusters_tasks_do():
    """The extract tasks key the texts they read (their text keys for the clusters stage), and
    the clusters stage's tasks key texts from a documents file's row groups when there are none
    (clusters.keyed_arrow): a warm-up that called the keying kernel otherwise left each worker
    loading that version itself (0.3 CPU-s a worker). In a new process: what the warm-up loaded
    is all the keying uses."""
    import subprocess
    import sys

    code = (
        "import pyarrow as pa\n"
        "from webwinnow.core import kernel\n"
        "from webwinnow.stages._kernels import exercise\n"
        "from webwinnow.stages.clusters import keyed_arrow\n"
        "exercise()\n"
        "versions = len(kernel._text_keys.overloads)\n"
        "rows = pa.table({'doc_id': [1, 2], 'text': ['a page of text ' * 40, None], 'status': ['ok', 'ok']})\n"
        "list(keyed_arrow(rows.to_batches()))\n"
        "assert len(kernel._text_keys.overloads) == versions, 'the keying loaded another version'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_cold_warm_up_compiles_its_groups_in_helper_processes_at_once_and_loads_them_all(monkeypatch):
    """Numba compiles one function at a time: on a cold cache each group of the warm-up's calls
    but the first compiles in a helper process while the driver compiles the first; the driver
    then makes every group's calls itself (loading what the helpers compiled), and when a helper
    cannot start it compiles them itself."""
    from webwinnow.stages import _kernels

    events = []
    monkeypatch.setattr(warmup, "kernels_fresh", lambda: False)
    monkeypatch.setattr(_kernels, "_CALLS", tuple((lambda i=i: events.append(("call", i))) for i in range(3)))
    monkeypatch.setattr(_kernels, "GROUPS", 3)

    class Helper:
        def __init__(self, group):
            self.group = group
            events.append(("start", group))

        def wait(self):
            events.append(("wait", self.group))

    monkeypatch.setattr(warmup, "_helper", Helper)
    warmup.warm_kernels(Console(quiet=True))
    assert events == [("start", 1), ("start", 2), ("call", 0), ("wait", 1), ("wait", 2), ("call", 1), ("call", 2)]
    events.clear()
    monkeypatch.setattr(warmup, "_helper", lambda group: None)  # could not start
    warmup.warm_kernels(Console(quiet=True))
    assert events == [("call", 0), ("call", 1), ("call", 2)]


def test_a_helper_process_makes_its_groups_calls_with_this_package():
    """The helper runs this interpreter on this package (its folder first on the path), whatever
    the driver's working folder, and its group's kernels are in the cache after it."""
    from webwinnow.stages._kernels import GROUPS
    from webwinnow.text import html2text

    helper = warmup._helper(GROUPS - 1)
    assert helper is not None and helper.wait() == 0
    assert html2text._prepare._cache._cache_file._load_index(), "the last group's HTML kernel is cached"


def test_the_warm_up_calls_a_kernel_of_every_module_it_checks():
    """kernels_fresh wants every module of WARMED indexed: a module whose kernel the warm-up
    never calls (the union-find, which components() runs as a Python loop on few edges) is
    never indexed by it, and every run would then warm up again."""
    import subprocess
    import sys

    code = (
        "import importlib\n"
        "from webwinnow.stages._kernels import WARMED, exercise\n"
        "from webwinnow.core.jit import made\n"
        "exercise()\n"
        "made()\n"
        "from numba.core.dispatcher import Dispatcher\n"
        "for name in WARMED:\n"
        "    module = importlib.import_module('webwinnow.' + name)\n"
        "    used = [k for k, d in vars(module).items() if isinstance(d, Dispatcher) and d.overloads]\n"
        "    assert used, name\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def _stale_index(path) -> None:
    """An index as Numba writes it, stamped for another source of its module."""
    import pickle

    import numba

    with open(path, "wb") as fh:
        pickle.dump(numba.__version__, fh)
        fh.write(pickle.dumps(((0.0, 0), {})))


def test_the_warm_up_drops_the_stale_index_of_a_kernel_compiled_only_inside_others(tmp_path, monkeypatch):
    """windows._in_set is compiled inside the window and template-edge kernels, never through
    its own entry: after a change of its module's source its own index stayed stale, and
    kernels_fresh then said every run's cache needed filling. The warm-up removes such an index
    (one it did not make again); a kernel it called keeps its index."""
    from webwinnow.analysis import windows
    from webwinnow.core import kernel
    from webwinnow.stages._kernels import drop_stale_indexes, exercise

    exercise()
    assert not windows._in_set.overloads and kernel._normalize.overloads
    stale, called = tmp_path / "in_set.nbi", tmp_path / "normalize.nbi"
    for path, dispatcher in ((stale, windows._in_set), (called, kernel._normalize)):
        _stale_index(path)
        monkeypatch.setattr(dispatcher._cache._cache_file, "_index_path", str(path))
    assert not warmup.kernels_fresh(remembered=False)
    assert drop_stale_indexes() == [str(stale)]
    assert not stale.exists() and called.exists()


def test_a_fresh_answer_is_remembered_until_an_index_changes(tmp_path, monkeypatch):
    """The driver answers from the remembered stamps without importing Numba; an index file
    rewritten since (another signature compiled, a cache cleared) makes it ask Numba again."""
    import json
    import os
    import subprocess
    import sys

    from webwinnow.core import diskcache
    from webwinnow.stages import _kernels

    monkeypatch.setattr(diskcache, "cache_dirs", lambda: [tmp_path])
    warmup.warm_kernels(Console(quiet=True))
    assert _kernels.kernels_fresh(remembered=False)
    (marker,) = tmp_path.glob("kernels-fresh-*.json")
    listed = json.loads(marker.read_text())["indexes"]
    assert listed and all(os.path.exists(path) for path, _, _ in listed)
    assert _kernels._remembered_fresh()

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from webwinnow.core import diskcache\n"
        f"diskcache.cache_dirs = lambda: [Path({str(tmp_path)!r})]\n"
        "from webwinnow.stages._kernels import kernels_fresh\n"
        "assert kernels_fresh()\n"
        "import webwinnow.stages.extract, webwinnow.stages.passages, webwinnow.stages.clusters\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    path, mtime, size = listed[0]
    marker.write_text(json.dumps({"indexes": [[path, mtime - 1, size], *listed[1:]]}))  # as if rewritten since
    assert not _kernels._remembered_fresh()
    assert _kernels.kernels_fresh()  # asked Numba, which says fresh: remembered again
    assert _kernels._remembered_fresh()
