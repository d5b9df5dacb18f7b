"""The fold table's disk cache: what a worker loads is exactly what building gives, or it builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from webwinnow.core import charfold


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    monkeypatch.setattr(charfold, "_cache_dirs", lambda: [tmp_path])
    charfold.fold_table.cache_clear()
    yield tmp_path
    charfold.fold_table.cache_clear()


def test_loaded_table_equals_the_built_one_and_is_stored_readable(fresh):
    built = charfold._build()
    fold, expand = charfold.fold_table()
    assert np.array_equal(fold, built[0]) and np.array_equal(expand, built[1])
    stored = fresh / charfold._cache_name()
    assert stored.is_file() and stored.stat().st_mode & 0o044  # others can read a shared cache
    assert not [p for p in fresh.iterdir() if p.name.startswith(".charfold-")]  # no temporary left
    before = stored.stat()
    charfold.fold_table.cache_clear()
    again = charfold.fold_table()
    after = stored.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # loaded, not rebuilt
    assert np.array_equal(again[0], fold) and np.array_equal(again[1], expand)


def test_damaged_or_foreign_cache_files_are_rebuilt(fresh):
    name = charfold._cache_name()
    (fresh / name).write_bytes(b"not an npz file")
    fold, _ = charfold.fold_table()
    assert fold[ord("A")] == ord("a") and fold[ord(" ")] == 0
    charfold.fold_table.cache_clear()
    np.savez(fresh / name, fold=np.zeros(10, np.int32), expand=np.zeros(1, np.int32))  # wrong shape
    assert charfold._load(fresh / name) is None
    fold, _ = charfold.fold_table()
    assert fold[ord("ß")] < 0  # expands (ß -> ss): the real table, not the foreign one


def test_the_name_changes_with_the_unicode_version(fresh, monkeypatch):
    name = charfold._cache_name()
    monkeypatch.setattr(charfold, "UNICODE_VERSION", "0.0.0")
    assert charfold._cache_name() != name and "0.0.0" in charfold._cache_name()


def test_cache_folders_follow_numba(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    dirs = charfold._cache_dirs()
    assert dirs[0] == tmp_path and dirs[1] == Path(charfold.__file__).resolve().parent / "__pycache__"


def test_an_unwritable_cache_folder_is_skipped(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")  # a file where the folder should be: unwritable even for root
    table = np.zeros(charfold.MAX_CODE_POINT + 1, np.int32), np.zeros(1, np.int32)
    assert not charfold._store(blocker / "cache", "t.npz", *table)
    assert charfold._store(tmp_path / "cache", "t.npz", *table)
    assert charfold._load(tmp_path / "cache" / "t.npz") is not None
