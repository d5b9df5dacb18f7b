"""The `webwinnow` command: check everything that can be checked, then run stages on one Spark session.

    webwinnow run INPUT... --out DIR [--k 50] [--w 100 | --t T] [--standard] [--conf FILE]
    webwinnow extract INPUT... --out DIR        (stage 1 alone)
    webwinnow fingerprint --out DIR             (stage 2 alone, on DIR/documents)
    webwinnow hash_freq|pairs|passages|clusters|report --out DIR   (one later stage alone)
    webwinnow sample OUT_DIR                    (the project's own sample crawl)

Exit status: 0 done; 2 a usage error or a refusal (nothing was changed); 3 too many input
files failed (nothing published); 4 the environment failed (disk full, a corrupt table file);
130 interrupted (OUT unchanged). Anything else is a bug and keeps its traceback. `spark-submit jobs/submit.py STAGE ...` takes the same arguments as `webwinnow STAGE ...`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from . import storage
from .config import RunConfig
from .console import Console
from .errors import TooManyFailures, UserError, environment_failure, interrupted_by
from .options import _parser, resolve_config
from .stages import CHECK_STAGES, RUN_STAGES, STAGES, Stage, downstream, recipe, stage, stale_tables
from .warmup import warm_kernels

FRESH = ("run", "extract", "check")


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Plan:
    """Everything a command needs, checked before Spark starts."""

    def __init__(self, args: argparse.Namespace, cfg: RunConfig) -> None:
        self.args = args
        self.cfg = cfg
        from .commit import is_store

        # a URI (file:// too) is written by generations and a commit record (webwinnow.commit);
        # a path by a staging folder swapped in (webwinnow.outdir)
        self.store = is_store(args.out)
        self.out_uri = args.out.rstrip("/") if self.store else ""
        self.final = Path(os.path.abspath(args.out)) if not self.store else Path(storage.canonical(args.out))
        self.generation = ""  # on a store: where this command writes (commit.begin)
        self.fresh = args.command in FRESH
        if args.command == "run":
            self.stages = [stage(n) for n in RUN_STAGES if n != "dedup" or args.dedup]
        else:
            self.stages = [stage(n) for n in CHECK_STAGES] if args.command == "check" else [stage(args.command)]
        self.index = getattr(args, "index", None) or ""  # check, lookup: the index (read in check())
        self.manifest: Any = None
        self.inputs: list = []
        self.exclude = [os.path.abspath(p) for p in getattr(args, "exclude", None) or []]
        self.stage_inputs: dict[str, Any] = {}
        self.missing_parents = False

    def check(self) -> None:
        from .outdir import check_own_or_absent, check_replaceable
        from .stages import TABLES

        if self.args.command == "run" and not self.args.dedup:
            given = [name for name, on in (("--strip-template", self.args.strip_template),
                                           ("--min-passage", self.args.min_passage is not None),
                                           ("--keep-near-duplicates", self.args.keep_near_duplicates)) if on]
            if given:
                raise UserError(f"{', '.join(given)}: options of the dedup stage; add --dedup to run it")
        if self.args.command == "run" and self.args.dedup and self.cfg.winnow.unit == "code":
            raise UserError("--dedup with --unit code: a code run's documents hold only their pages' code blocks, "
                            "and dedup writes whole pages; dedup a run made with --unit char or word")

        if self.args.command == "check" and not self.index:
            raise UserError("check needs --index IDX: the index to check the new documents against "
                            "(build one with 'webwinnow index INPUT... --out IDX')")
        for path in self.exclude:
            if not os.path.isfile(path):
                raise UserError(f"--exclude {path}: no such file (give WARC/ARC, HTML or text files)")
        if self.exclude:
            self.stage_inputs["pairs"] = [(p, _file_digest(p)) for p in self.exclude]
        if self.store:
            self._check_store()
            return
        parent = self.final.parent
        existing = next(p for p in (parent, *parent.parents) if p.exists() or p.is_symlink())
        if not existing.is_dir():
            raise UserError(f"--out {self.args.out}: {existing} is a file, not a folder: give an --out "
                            "whose parents are folders")
        self.missing_parents = existing != parent  # created (mkdir -p) once every check passed
        try:  # access() says yes to root on a read-only filesystem: try for real
            fd, probe = tempfile.mkstemp(prefix=f".{self.final.name}.", suffix=".probe", dir=existing)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise UserError(f"--out {self.args.out}: cannot write in {existing} ({exc.strerror}): "
                            "choose a folder you can write") from None
        if self.fresh:
            from .crawl.inputs import list_inputs

            self.inputs = list_inputs(self.args.inputs, prefix=self.args.prefix, limit=self.args.limit,
                                      sample=self.args.sample)
            self.stage_inputs["extract"] = [(f.path, f.size, f.mtime_ns) for f in self.inputs]
            protected = [f.path for f in self.inputs if not storage.is_uri(f.path)] + self.exclude + [os.path.abspath(c) for c in self.args.conf]
            check_replaceable(self.final, tables=TABLES, protected=protected, force=self.args.force)
            for other in (self.staging, self.trash):
                check_own_or_absent(other, TABLES)
            if self.args.command == "check":
                self._check_index()
        else:
            from .outdir import swap_pending

            if not self.final.is_dir() and not swap_pending(self.final):
                raise UserError(f"{self.final} does not exist or is not a folder: run "
                                f"'webwinnow run INPUT... --out {self.args.out}' first")
            metas = _metas(self.final) if self.final.is_dir() else {}
            if getattr(self.args, "downstream", False):
                # a check's folder reruns a check's stages, a run's a run's
                kind = CHECK_STAGES if metas.get("indexed_documents") else RUN_STAGES
                self.stages += [s for s in downstream([s.name for s in self.stages]) if s.name in kind]
            if not self.final.is_dir():
                return  # a swap to finish first (run_stages, under the lock); checked there
            _check_reads(self.stages[0], self.final, metas)
            if self.stages[0].name == "dedup" and metas.get("indexed_documents"):
                raise UserError(f"{self.final} is a check's folder (new documents against an index): dedup works on "
                                "a run's; run 'webwinnow run --dedup' over the crawl, or use the contamination table")
            extracted = ((metas.get("documents") or {}).get("config") or {}).get("winnow") or {}
            if self.stages[0].name == "fingerprint" and (extracted.get("unit") == "code") != (self.cfg.winnow.unit == "code"):
                raise UserError(
                    f"{self.final}: its documents hold {'code blocks' if extracted.get('unit') == 'code' else 'page text'}"
                    f" and --unit {self.cfg.winnow.unit} fingerprints "
                    f"{'code blocks' if self.cfg.winnow.unit == 'code' else 'page text'}: "
                    + ("add --unit code" if extracted.get("unit") == "code" else
                       f"read the crawl again with 'webwinnow run INPUT... --out {self.args.out} --unit code'"))
            made = ((metas.get("fingerprints") or {}).get("config") or {}).get("winnow") or {}
            if self.stages[0].name == "dedup" and made.get("unit") == "code":
                raise UserError(f"{self.final} is a code run: its documents hold only their pages' code blocks, and "
                                "dedup writes whole pages; dedup a run made with --unit char or word")
            if any(s.name == "lookup" for s in self.stages):
                self._check_index(metas)
            if self.stages[0].name != "fingerprint":
                _stage_config(self.cfg, self.final, self.stages[0])  # the fingerprints' settings are readable

    def _check_store(self) -> None:
        from .commit import check_out, current_metas
        from .stages import TABLES

        if self.fresh:
            from .crawl.inputs import list_inputs

            self.inputs = list_inputs(self.args.inputs, prefix=self.args.prefix, limit=self.args.limit,
                                      sample=self.args.sample)
            self.stage_inputs["extract"] = [(f.path, f.size, f.mtime_ns) for f in self.inputs]
        check_out(self.out_uri, fresh=self.fresh, force=getattr(self.args, "force", False))
        if self.fresh:
            return
        metas = current_metas(self.out_uri, TABLES)
        if getattr(self.args, "downstream", False):
            kind = CHECK_STAGES if metas.get("indexed_documents") else RUN_STAGES
            self.stages += [s for s in downstream([s.name for s in self.stages]) if s.name in kind]
        _check_reads(self.stages[0], self.out_uri, metas)
        if self.stages[0].name != "fingerprint" and not (metas.get("fingerprints") or {}).get("config"):
            raise UserError(f"{self.out_uri}: the fingerprints table has no settings: rerun 'webwinnow run'")

    def _check_index(self, metas: dict | None = None) -> None:
        """The index a check (or its lookup stage alone) reads: there, readable, made with the
        settings of the new fingerprints, and not holding the new input files already."""
        from .config import WinnowConfig
        from .index.layout import NotAnIndex, Settings, indexed_inputs, read_manifest

        recorded = ((metas or {}).get("indexed_documents") or {}).get("stats", {}).get("index")
        self.index = self.index or recorded or ""
        if not self.index:
            raise UserError("lookup needs --index IDX (this folder records no index)")
        self.index = storage.canonical(self.index) if storage.is_uri(self.index) else os.path.abspath(self.index)
        try:
            self.manifest = read_manifest(self.index)
        except NotAnIndex as exc:
            raise UserError(f"--index {exc}") from None
        if metas is not None and metas.get("fingerprints"):
            made = WinnowConfig(**metas["fingerprints"]["config"]["winnow"])
        else:
            made = self.cfg.winnow
        settings = self.manifest.settings
        mine = replace(Settings.of(made), unicode=settings.unicode)  # Unicode: its own message below
        from .core.charfold import UNICODE_VERSION

        wrong = settings.mismatch(mine, query_w=True) or (settings.unicode != UNICODE_VERSION and
                                                           f"Unicode {UNICODE_VERSION} (the index has {settings.unicode})")
        if wrong:
            raise UserError(f"--index {self.index}: the new fingerprints would be made with {wrong}: rebuild the "
                            "index with these settings, or check with the index's")
        if self.inputs:
            already = indexed_inputs(self.index, self.manifest).intersection(f.path for f in self.inputs)
            if already:
                raise UserError(f"{sorted(already)[0]} is already in the index {self.index} ({len(already)} input "
                                "files are): checking a crawl against itself pairs every page with itself; "
                                "leave them out")
        self.stage_inputs["lookup"] = {"index": self.index, **self.manifest.identity()}

    @property
    def staging(self) -> Path:
        from .outdir import staging_of

        return staging_of(self.final)

    @property
    def unfinished(self) -> str:
        """Where a failed command's finished tables and log are."""
        return (self.generation or self.out_uri) if self.store else str(self.staging)

    @property
    def trash(self) -> Path:
        from .outdir import trash_of

        return trash_of(self.final)


