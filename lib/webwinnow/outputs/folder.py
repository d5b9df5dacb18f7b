"""A run's folder: one object for where a command's tables live, on a local disk or on a store.

datatrove's ``DataFolder`` for runs. The runner and the stages see one interface; how a command
is made atomic is the implementation's:

- ``LocalRunFolder`` (a path): a command starting from the crawl builds ``OUT.incomplete`` and
  swaps it in whole (``outputs.swap``); a stage run alone replaces its own tables one at a time;
  ``OUT.lock`` keeps two commands out of one folder.
- ``StoreRunFolder`` (a URI, ``file://`` too): every command writes a generation of its own and
  commits it with one record (``outputs.generations``); nobody reads a generation before that.

The life of a command: ``check_fresh`` or ``check_existing`` (before anything is written), then,
under ``lock()``, ``open`` (before Spark: the log), ``begin`` (Spark is up: where to write),
the stages' tables through ``write``/``meta``/``stamp``, and ``publish`` or, on a failure,
``abandon``.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Protocol

from .. import storage
from ..errors import UserError
from . import tables as _tables

TABLE_META = _tables.TABLE_META
SUMMARY = "summary.json"


class Talk(Protocol):
    """What a folder says to the user (app.console.Console)."""

    def say(self, text: str) -> None: ...
    def log(self, text: str) -> None: ...
    def open_log(self, path: str, append: bool = False, temporary: bool = False) -> None: ...
    def publish_log(self, write: Any) -> None: ...
    def capture(self) -> None: ...


class RunFolder:
    """Where one command reads and writes a run's tables. ``final`` is the run as users read it;
    ``location`` is where this command writes (set by ``open``/``begin``)."""

    final: str
    location: str = ""

    # -- checks, before anything is written ------------------------------------------------------
    def check_fresh(self, *, protected: list[str], force: bool, tables: tuple[str, ...] = ()) -> None:
        """Raise UserError unless a command starting from the crawl may (re)place the run here."""
        raise NotImplementedError

    def check_existing(self, tables: tuple[str, ...]) -> dict[str, dict | None] | None:
        """Raise UserError unless a run is here for a stage run alone; returns its tables' metadata
        (None: an interrupted swap to finish first, under the lock)."""
        raise NotImplementedError

    # -- the command's life ----------------------------------------------------------------------
    def lock(self, command: str, talk: Talk) -> AbstractContextManager:
        return nullcontext()

    def open(self, talk: Talk, *, command: str, fresh: bool, resume: bool, capture: bool, tables: tuple[str, ...]) -> None:
        """Before Spark starts: the log (and, locally, the folder this command writes)."""
        raise NotImplementedError

    def begin(self, talk: Talk, *, command: str, fresh: bool, resume: bool, tables: tuple[str, ...]) -> None:
        """Once Spark is up and can write here: the location of this command's tables."""

    def previous_summary(self) -> dict:
        """The run's summary.json as it was before this command (a stage run alone updates it)."""
        try:
            data = storage.read_bytes(storage.child(self._summary_home(), SUMMARY))
            return json.loads(data) if data else {}
        except (ValueError, OSError):
            return {}

    def _summary_home(self) -> str:
        return self.location

    def publish(self, summary: dict, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> list[str]:
        """Make the command's tables the run's, whole; returns the run's tables."""
        raise NotImplementedError

    def abandon(self, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> None:
        """After a failure: nothing is published; say where the finished tables are."""

    @property
    def unfinished(self) -> str:
        """Where a failed command's finished tables and log are."""
        return self.location or self.final

    @property
    def home(self) -> str:
        """Where this command's tables are read once published."""
        return self.location

    def log_location(self) -> str:
        """Where this command's run.log is (a store's is uploaded there at the end)."""
        return storage.child(self.location or self.unfinished, "run.log")

    def after_disk_full(self, fresh: bool) -> str:
        """Free what the failed command wrote (a disk-full failure); returns what was kept."""
        return ""

    # -- tables ----------------------------------------------------------------------------------
    def meta(self, table: str) -> dict[str, Any] | None:
        return _tables.table_meta(self.location, table)

    def metas(self, tables: tuple[str, ...]) -> dict[str, dict | None]:
        return {t: self.meta(t) for t in tables}

    def stamp(self, table: str, fields: dict[str, Any]) -> None:
        _tables.stamp_table(self.location, table, fields)

    def data_location(self, table: str) -> str:
        return _tables.data_location(self.location, table)

    def child(self, *names: str) -> str:
        return storage.child(self.location, *names)

    def write_summary(self, summary: dict) -> None:
        storage.write_bytes(self.child(SUMMARY), (json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n").encode())


class LocalRunFolder(RunFolder):
    """A path: staged, swapped in whole, locked."""

    def __init__(self, out: str) -> None:
        from .swap import staging_of, trash_of

        self.given = out
        self.path = Path(os.path.abspath(out))
        self.final = str(self.path)
        self.staging = staging_of(self.path)
        self.trash = trash_of(self.path)
        self.missing_parents = False

    def _check_parent(self) -> None:
        parent = self.path.parent
        existing = next(p for p in (parent, *parent.parents) if p.exists() or p.is_symlink())
        if not existing.is_dir():
            raise UserError(f"--out {self.given}: {existing} is a file, not a folder: give an --out whose parents are folders")
        self.missing_parents = existing != parent  # created (mkdir -p) once every check passed
        try:  # access() says yes to root on a read-only filesystem: try for real
            fd, probe = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".probe", dir=existing)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise UserError(
                f"--out {self.given}: cannot write in {existing} ({exc.strerror}): choose a folder you can write"
            ) from None

    def check_fresh(self, *, protected: list[str], force: bool, tables: tuple[str, ...] = ()) -> None:
        from .swap import check_own_or_absent, check_replaceable

        self._check_parent()
        check_replaceable(self.path, tables=tables, protected=protected, force=force)
        for other in (self.staging, self.trash):
            check_own_or_absent(other, tables)

    def check_existing(self, tables: tuple[str, ...]) -> dict[str, dict | None] | None:
        from .swap import swap_pending

        self._check_parent()
        if not self.path.is_dir() and not swap_pending(self.path):
            raise UserError(
                f"{self.final} does not exist or is not a folder: run 'webwinnow run INPUT... --out {self.given}' first"
            )
        if not self.path.is_dir():
            return None
        self.location = self.final
        return {t: _tables.table_meta(self.final, t) for t in tables}

    def lock(self, command: str, talk: Talk) -> AbstractContextManager:
        from .swap import RunLock

        if self.missing_parents:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return _SayingLock(RunLock(self.path, command), talk)

    def open(self, talk: Talk, *, command: str, fresh: bool, resume: bool, capture: bool, tables: tuple[str, ...]) -> None:
        from .swap import MARKER, recover_interrupted_swap, remove_own, write_marker

        repaired = recover_interrupted_swap(self.path)
        if repaired:
            talk.say(repaired)
        if fresh:
            out = self.staging
            if out.exists() and not resume:
                talk.say(f"discarding the unfinished run in {out} (use --resume to continue it)")
                remove_own(out, tables)
            if resume and not out.exists():
                talk.say(f"nothing to resume in {out}: running every stage")
            out.mkdir(exist_ok=True)
            if not (out / MARKER).exists():
                write_marker(out, command)
            talk.open_log(str(out / "run.log"), append=resume)
        else:
            out = self.path
            if (out / MARKER).exists():
                talk.open_log(str(out / "run.log"), append=True)
        self.location = str(out)
        if capture:
            talk.capture()

    def publish(self, summary: dict, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> list[str]:
        self.write_summary(summary)
        if fresh:
            _tables.replace_dir(self.location, self.final)
            self.location = self.final
        return sorted(p.name for p in self.path.iterdir() if p.is_dir() and not p.name.startswith("."))

    def abandon(self, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> None:
        if fresh and self.location:
            kept = [t for t in tables if (Path(self.location) / t / TABLE_META).exists()]
            talk.log(f"finished tables kept in {self.location}: {', '.join(kept) or 'none'}")

    @property
    def unfinished(self) -> str:
        return str(self.staging)

    @property
    def home(self) -> str:
        return self.final

    def after_disk_full(self, fresh: bool) -> str:
        from .swap import prune_for_space

        return prune_for_space(self.staging) if fresh else ""


class _SayingLock:
    """RunLock, saying when it took over the lock of a run that is gone."""

    def __init__(self, lock: Any, talk: Talk) -> None:
        self.lock, self.talk = lock, talk

    def __enter__(self) -> Any:
        self.lock.__enter__()
        if self.lock.stale_owner:
            owner = self.lock.stale_owner
            self.talk.say(f"took over the lock of a run that is gone (pid {owner.get('pid')} on {owner.get('host')})")
        return self.lock

    def __exit__(self, *exc: Any) -> None:
        self.lock.__exit__(*exc)


class StoreRunFolder(RunFolder):
    """A URI: generations and a commit record; no locks (the last command to begin commits)."""

    def __init__(self, out: str) -> None:
        self.given = out
        self.final = out.rstrip("/")
        self._log = ""

    def check_fresh(self, *, protected: list[str], force: bool, tables: tuple[str, ...] = ()) -> None:
        from .generations import check_out

        check_out(self.final, fresh=True, force=force)

    def check_existing(self, tables: tuple[str, ...]) -> dict[str, dict | None] | None:
        from .generations import check_out, current_metas

        check_out(self.final, fresh=False, force=False)
        return current_metas(self.final, tables)

    def open(self, talk: Talk, *, command: str, fresh: bool, resume: bool, capture: bool, tables: tuple[str, ...]) -> None:
        fd, log = tempfile.mkstemp(prefix="webwinnow-", suffix=".log")
        os.close(fd)
        talk.open_log(log, temporary=True)  # on the driver's disk until the generation exists
        if capture:
            talk.capture()

    def begin(self, talk: Talk, *, command: str, fresh: bool, resume: bool, tables: tuple[str, ...]) -> None:
        from .generations import begin, inherit

        gen, resumed = begin(self.final, command, resume=fresh and resume)
        self.location = gen
        talk.publish_log(lambda data: storage.write_bytes(storage.child(gen, "run.log"), data))
        if fresh and resume:
            talk.say(
                f"resuming the unfinished run in {gen}" if resumed else f"nothing to resume in {self.final}: running every stage"
            )
        if not fresh:
            inherit(gen, self.final, tables)

    def _summary_home(self) -> str:
        from .generations import read_current

        record = read_current(self.final) or {}
        return storage.parent(record["summary"]) if record.get("summary") else self.location

    def publish(self, summary: dict, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> list[str]:
        from .generations import publish

        summary["generation"] = self.location
        self.write_summary(summary)
        record = publish(self.final, self.location, tables)
        talk.say(f"committed {storage.basename(self.location)}: {self.final}/_webwinnow_current.json names this run's tables")
        return sorted(record["tables"])

    def abandon(self, talk: Talk, *, fresh: bool, tables: tuple[str, ...]) -> None:
        if self.location:
            talk.log(f"nothing was committed: {self.final} is as it was; this command's finished tables are in {self.location}")

    @property
    def unfinished(self) -> str:
        return self.location or self.final


def run_folder(out: str) -> RunFolder:
    """The folder for --out: a URI (file:// too) is a store's, a path a local disk's."""
    if storage.is_uri(out):
        return StoreRunFolder(out)
    return LocalRunFolder(out)
