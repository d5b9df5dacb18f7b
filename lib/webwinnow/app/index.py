"""`webwinnow index`: build an index, append a crawl to one, compact one.

    webwinnow index INPUT... --out IDX           read and fingerprint the crawl, index it
    webwinnow index --from RUN_DIR --out IDX     index an existing run's documents and fingerprints
    webwinnow index --append INPUT... --index IDX   (or --append --from RUN_DIR): a new segment
    webwinnow index --compact --index IDX        the segments merged into one

Everything is checked before Spark starts. A new index is written in IDX.incomplete and renamed
into place when complete; an append writes new files and then the manifest (the commit): a
failed command leaves the index as it was. Only an index is ever replaced (--force), never a
folder webwinnow did not make.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from .. import storage
from ..config import RunConfig, WinnowConfig
from ..errors import TooManyFailures, UserError, environment_failure, interrupted_by, jvm_ending, spark_died
from ..index import layout
from ..index.layout import Manifest, NotAnIndex, SegmentRecord, Settings
from ..outputs.indexfolder import NewIndex, check_new_index, index_lock
from ..stages._session import JVM_EXIT_WAIT, jvm_exit_code
from .console import Console


def command(args: argparse.Namespace, console: Console) -> int:
    try:
        return _command(args, console)
    except TooManyFailures as exc:
        console.error(f"index failed: {exc}; the index was not changed")
        return exc.exit_code
    except UserError as exc:
        console.error(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        console.error("interrupted; the index is as it was")
        return 130
    except Exception as exc:
        if interrupted_by(exc):
            console.error("interrupted; the index is as it was")
            return 130
        failure = environment_failure(exc, args.out or args.index) or spark_died(
            exc, jvm_exit_code(JVM_EXIT_WAIT if jvm_ending(exc) else 0.0)
        )
        if failure is None:
            raise
        console.error(
            f"error: {failure.message}; the index is as it was" + (f"; {failure.remedy}, then rerun" if failure.remedy else "")
            if failure.kind in ("spark_died", "out_of_memory")
            else f"error: {failure.message}"
        )
        return failure.exit_code


def _where(name: str) -> str:
    return storage.canonical(name)


def _command(args: argparse.Namespace, console: Console) -> int:
    from .options import resolve_config

    if args.compact and (args.inputs or args.from_run or args.append):
        raise UserError("--compact takes no INPUT, --from or --append: 'webwinnow index --compact --index IDX'")
    if (args.append or args.compact) and not args.index:
        raise UserError(f"--{'append' if args.append else 'compact'} works on an existing index: give it with --index IDX")
    if args.index and not (args.append or args.compact):
        raise UserError("--index IDX names an index to --append to or --compact; a new index is --out IDX")
    if not args.compact and bool(args.inputs) == bool(args.from_run):
        raise UserError("give the crawl files to index (INPUT...) or an existing run (--from RUN_DIR), one of the two")
    try:
        cfg = resolve_config(args)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.compact:
        return _compact(_where(args.index), cfg, args, console)
    if args.append:
        return _append(_where(args.index), cfg, args, console)
    return _build(_where(args.out), cfg, args, console)


def _winnow_given(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) not in (None, False) for name in ("k", "w", "t", "standard", "mod_p", "unit", "lexer"))


def _run_settings(run: str) -> WinnowConfig:
    """The settings a run folder's fingerprints were made with; refused unless its documents,
    fingerprints and doc_stats are there and current."""
    from ..outputs.tables import table_meta
    from ..stages import stale_tables

    if storage.info(run) is None:
        raise UserError(f"--from {run} does not exist: give a folder 'webwinnow run' wrote")
    metas = {t: table_meta(run, t) for t in ("documents", "ledger", "fingerprints", "doc_stats")}
    missing = [t for t in ("documents", "fingerprints", "doc_stats") if metas[t] is None]
    if missing:
        raise UserError(f"--from {run} has no {missing[0]} table: run 'webwinnow run INPUT... --out {run}' first")
    stale = stale_tables(metas)
    if stale:
        table, why = sorted(stale.items())[0]
        raise UserError(f"--from {run}: its {table} table is stale ({why}): rerun 'webwinnow fingerprint --out {run}'")
    return WinnowConfig(**metas["fingerprints"]["config"]["winnow"])  # type: ignore[index]


def _source_inputs(run: str) -> list[str]:
    """The crawl files a run folder's documents came from (its ledger lists every one)."""
    from ..outputs.tables import read_arrow

    try:
        ledger = read_arrow(run, "ledger", ["kind", "file"])
        files = {
            f
            for k, f in zip(ledger.column("kind").to_pylist(), ledger.column("file").to_pylist(), strict=True)
            if k == "file" and f
        }
        if files:
            return sorted(files)
    except (OSError, ValueError):
        pass
    docs = read_arrow(run, "documents", ["warc_file"])
    return sorted(set(docs.column("warc_file").to_pylist()) - {None})