def _metas(out: Path | str) -> dict[str, dict | None]:
    from .stages import TABLES
    from .tables import table_meta

    return {t: table_meta(out, t) for t in TABLES}


def _check_reads(s: Stage, out: Path | str, metas: dict) -> None:
    """A stage's input tables exist and are current; else say which stage to run."""
    stale = stale_tables(metas)
    from .stages import WRITER

    for t in s.reads:
        writer = WRITER[t].name
        if metas.get(t) is None:
            raise UserError(f"{storage.child(str(out), t)} is missing or incomplete: run 'webwinnow {writer} --out {out}' "
                            f"(or 'webwinnow run') first")
        if t in stale:
            raise UserError(f"{s.name} reads {t}, which is stale ({stale[t]}): run 'webwinnow {writer} --out {out}' "
                            f"first, or rerun an earlier stage with --downstream")


def _stats_of(s: Stage, result: Any) -> Any:
    if s.name == "report":
        return {"index": os.path.relpath(str(result), os.path.dirname(os.path.dirname(str(result))))}
    if hasattr(result, "__dataclass_fields__"):
        stats = asdict(result)
        if hasattr(result, "density"):
            stats["density"] = result.density
        return stats
    return dict(result)


def _stage_config(cfg: RunConfig, out: Path | str, s: Stage) -> RunConfig:
    """Later stages must use the k and w the fingerprints were made with: take them from the table."""
    if s.name in ("extract", "fingerprint"):
        return cfg
    from .config import WinnowConfig
    from .tables import read_table_config

    made = read_table_config(str(out), "fingerprints")["config"]["winnow"]
    return replace(cfg, winnow=WinnowConfig(**made))


