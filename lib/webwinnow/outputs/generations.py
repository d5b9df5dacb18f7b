"""Output folders given as URIs (s3a://, gs://, hdfs://, file://): generations and a commit record.

An object store cannot rename a folder, so the local way (build OUT.incomplete, swap it in)
does not exist there. Every command instead writes a new generation, ``OUT/runs/<id>/``, that
nobody reads until ``OUT/_webwinnow_current.json`` names it. That record is one object written
in one request, last: a reader sees the previous run or the complete new one, never a mix, and
the previous run stays untouched until the record has moved on. Only then are the generations
it no longer names deleted (older ones only: a newer one may be another command's, still
running). A stage run alone writes just its own tables into its generation; the tables it did
not rewrite are pointers there (their ``_webwinnow.json`` with ``"data"``: where the rows are).

Readers: `current_tables(OUT)` (or the record's ``"tables"``) gives each table's location.
Stores have no locks: two commands on one OUT each build their own generation; the one that
began last commits, the other is told its result was not committed, and neither is mixed.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from .. import storage
from ..errors import UserError
from .swap import MARKER, marker_record
from .tables import TABLE_META

CURRENT = "_webwinnow_current.json"
RUNS = "runs"
#: What webwinnow writes at the top of an output on a store.
_OWN = {MARKER, CURRENT, RUNS}


def is_store(out: str) -> bool:
    """--out is a URI: written by generations and a commit, not by renames."""
    return storage.is_uri(out)


def generation_id() -> str:
    """Sortable by time (collection deletes only older generations), unique across machines."""
    now = time.time_ns()
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f".{now % 10**9 // 1000:06d}Z-" + secrets.token_hex(4)


def _json(name: str) -> dict | None:
    try:
        data = storage.read_bytes(name)
    except storage.StorageError as exc:
        raise UserError(str(exc)) from None
    if data is None:
        return None
    try:
        record = json.loads(data)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _put(name: str, record: dict) -> None:
    try:
        storage.write_bytes(name, (json.dumps(record, indent=2, sort_keys=True, default=str) + "\n").encode())
    except storage.StorageError as exc:
        raise UserError(str(exc)) from None


def read_current(out: str) -> dict | None:
    """The commit record of an output on a store; None before its first commit."""
    record = _json(storage.child(out, CURRENT))
    return record if record and record.get("made_by") == "webwinnow" and "tables" in record else None


def current_tables(out: str) -> dict[str, str]:
    """Every table of the committed run: name -> location (a folder of Parquet files)."""
    record = read_current(out)
    if record is None:
        raise UserError(f"{out} has no committed webwinnow run: run 'webwinnow run INPUT... --out {out}' first")
    return dict(record["tables"])


def current_metas(out: str, tables: tuple[str, ...]) -> dict[str, dict | None]:
    located = current_tables(out)
    return {t: _json(storage.child(located[t], TABLE_META)) if t in located else None for t in tables}


def check_out(out: str, *, fresh: bool, force: bool) -> None:
    """Raise UserError unless commands may write to `out` on its store (before any work).

    `out` must be absent or empty (a fresh command), or an output webwinnow made: its marker,
    its commit record and its generations, nothing else. Objects webwinnow did not write are
    never deleted there, --force or not.
    """
    try:
        entry = storage.info(out)
        entries = storage.walk(out, recursive=False) if entry is not None and entry.is_dir else []
    except storage.StorageError as exc:
        raise UserError(f"--out {exc}") from None
    if entry is not None and not entry.is_dir:
        raise UserError(f"--out {out} is a file: give a folder (a prefix) for the output")
    names = sorted(storage.basename(e.name) for e in entries)
    if not names:
        if not fresh:
            raise UserError(f"{out} does not exist: run 'webwinnow run INPUT... --out {out}' first")
        return
    foreign = [n for n in names if n not in _OWN]
    marker = _json(storage.child(out, MARKER))
    if foreign or not marker or marker.get("made_by") != "webwinnow":
        shown = ", ".join((foreign or names)[:5]) + (" ..." if len(foreign or names) > 5 else "")
        extra = " (--force does not apply on a store)" if force else ""
        raise UserError(
            f"--out {out} holds objects webwinnow did not write ({shown}): give a new prefix; webwinnow never deletes them{extra}"
        )
    if not fresh and read_current(out) is None:
        raise UserError(f"{out} has no committed webwinnow run: run 'webwinnow run INPUT... --out {out}' first")


def begin(out: str, command: str, *, resume: bool) -> tuple[str, bool]:
    """A generation for this command: (its location, whether it continues an unfinished one).

    resume: the newest generation of a fresh command that never committed, newer than the
    current run, is continued (its finished tables are kept when their recipes match).
    """
    if _json(storage.child(out, MARKER)) is None:
        _put(storage.child(out, MARKER), marker_record(command))
    if resume:
        current = read_current(out)
        done = current["generation"] if current else ""
        for gen in reversed(_generations(out)):
            if gen <= done:
                break
            mark = _json(storage.child(out, RUNS, gen, MARKER)) or {}
            if mark.get("command") in ("webwinnow run", "webwinnow extract"):
                return storage.child(out, RUNS, gen), True
    gen = storage.child(out, RUNS, generation_id())
    _put(storage.child(gen, MARKER), marker_record(command))
    return gen, False


def inherit(gen: str, out: str, tables: tuple[str, ...]) -> list[str]:
    """Point the generation of a stage run alone at the committed run's tables; returns them."""
    located = current_tables(out)
    for t in tables:
        if t in located:
            meta = _json(storage.child(located[t], TABLE_META)) or {"table": t}
            _put(storage.child(gen, t, TABLE_META), {**meta, "data": located[t]})
    return sorted(t for t in tables if t in located)


