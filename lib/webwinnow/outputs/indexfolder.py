"""Where an index is written: a new one whole, an existing one under a lock.

On a local disk a new index is built in ``IDX.incomplete`` and renamed (or swapped) into place
when complete, and appends and compactions hold ``IDX.lock``. On a store nothing can be renamed
or locked: a new index is written in place (its manifest, written last, is what makes it an
index) and one writer at a time is the user's to keep. An append commits by its manifest either
way (``index.layout``).
"""

from __future__ import annotations

import os
import shutil
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from .. import storage
from ..errors import UserError
from ..index import layout

#: What a build writes in IDX.incomplete: the index's own names, and the run folder it reads the
#: crawl into (with the run's staging, lock and trash beside it).
_BUILD_NAMES = {*layout.KEYS, "directory", "segments", layout.MANIFEST}


def _unfinished_build(folder: Path) -> bool:
    """Whether folder holds only what an interrupted build writes (so it may be removed)."""
    return all(p.name in _BUILD_NAMES or p.name.startswith(("_source", layout.MANIFEST)) for p in folder.iterdir())


def check_new_index(idx: str, force: bool, protected: list[str]) -> bool:
    """Whether --out IDX may be written: absent, an empty folder, or (with --force) an index.
    Returns whether something is there to replace."""
    there = storage.info(idx)
    if there is None:
        return False
    if not there.is_dir:
        raise UserError(f"--out {idx} is a file: give a folder for the index")
    try:
        layout.read_manifest(idx)
        is_index = True
    except layout.NotAnIndex:
        is_index = False
    entries = storage.walk(idx, recursive=False)
    if not is_index and entries:
        raise UserError(
            f"--out {idx} exists and is not a webwinnow index: webwinnow writes an index only where "
            "nothing is or where it made one; choose another --out"
        )
    if is_index and not force:
        raise UserError(
            f"--out {idx} is an index already: add a crawl to it with 'webwinnow index --append INPUT... "
            f"--index {idx}', or replace it with --force"
        )
    for path in protected:
        if not storage.is_uri(path) and Path(path).resolve().is_relative_to(Path(idx).resolve()):
            raise UserError(f"{path} is inside --out {idx}, which --force would replace: move it out first")
    return bool(entries)


class NewIndex:
    """A new index at idx: `where` is written, then `publish()` puts it in place."""

    def __init__(self, idx: str, replacing: bool) -> None:
        self.idx = idx
        self.replacing = replacing  # something (an index, or an empty folder) is at idx now
        self.local = not storage.is_uri(idx)
        self.where = f"{idx}.incomplete" if self.local else idx

    def prepare(self) -> None:
        """Clear what an interrupted build of this index left (nothing else), and make room."""
        if not self.local:
            return
        staging = Path(self.where)
        if staging.exists():
            if not _unfinished_build(staging):
                raise UserError(f"{self.where} exists and is not an unfinished index: move it away")
            shutil.rmtree(staging)
        Path(self.idx).parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()

    def publish(self) -> None:
        if not self.local:
            return
        from .tables import replace_dir

        if self.replacing:  # an index (--force): swapped, the old one removed after
            replace_dir(self.where, self.idx)
            return
        if Path(self.idx).exists():
            Path(self.idx).rmdir()  # an empty folder, checked before
        os.rename(self.where, self.idx)


def index_lock(idx: str) -> AbstractContextManager:
    """IDX.lock on a local disk, held by an append or a compaction; nothing on a store."""
    if storage.is_uri(idx):
        return nullcontext()  # a store has no flock: one writer at a time is the user's to keep
    from .swap import RunLock

    return RunLock(Path(idx), "webwinnow index")