def _session(cfg: RunConfig, args: argparse.Namespace, console: Console):
    from ..stages._session import build_session, session_notes

    console.say("starting Spark ...")
    spark, owned = build_session(cfg.spark, args.master)
    for note in session_notes(spark):
        console.say(note)
    return spark, owned


def _read_crawl(args: argparse.Namespace, cfg: RunConfig, source: str, console: Console) -> list[str]:
    """Extract and fingerprint the INPUTs into the run folder `source` (on the session already
    started); returns the input files' paths."""
    from .runner import Plan, Request, run

    plan = Plan(
        Request(
            command="run",
            out=source,
            stages=("extract", "fingerprint"),
            inputs=tuple(args.inputs),
            prefix=args.prefix,
            limit=args.limit,
            sample=args.sample,
            conf=tuple(args.conf),
            master=args.master,
        ),
        cfg,
    )
    plan.validate()
    run(plan, console)
    return [f.path for f in plan.inputs]


def _listed_inputs(args: argparse.Namespace) -> list[str]:
    from ..crawl.inputs import list_inputs

    return [f.path for f in list_inputs(args.inputs, prefix=args.prefix, limit=args.limit, sample=args.sample)]


def _write(spark, idx: str, run: str, settings: Settings, before: Manifest | None, inputs: list[str], source: str) -> Manifest:
    from ..outputs.tables import table_stats
    from ..stages import _indexing

    segment = layout.new_segment_id()
    manifest = _indexing.write_segment(spark, idx, run, settings, before, segment, source)
    SegmentRecord(segment, inputs=inputs, extract=table_stats(run, "ledger") or {}).write(idx)
    layout.write_manifest(idx, manifest)
    return manifest


def _build(idx: str, cfg: RunConfig, args: argparse.Namespace, console: Console) -> int:
    started = time.time()
    protected = [] if args.from_run else _listed_inputs(args)
    if args.from_run:
        run = _where(args.from_run)
        made = _run_settings(run)
        if _winnow_given(args) and made != cfg.winnow:
            raise UserError(
                f"--from {run}: its fingerprints were made with k={made.k}, w={made.w}; the index takes "
                "the run's settings (leave out --k/--w/--t/--standard/--mod-p)"
            )
        cfg = replace(cfg, winnow=made)
        protected.append(run)
    target = NewIndex(idx, replacing=check_new_index(idx, args.force, protected))
    target.prepare()
    spark, owned = _session(cfg, args, console)
    try:
        if args.from_run:
            run, inputs, what = _where(args.from_run), _source_inputs(_where(args.from_run)), _where(args.from_run)
        else:
            run = storage.child(target.where, "_source")
            inputs = _read_crawl(args, cfg, run, console)
            what = f"{len(inputs)} input files"
        console.say(f"writing the index in {target.where} ...")
        manifest = _write(spark, target.where, run, Settings.of(cfg.winnow), None, inputs, what)
        if not args.from_run:
            storage.delete_tree(run)
    finally:
        if owned:
            spark.stop()
    target.publish()
    _print(console, idx, manifest, started, "built")
    return 0


def _open_index(idx: str) -> Manifest:
    try:
        return layout.read_manifest(idx)
    except NotAnIndex as exc:
        raise UserError(f"--index {exc}") from None


