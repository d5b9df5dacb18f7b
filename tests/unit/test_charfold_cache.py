"""The fold table's disk cache: what a worker loads is exactly what building gives, or it builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from webwinnow.core import charfold, diskcache


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    monkeypatch.setattr(diskcache, "cache_dirs", lambda: [tmp_path])
    charfold.fold_table.cache_clear()
    yield tmp_path
    charfold.fold_table.cache_clear()


def test_loaded_table_equals_the_built_one_and_is_stored_readable(fresh):
    built = charfold._build()
    fold, expand = charfold.fold_table()
    assert np.array_equal(fold, built[0]) and np.array_equal(expand, built[1])
    stored = fresh / charfold.table_cache_name()
    assert stored.is_file() and stored.stat().st_mode & 0o044  # others can read a shared cache
    assert [p.name for p in fresh.iterdir()] == [stored.name]  # no temporary left behind
    before = stored.stat()
    charfold.fold_table.cache_clear()
    again = charfold.fold_table()
    after = stored.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # loaded, not rebuilt
    assert np.array_equal(again[0], fold) and np.array_equal(again[1], expand)


def test_damaged_or_foreign_cache_files_are_rebuilt(fresh):
    name = charfold.table_cache_name()
    (fresh / name).write_bytes(b"not an npz file")
    fold, _ = charfold.fold_table()
    assert fold[ord("A")] == ord("a") and fold[ord(" ")] == 0
    charfold.fold_table.cache_clear()
    np.savez(fresh / name, fold=np.zeros(10, np.int32), expand=np.zeros(1, np.int32))  # wrong shape
    assert diskcache.load(fresh / name, ("fold", "expand")) is not None  # readable, yet not valid
    fold, _ = charfold.fold_table()
    assert fold[ord("ß")] < 0  # expands (ß -> ss): the real table, not the foreign one
    assert len(fold) == charfold.MAX_CODE_POINT + 1


def test_the_name_changes_with_the_unicode_version_and_the_code():
    name = charfold.table_cache_name()
    assert diskcache.cache_name("charfold-14.0.0", "0.0.0") != diskcache.cache_name("charfold-14.0.0", "14.0.0")
    assert diskcache.cache_name("t", "v", code=(charfold.is_kept,)) != diskcache.cache_name("t", "v", code=(charfold.fold_char,))
    assert name.startswith(f"charfold-{charfold.UNICODE_VERSION}-") and name.endswith(".npz")


def test_cache_folders_follow_numba(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    dirs = diskcache.cache_dirs()
    assert dirs[0] == tmp_path and dirs[1] == Path(diskcache.__file__).resolve().parent / "__pycache__"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert diskcache.cache_dirs()[0] == dirs[1]


def test_an_unwritable_cache_folder_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")  # a file where the folder should be: unwritable even for root
    arrays = {"a": np.arange(5)}
    assert not diskcache.store(blocker / "cache", "t.npz", arrays)
    monkeypatch.setattr(diskcache, "cache_dirs", lambda: [blocker / "cache", tmp_path / "ok"])
    got = diskcache.cached("t.npz", ("a",), lambda: arrays, lambda a: True)
    assert np.array_equal(got["a"], arrays["a"]) and (tmp_path / "ok" / "t.npz").is_file()
    monkeypatch.setattr(diskcache, "cache_dirs", lambda: [blocker / "cache"])
    assert np.array_equal(diskcache.cached("u.npz", ("a",), lambda: arrays, lambda a: True)["a"], arrays["a"])