def publish(out: str, gen: str, tables: tuple[str, ...]) -> dict[str, Any]:
    """Commit: write the record naming the generation's tables, then collect what it no longer names.

    Generations only move forward: a command that began before the run committed meanwhile (two
    commands on one OUT) does not commit over it, and says so.
    """
    current = read_current(out)
    if current is not None and current["generation"] > storage.basename(gen):
        raise UserError(
            f"{out}: a newer run ({current['generation']}) was committed while this command ran; "
            f"its tables were not committed (they stay in {gen} until the next commit collects them)"
        )
    located = {}
    for t in tables:
        meta = _json(storage.child(gen, t, TABLE_META))
        if meta is not None:
            located[t] = meta.get("data") or storage.child(gen, t)
    record = {
        "made_by": "webwinnow",
        "generation": storage.basename(gen),
        "committed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tables": located,
        "report": located.get("report"),
        "summary": storage.child(gen, "summary.json"),
    }
    _put(storage.child(out, CURRENT), record)
    collect(out, record)
    return record


def _generations(out: str) -> list[str]:
    runs = storage.child(out, RUNS)
    if storage.info(runs) is None:
        return []
    return sorted(storage.basename(e.name) for e in storage.walk(runs, recursive=False) if e.is_dir)


def collect(out: str, record: dict) -> list[str]:
    """Delete what the commit record no longer names in generations older than its own: whole
    generations, or the tables of one whose other tables are still pointed at. Returns them."""
    named = {storage.canonical(str(v)).rstrip("/") for v in (*record["tables"].values(), record.get("report")) if v}
    deleted = []
    for gen in _generations(out):
        if gen >= record["generation"]:
            break
        where = storage.canonical(storage.child(out, RUNS, gen)).rstrip("/")
        keep = {n for n in named if n.startswith(where + "/")}
        if not keep:
            storage.delete_tree(where)
            deleted.append(where)
            continue
        for e in storage.walk(where, recursive=False):
            if e.is_dir and e.name.rstrip("/") not in keep:
                storage.delete_tree(e.name)
                deleted.append(e.name)
    return deleted