def _run_one(s: Stage, spark, cfg: RunConfig, out: Path | str, plan: Plan, progress) -> Any:
    import importlib

    module = importlib.import_module(s.module)
    if s.name == "extract":
        accs = progress.accumulators()
        progress.begin(s.name, sum(max(f.size, 0) for f in plan.inputs), accs)
        return module.run(spark, plan.inputs, cfg, str(out), progress=accs)
    progress.begin(s.name)
    if s.name == "pairs":
        from .stages._exclusions import exclusion_hashes

        excluded = (exclusion_hashes(plan.exclude, cfg.winnow.k, cfg.extract, cfg.winnow.unit, cfg.winnow.lexer)
                    if plan.exclude else None)
        return module.run(spark, cfg, str(out), excluded)
    if s.name == "lookup":
        return module.run(spark, cfg, str(out), plan.index, plan.manifest)
    return module.run(spark, cfg, str(out))


def _input_bytes(plan: Plan, out: Path | str) -> int:
    """What the run's shuffles are sized by: the crawl files, or (for a stage run alone on an
    output folder) the documents table they became."""
    if plan.inputs:
        return sum(max(f.size, 0) for f in plan.inputs)
    from .tables import data_location

    documents = data_location(str(out), "documents")
    if storage.info(documents) is None:
        return 0
    return sum(max(e.size, 0) for e in storage.walk(documents) if e.name.endswith(".parquet"))