def _append(idx: str, cfg: RunConfig, args: argparse.Namespace, console: Console) -> int:
    started = time.time()
    before = _open_index(idx)
    s = before.settings
    index_winnow = WinnowConfig(k=s.k, w=s.w, robust=s.robust, mod_p=s.mod_p, unit=s.unit, lexer=s.lexer or "c")
    if args.from_run:
        run = _where(args.from_run)
        made = _run_settings(run)
        if Settings.of(made) != s:
            raise UserError(
                f"--from {run}: its fingerprints were made with {s.mismatch(Settings.of(made))}: an index "
                "takes only fingerprints made as its own"
            )
        inputs = _source_inputs(run)
    else:
        if _winnow_given(args) and cfg.winnow != index_winnow:
            raise UserError(
                f"--index {idx} was made with k={s.k}, w={s.w}, unit {s.unit}: an append uses the index's "
                "settings (leave out --k/--w/--t/--standard/--mod-p/--unit)"
            )
        inputs = _listed_inputs(args)
    already = layout.indexed_inputs(idx, before).intersection(inputs)
    if already:
        raise UserError(
            f"{sorted(already)[0]} is already in the index {idx} ({len(already)} input files are): "
            "leave them out (a document indexed twice would count twice)"
        )
    cfg = replace(cfg, winnow=index_winnow)
    with index_lock(idx):
        before = _open_index(idx)  # as it is now that the index is ours
        layout.remove_files(layout.owned_files(idx, before.segment_ids))  # what a failed append left
        for entry in storage.walk(idx, recursive=False):  # ... and the run folder it read its crawl into
            if entry.is_dir and storage.basename(entry.name).startswith("_source-"):
                storage.delete_tree(entry.name)
        spark, owned = _session(cfg, args, console)
        try:
            if args.from_run:
                what = run
            else:
                run = storage.child(idx, f"_source-{layout.new_segment_id()}")
                inputs = _read_crawl(args, cfg, run, console)
                what = f"{len(inputs)} input files"
            console.say(f"appending to {idx} ...")
            manifest = _write(spark, idx, run, s, before, inputs, what)
            if not args.from_run:
                storage.delete_tree(run)
        finally:
            if owned:
                spark.stop()
    _print(console, idx, manifest, started, "appended to")
    return 0


def _compact(idx: str, cfg: RunConfig, args: argparse.Namespace, console: Console) -> int:
    import json

    from ..stages import _indexing

    started = time.time()
    with index_lock(idx):
        before = _open_index(idx)
        if len(before.segments) <= 1:
            console.result([f"{idx} has {len(before.segments)} segment: nothing to compact"])
            return 0
        layout.remove_files(layout.owned_files(idx, before.segment_ids))
        spark, owned = _session(cfg, args, console)
        try:
            segment = layout.new_segment_id()
            manifest = _indexing.compact(spark, idx, before, segment)
        finally:
            if owned:
                spark.stop()
        inputs: list[str] = []
        for seg in before.segment_ids:
            data = storage.read_bytes(layout.segment_file(idx, seg))
            inputs += json.loads(data).get("inputs", []) if data else []
        SegmentRecord(segment, inputs=sorted(set(inputs))).write(idx)
        layout.write_manifest(idx, manifest)
        layout.remove_files(layout.owned_files(idx, manifest.segment_ids))
    _print(console, idx, manifest, started, f"compacted {len(before.segments)} segments of")
    return 0


def index_bytes(idx: str) -> int:
    return sum(max(e.size, 0) for e in storage.walk(idx) if not e.is_dir)


def _print(console: Console, idx: str, m: Manifest, started: float, did: str) -> None:
    s = m.settings
    t = s.w + s.k - 1
    console.result(
        [
            f"{did} {idx}: {m.documents:,} documents, {m.fingerprints:,} fingerprints, {m.hashes:,} distinct hashes "
            f"in {len(m.segments)} segment{'s' if len(m.segments) != 1 else ''} (k={s.k}, w={s.w}, t={t}, "
            f"{'robust' if s.robust else 'standard'}); {index_bytes(idx) / 2**20:,.1f} MiB",
            f"{time.time() - started:.1f} s; check a crawl against it: webwinnow check INPUT... --index {idx} --out DIR",
        ]
    )
