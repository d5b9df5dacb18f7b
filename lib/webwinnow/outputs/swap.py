"""The --out folder: webwinnow replaces only what it made, one run at a time.

A fresh run (``run``, ``extract``) builds ``OUT.incomplete`` beside ``OUT`` and swaps it in when
every stage succeeded. Before any work it checks that ``OUT`` is absent, empty, or a folder
webwinnow made (its marker file, and nothing in it that webwinnow does not write); anything
else is refused with the reason, and ``--force`` may replace a foreign folder but never a file,
never a folder holding an input of the run, the working directory, the home folder or ``/``.
A lock file ``OUT.lock`` (owner's PID, host and start time, held with ``flock`` so a dead owner
never blocks) keeps two runs out of one ``OUT``.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import socket
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import UserError
from .tables import TABLE_META

MARKER = ".webwinnow-output"
#: What webwinnow puts at the top of an output folder besides the tables.
_OWN_FILES = {MARKER, "summary.json", "run.log", "report"}


def marker_record(command: str) -> dict:
    from .. import __version__

    return {
        "made_by": "webwinnow",
        "webwinnow": __version__,
        "command": command,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def write_marker(folder: str | Path, command: str) -> None:
    Path(folder, MARKER).write_text(json.dumps(marker_record(command), indent=2) + "\n")


def _own_name(name: str, tables: Iterable[str]) -> bool:
    if name in _OWN_FILES or name in tables:
        return True
    # a table's staging and trash folders (outputs.tables.write_table, the report writer)
    return (
        name.startswith(".")
        and (name.endswith(".incomplete") or name.endswith(".old"))
        and name.strip(".").rsplit(".", 1)[0] in set(tables) | {"report"}
    )


def foreign_entries(folder: Path, tables: Iterable[str]) -> list[str]:
    """Entries of an output folder that webwinnow does not write (sorted)."""
    tables = tuple(tables)
    return sorted(p.name for p in folder.iterdir() if not _own_name(p.name, tables))


def is_webwinnow_output(folder: Path) -> bool:
    """True when folder carries webwinnow's marker (or, from before the marker, summary.json with
    tables that each carry their _webwinnow.json)."""
    if (folder / MARKER).is_file():
        try:
            return json.loads((folder / MARKER).read_text()).get("made_by") == "webwinnow"
        except (OSError, ValueError, AttributeError):
            return False
    if not (folder / "summary.json").is_file():
        return False
    tables = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "report"]
    return bool(tables) and all((p / TABLE_META).is_file() for p in tables)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_replaceable(
    final: Path, *, tables: Iterable[str], protected: Iterable[str | Path], force: bool, what: str = "--out"
) -> None:
    """Raise UserError unless `final` may be replaced by a new run's output.

    protected: paths the run reads (inputs, --exclude and --conf files); a folder holding any of
    them is never replaced, --force or not.
    """
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise UserError(f"{what} {final} exists and is not a folder: webwinnow never replaces a file; give a new folder path")
    if not final.exists():
        return
    real = Path(os.path.realpath(final))
    for p in protected:
        inp = Path(os.path.realpath(p))
        if _inside(inp, real):
            raise UserError(
                f"{what} {final} holds an input of this run ({p}): replacing it would delete it; "
                "give an output folder outside your inputs"
            )
    cwd = Path(os.path.realpath(os.getcwd()))
    home = Path(os.path.realpath(os.path.expanduser("~")))
    if _inside(cwd, real) or real == home or real == Path(real.anchor):
        raise UserError(
            f"{what} {final} is the working directory, the home folder or one of their parents: "
            "webwinnow never replaces it; give a new folder, e.g. --out results"
        )
    entries = list(final.iterdir())
    if not entries:
        return
    ours = is_webwinnow_output(final)
    foreign = foreign_entries(final, tables) if ours else sorted(p.name for p in entries)
    if ours and not foreign:
        return
    if force:
        return
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    if ours:
        raise UserError(
            f"{what} {final} is a webwinnow output but also holds files webwinnow did not make "
            f"({shown}): move them out first, or add --force to replace the folder with them"
        )
    raise UserError(
        f"{what} {final} is not a webwinnow output folder (it holds {shown}): "
        "give a new or empty folder, or add --force to replace it"
    )


def remove_own(folder: Path, tables: Iterable[str]) -> None:
    """Delete a folder webwinnow made (an unfinished run, a swapped-out old output); refuse others."""
    if not folder.exists():
        return
    check_own_or_absent(folder, tables)
    shutil.rmtree(folder)


def staging_of(final: Path) -> Path:
    """Where a fresh run builds OUT before swapping it in."""
    return final.parent / f"{final.name}.incomplete"


def trash_of(final: Path) -> Path:
    """Where the old OUT waits during the swap (two renames where no atomic exchange exists)."""
    return final.parent / f".{final.name}.old"


def check_own_or_absent(folder: Path, tables: Iterable[str]) -> None:
    """Raise UserError when something webwinnow did not make is at `folder` (absent is fine)."""
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink() or not folder.is_dir() or not is_webwinnow_output(folder) or foreign_entries(folder, tables):
        raise UserError(f"{folder} is in the way and was not made by webwinnow: move it away and rerun")


def swap_pending(final: Path) -> bool:
    """OUT is missing but the pieces of an interrupted swap are there."""
    return not final.exists() and (trash_of(final).is_dir() or (staging_of(final) / "summary.json").is_file())


def recover_interrupted_swap(final: Path) -> str | None:
    """Finish or undo a swap of OUT cut between its two renames (filesystems without an atomic
    exchange); says what it did. Call with the lock held.

    OUT missing and OUT.incomplete finished (its summary.json is written just before the swap):
    the new output is complete, so it goes in place. Otherwise a complete old output in
    .OUT.old is put back. Nothing complete is ever deleted.
    """
    if final.exists():
        return None
    staging, trash = staging_of(final), trash_of(final)
    if (staging / "summary.json").is_file() and is_webwinnow_output(staging):
        os.replace(staging, final)
        if trash.is_dir() and is_webwinnow_output(trash):
            shutil.rmtree(trash)
        return f"finished the interrupted swap of {final}: the completed run is in place"
    if trash.is_dir() and is_webwinnow_output(trash):
        os.replace(trash, final)
        return f"restored {final} from an interrupted swap (the unfinished run stays in {staging})"
    return None


def prune_for_space(staging: Path) -> str:
    """After a disk-full failure: delete the unfinished run's tables, keeping its ledger and
    run.log (what the user needs to read); returns what was kept."""
    if not staging.is_dir() or not is_webwinnow_output(staging):
        return ""
    kept = []
    for entry in staging.iterdir():
        if entry.name in ("ledger", "run.log", MARKER):
            kept.append(entry.name)
        elif entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
    return ", ".join(sorted(k for k in kept if k != MARKER))


# -- the lock ---------------------------------------------------------------------------------


def _proc_start(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


class RunLock:
    """OUT.lock, held for the whole command.

    The file names its owner (pid, host, start); the kernel's flock on it is what decides, so
    a run killed with -9 leaves a lock the next run recognises as stale and takes over.
    """

    def __init__(self, final: Path, command: str) -> None:
        self.path = final.parent / f"{final.name}.lock"
        self.command = command
        self.fd: int | None = None
        self.stale_owner: dict | None = None

    def acquire(self) -> RunLock:
        for _ in range(20):
            created = False
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                created = True
            except FileExistsError:
                try:
                    fd = os.open(self.path, os.O_RDWR)
                except FileNotFoundError:
                    continue  # its owner removed it between the two opens
            except OSError as exc:
                raise UserError(
                    f"cannot create the lock file {self.path} ({exc.strerror}): --out must be in a folder you can write"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                owner = self._read(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                who = (
                    (f"pid {owner.get('pid')} on {owner.get('host')}, {owner.get('command')}, since {owner.get('started')}")
                    if owner
                    else "another process"
                )
                raise UserError(
                    f"{self.path.with_suffix('')} is in use by another webwinnow run ({who}): "
                    f"wait for it to finish, or use another --out"
                ) from None
            # The file we locked may have been unlinked by its previous owner meanwhile: retry.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            previous = self._read(fd)
            if not created:
                if "pid" not in previous:
                    os.close(fd)
                    raise UserError(f"{self.path} exists and is not a webwinnow lock file: move it away and rerun")
                self.stale_owner = previous  # its owner died without unlocking: the kernel released it
            record = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "proc_start": _proc_start(os.getpid()),
                "command": self.command,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
            self.fd = fd
            return self
        raise UserError(f"could not take the lock {self.path}: other runs keep replacing it; retry")

    @staticmethod
    def _read(fd: int) -> dict:
        try:
            data = os.pread(fd, 4096, 0)
            record = json.loads(data.decode("utf-8", "replace") or "{}")
            return record if isinstance(record, dict) else {}
        except (OSError, ValueError):
            return {}

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