class _Background:
    """fn(*args) in a thread; result() waits for it and raises what it raised."""

    def __init__(self, fn, *args) -> None:
        self._error: BaseException | None = None

        def target() -> None:
            try:
                fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
                self._error = exc

        self._thread = threading.Thread(target=target, name=getattr(fn, "__name__", "background"), daemon=True)
        self._thread.start()

    def result(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


# -- running ---------------------------------------------------------------------------------------

def run_stages(plan: Plan, console: Console, capture: bool = False) -> dict:
    """Run the plan's stages on one Spark session; returns the run summary.

    A command that starts from the crawl (run, extract) builds the whole output folder in
    OUT.incomplete and swaps it in only when every stage succeeded, so a folder never mixes
    tables of two runs; later stages alone replace their own tables, one at a time, atomically,
    and say which downstream tables they left stale.
    """
    from .outdir import MARKER, RunLock, recover_interrupted_swap, remove_own, write_marker
    from .stages import TABLES
    from .tables import replace_dir

    if plan.store:
        return _run_on_store(plan, console, capture)
    final = plan.final
    if plan.missing_parents:
        final.parent.mkdir(parents=True, exist_ok=True)
    with RunLock(final, f"webwinnow {plan.args.command}") as lock:
        if lock.stale_owner:
            console.say(f"took over the lock of a run that is gone (pid {lock.stale_owner.get('pid')} on "
                        f"{lock.stale_owner.get('host')})")
        repaired = recover_interrupted_swap(final)
        if repaired:
            console.say(repaired)
        if plan.fresh:
            out = plan.staging
            if out.exists() and not plan.args.resume:
                console.say(f"discarding the unfinished run in {out} (use --resume to continue it)")
                remove_own(out, TABLES)
            if plan.args.resume and not out.exists():
                console.say(f"nothing to resume in {out}: running every stage")
            out.mkdir(exist_ok=True)
            if not (out / MARKER).exists():
                write_marker(out, plan.args.command)
            console.open_log(str(out / "run.log"), append=plan.args.resume)
        else:
            out = final
            if (out / MARKER).exists():
                console.open_log(str(out / "run.log"), append=True)
        if capture:
            console.capture()
        try:
            summary = _run_in(plan, out, console)
        except BaseException:
            if plan.fresh:
                kept = [t for t in TABLES if (out / t / "_webwinnow.json").exists()]
                console.log(f"finished tables kept in {out}: {', '.join(kept) or 'none'}")
            raise
        if plan.fresh:
            if "report" in summary:  # where it will be once the folder is in place
                summary["report"] = str(final / "report" / "index.html")
            _write_summary(out, summary)
            replace_dir(out, final)
        else:
            _write_summary(out, summary)
        _print_summary(summary, console)
        return summary


def _run_on_store(plan: Plan, console: Console, capture: bool) -> dict:
    """A command on an output given as a URI: it writes a generation of its own and commits it
    (webwinnow.commit); a failure commits nothing, so the current run stays as it was."""
    from .commit import begin, inherit, publish
    from .stages import TABLES

    out = plan.out_uri
    fd, log = tempfile.mkstemp(prefix="webwinnow-", suffix=".log")
    os.close(fd)
    console.open_log(log, temporary=True)  # on the driver's disk until the generation exists
    if capture:
        console.capture()

    def prepare() -> str:
        gen, resumed = begin(out, f"webwinnow {plan.args.command}", resume=plan.fresh and plan.args.resume)
        plan.generation = gen
        console.publish_log(lambda data: storage.write_bytes(storage.child(gen, "run.log"), data))
        if plan.fresh and plan.args.resume:
            console.say(f"resuming the unfinished run in {gen}" if resumed
                        else f"nothing to resume in {out}: running every stage")
        if not plan.fresh:
            inherit(gen, out, TABLES)
        return gen

    try:
        summary = _run_in(plan, "", console, prepare=prepare)
    except BaseException:
        if plan.generation:
            console.log(f"nothing was committed: {out} is as it was; this command's finished tables are "
                        f"in {plan.generation}")
        raise
    gen = plan.generation
    summary["generation"] = gen
    _write_summary(gen, summary)
    record = publish(out, gen, TABLES)
    console.say(f"committed {storage.basename(gen)}: {out}/_webwinnow_current.json names this run's tables")
    _print_summary(summary, console, tables=sorted(record["tables"]))
    return summary


def _run_in(plan: Plan, out: Path | str, console: Console, prepare=None) -> dict:
    """prepare(), when given, is called once Spark is up and returns the folder to write to (a
    generation on a store is made only once Spark is known to be able to write there)."""
    from .progress import Progress
    from .stages._session import build_session, size_shuffles
    from .tables import stamp_table

    cfg = plan.cfg
    summary: dict = {"out": plan.out_uri or str(plan.final), "config": cfg.to_dict(), "tag": cfg.tag}
    if plan.fresh:
        summary["inputs"] = len(plan.inputs)
    else:
        try:  # a stage run alone: the earlier run's summary, updated
            where = _current_summary(plan) if plan.store else str(out)
            before = storage.read_bytes(storage.child(where, "summary.json"))
            summary = {**json.loads(before), **summary} if before else summary
        except (ValueError, OSError):
            pass
    started = time.time()
    timings: dict[str, float] = {}
    # The kernels load (or compile, on a first run) while the JVM starts: both take seconds, and
    # the driver only waits on the JVM's process then.
    warming = _Background(warm_kernels, console)
    console.say("starting Spark ...")
    try:
        spark, owned = build_session(cfg.spark, plan.args.master)
    finally:
        warming.result()
    try:
        if plan.store:
            from .stages._session import check_filesystem

            check_filesystem(spark, plan.out_uri)
        if prepare is not None:
            out = prepare()
    except BaseException:
        if owned:
            spark.stop()
        raise
    timings["spark_start"] = round(time.time() - started, 1)
    summary["spark"] = {"master": spark.sparkContext.master, "app_id": spark.sparkContext.applicationId,
                        "default_parallelism": spark.sparkContext.defaultParallelism,
                        "shuffle_partitions": size_shuffles(spark, _input_bytes(plan, out))}
    progress = Progress(spark, console)
    kept: list[str] = []
    try:
        for s in plan.stages:
            metas = _metas(out)
            scfg = _stage_config(cfg, out, s)
            summary["config"] = scfg.to_dict()
            reads = {t: (metas.get(t) or {}).get("recipe") for t in s.reads}
            reads.update({t: r for t in s.follows if (r := (metas.get(t) or {}).get("recipe"))})
            expected = recipe(s, scfg, reads, plan.stage_inputs.get(s.name))
            if plan.fresh and plan.args.resume and None not in reads.values() and all(
                    (metas.get(t) or {}).get("recipe") == expected for t in s.writes):
                summary[s.name] = storage.child(str(out), "report", "index.html") if s.name == "report" \
                    else (metas[s.writes[0]] or {}).get("stats") or {}
                kept.append(s.name)
                console.say(f"{s.name}: kept from the interrupted run (same inputs and settings)")
                continue
            _check_reads(s, out, metas)
            began = time.time()
            result = _run_one(s, spark, scfg, str(out) if plan.store else out, plan, progress)
            stats = _stats_of(s, result)
            for t in s.writes:
                stamp_table(out, t, {"recipe": expected, "reads": reads, "stats": stats})
            summary[s.name] = str(result) if s.name == "report" else stats
            timings[s.name] = round(time.time() - began, 1)
            progress.end()
    finally:
        progress.stop()
        try:
            if owned:  # a notebook's session stays the notebook's
                spark.stop()
        except Exception:  # stopping after an interrupt can fail in the JVM: the run is over anyway
            pass
    summary["seconds"] = round(time.time() - started, 1)
    summary["stage_seconds"] = timings
    summary["ran"] = [s.name for s in plan.stages]
    if kept:
        summary["resumed"] = kept
    stale = stale_tables(_metas(out))
    summary["stale"] = stale
    if stale and not plan.fresh:
        tables = ", ".join(sorted(stale))
        console.say(f"now stale (made from tables this command replaced): {tables}; rerun them with "
                    f"'webwinnow {plan.stages[0].name} --out {plan.args.out} --downstream' or stage by stage")
    return summary


def _current_summary(plan: Plan) -> str:
    """On a store: the generation holding the committed run's summary.json."""
    from .commit import read_current

    record = read_current(plan.out_uri) or {}
    return storage.parent(record["summary"]) if record.get("summary") else plan.generation


def _write_summary(out: Path | str, summary: dict) -> None:
    storage.write_bytes(storage.child(str(out), "summary.json"),
                        (json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n").encode())


def _print_summary(s: dict, console: Console, tables: list[str] | None = None) -> None:
    w = s["config"]["winnow"]
    lines = []
    ran = set(s.get("ran") or s)
    for st in STAGES:
        if st.name in s and st.name in ran:
            lines += st.summary(s[st.name], w)
    if s.get("stale"):
        lines.append(f"stale tables: {', '.join(sorted(s['stale']))}")
    lines.append(f"{s['seconds']} s: " + ", ".join(f"{k} {v}" for k, v in s["stage_seconds"].items()))
    if tables is None:
        tables = sorted(p.name for p in Path(s["out"]).iterdir() if p.is_dir() and not p.name.startswith("."))
    lines.append(f"output: {s['out']}  tables: {', '.join(tables)}")
    console.result(lines)


# -- the command -----------------------------------------------------------------------------------

def main(argv: list[str] | None = None, *, capture: bool = False) -> int:
    """Run the command line argv; returns the exit status. capture: send the process's stdout and
    stderr (the JVM's, the workers') to OUT/run.log; only when webwinnow is the whole process."""
    args = _parser().parse_args(argv)
    if args.command == "index":
        from .index.command import command as index_command

        talk = Console(quiet=args.quiet, verbose=args.verbose)
        try:
            return index_command(args, talk)
        finally:
            talk.close()
    if args.command == "paper-tables":
        from .papertables import command

        return command(args)
    if args.command == "sample":
        from .sample import clear_old_sample, write_sample

        try:
            if storage.is_uri(storage.canonical(args.out)):
                raise ValueError(f"{args.out}: the sample is written to a local folder; upload it afterwards")
            args.out = storage.canonical(args.out)
            clear_old_sample(Path(args.out))
            info = write_sample(args.out, pages=args.pages, seed=args.seed, site_tag=args.site_tag)
        except ValueError as exc:
            print(f"webwinnow: error: {exc}", file=sys.stderr)
            return 2
        print(f"webwinnow: sample crawl: {len(info['warc_files'])} WARC files, {info['html_pages']} HTML pages, "
              f"{info['planted_copies']} planted copies in {os.path.abspath(args.out)}")
        return 0
    console = Console(quiet=args.quiet, verbose=args.verbose)
    current: list[Plan] = []  # the plan, once made: what an interrupt message names
    try:
        try:
            return _command(args, console, capture, current)
        except Exception as exc:
            if not interrupted_by(exc):
                raise
            raise KeyboardInterrupt from exc
    except KeyboardInterrupt:
        # Ctrl-C reaches the Python workers too, and cleanup calls into an interrupted JVM can
        # fail on the way out: whichever error surfaces first, the run was interrupted.
        plan = current[0] if current else None
        if plan is None or not plan.fresh:
            where = f"{plan.final}: finished tables were kept, the interrupted one is unchanged" if plan else "nothing changed"
            console.error(f"interrupted; {where}")
        else:
            console.error(f"interrupted; {plan.out_uri or plan.final} unchanged; rerun with --resume to continue")
        return 130
    finally:
        console.close()


def _command(args, console: Console, capture: bool, current: list) -> int:
    plan = None
    try:
        try:
            cfg = resolve_config(args)
            if args.command == "check" and args.index:
                cfg = _check_config(cfg, args.index)
        except ValueError as exc:  # the config's own checks: a bad value given by the user
            raise UserError(str(exc)) from None
        plan = Plan(args, cfg)
        current.append(plan)
        plan.check()
        run_stages(plan, console, capture=capture)
        return 0
    except TooManyFailures as exc:
        assert plan is not None  # only the extract stage raises it
        console.error(f"run failed: {exc}")
        console.error(f"the ledger and log of this run are in {plan.unfinished}; "
                      f"{plan.out_uri or plan.final} was not changed")
        return exc.exit_code
    except UserError as exc:
        console.error(f"error: {exc}")
        return exc.exit_code
    except Exception as exc:
        if interrupted_by(exc):
            raise
        failure = environment_failure(exc, str(plan.final) if plan else "the output")
        if failure is None:
            raise  # a bug: keep the traceback
        console.error(f"error: {failure.message}")
        if failure.kind == "disk_full" and plan is not None and plan.fresh and not plan.store:
            from .outdir import prune_for_space

            kept = prune_for_space(plan.staging)
            if kept:
                console.error(f"removed the unfinished run's tables to free the space; kept {kept} in {plan.staging}")
        return failure.exit_code


def _check_config(cfg: RunConfig, index: str) -> RunConfig:
    """A check fingerprints the new documents as the index was made (with check.query_w, a
    larger window: its fingerprints are then a subset of the index's)."""
    from .config import WinnowConfig
    from .index.layout import NotAnIndex, read_manifest

    try:
        settings = read_manifest(index).settings
    except NotAnIndex as exc:
        raise UserError(f"--index {exc}") from None
    if cfg.check.query_w and (cfg.check.query_w < settings.w or settings.mod_p):
        raise UserError(f"--query-w {cfg.check.query_w}: a query window must be at least the index's w "
                        f"({settings.w}){' and the index must be winnowed, not 0 mod p' if settings.mod_p else ''}")
    return replace(cfg, winnow=WinnowConfig(k=settings.k, w=cfg.check.query_w or settings.w, robust=settings.robust,
                                            mod_p=settings.mod_p, unit=settings.unit, lexer=settings.lexer or "c"))


def entry() -> None:
    """The `webwinnow` console script: webwinnow owns the process, so it records all of its output."""
    raise SystemExit(main(capture=True))


if __name__ == "__main__":
    entry()
