"""The runner: a typed request, checked into a plan before Spark starts, then its stages run on
one Spark session in one run folder.

    plan = Plan(Request(command="run", out="results", stages=RUN_STAGES, inputs=("crawl/",)), cfg)
    plan.validate()            # every refusal, before anything is written
    summary = run(plan, console)

The runner keeps the books, like datatrove's executor: each stage's recipe and statistics beside
its tables, what a resumed run keeps, the timings and the summary. Stages see one contract,
``run(ctx: StageContext) -> dict``; where the tables live is the run folder's business
(``outputs.folder``), so nothing here asks whether the output is on a store.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from .. import storage
from ..config import RunConfig, WinnowConfig
from ..errors import UserError
from ..outputs.folder import RunFolder, run_folder
from ..stages import (
    CHECK_STAGES,
    RUN_STAGES,
    STAGES,
    TABLES,
    WRITER,
    Stage,
    StageCheck,
    StageContext,
    downstream,
    fingerprinted_before,
    recipe,
    stage,
    stale_tables,
)
from ..stages._faults import maybe_exhaust_heap
from ..stages._prestart import behind_jvm
from .console import Console
from .warmup import kernels_fresh, warm_kernels


@dataclass(frozen=True)
class Request:
    """What a command asks the runner for, below any command line.

    command: what the command is called (the marker, the lock and messages name it); stages: the
    stages to run, in order (a first stage that reads no table starts from the crawl: inputs,
    prefix, limit and sample say which files); conf: the config files read (never replaced);
    downstream: add the stages that read what these write.
    """

    command: str
    out: str
    stages: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    prefix: str | None = None
    limit: int | None = None
    sample: float | None = None
    conf: tuple[str, ...] = ()
    master: str | None = None
    resume: bool = False
    force: bool = False
    downstream: bool = False
    exclude: tuple[str, ...] = ()
    index: str = ""


class Plan:
    """A request and its config, checked (validate()) before Spark starts."""

    def __init__(self, request: Request, cfg: RunConfig) -> None:
        self.request = request
        self.cfg = cfg
        self.folder: RunFolder = run_folder(request.out)
        self.stages: list[Stage] = [stage(n) for n in request.stages]
        self.fresh = not self.stages[0].reads  # the command starts from the crawl
        self.inputs: list = []
        self.exclude = tuple(os.path.abspath(p) for p in request.exclude)
        self.stage_inputs: dict[str, Any] = {}  # what a stage's tables are made from besides tables
        self.index = request.index
        self.manifest: Any = None
        self.running = ""  # the stage running now (what a crash message names)
        self.handoff: dict[str, Any] = {}  # what a stage leaves the later ones (StageContext.handoff)

    @property
    def final(self) -> str:
        return self.folder.final

    def validate(self) -> None:
        """Raise UserError for anything that would make the command fail or write where it must not."""
        for path in self.exclude:
            if not os.path.isfile(path):
                raise UserError(f"--exclude {path}: no such file (give WARC/ARC, HTML or text files)")
        metas: dict[str, dict | None] = {}
        if self.fresh:
            from ..crawl.inputs import list_inputs

            r = self.request
            self.inputs = list_inputs(list(r.inputs), prefix=r.prefix, limit=r.limit, sample=r.sample)
            self.stage_inputs[self.stages[0].name] = [(f.path, f.size, f.mtime_ns) for f in self.inputs]
            protected = (
                [f.path for f in self.inputs if storage.is_local(f.path)]
                + list(self.exclude)
                + [os.path.abspath(c) for c in self.request.conf]
            )
            self.folder.check_fresh(protected=protected, force=self.request.force, tables=TABLES)
        else:
            found = self.folder.check_existing(TABLES)
            metas = found or {}
            if self.request.downstream:
                # a check's folder reruns a check's stages, a run's a run's
                kind = CHECK_STAGES if metas.get("indexed_documents") else RUN_STAGES
                self.stages += [s for s in downstream([s.name for s in self.stages]) if s.name in kind]
            if found is None:
                return  # a swap to finish first (under the lock, in run()); checked there
            check_reads(self.stages[0], self.final, metas)
            if fingerprinted_before(self.stages[0]) and not (metas.get("fingerprints") or {}).get("config"):
                raise UserError(
                    f"{self.final}: the fingerprints table has no settings: rerun "
                    f"'webwinnow fingerprint --out {self.request.out}' (or 'webwinnow run')"
                )
        for s in self.stages:
            resolved = s.check(
                StageCheck(
                    self.cfg,
                    self.request.out,
                    metas,
                    fresh=self.fresh,
                    first=s is self.stages[0],
                    inputs=tuple(f.path for f in self.inputs),
                    index=self.index,
                    exclude=self.exclude,
                )
            )
            if "recipe_inputs" in resolved:
                self.stage_inputs[s.name] = resolved["recipe_inputs"]
            self.index = resolved.get("index", self.index)
            self.manifest = resolved.get("manifest", self.manifest)


def check_reads(s: Stage, out: str, metas: dict) -> None:
    """A stage's input tables exist and are current; else say which stage to run."""
    stale = stale_tables(metas)
    for t in s.reads:
        writer = WRITER[t].name
        if metas.get(t) is None:
            raise UserError(
                f"{storage.child(str(out), t)} is missing or incomplete: run 'webwinnow {writer} --out {out}' "
                f"(or 'webwinnow run') first"
            )
        if t in stale:
            raise UserError(
                f"{s.name} reads {t}, which is stale ({stale[t]}): run 'webwinnow {writer} --out {out}' "
                f"first, or rerun an earlier stage with --downstream"
            )


def config_for_check(cfg: RunConfig, index: str) -> RunConfig:
    """A check fingerprints the new documents as the index was made (with check.query_w, a
    larger window: its fingerprints are then a subset of the index's)."""
    from ..index.layout import NotAnIndex, read_manifest

    try:
        settings = read_manifest(index).settings
    except NotAnIndex as exc:
        raise UserError(f"--index {exc}") from None
    if cfg.check.query_w and (cfg.check.query_w < settings.w or settings.mod_p):
        raise UserError(
            f"--query-w {cfg.check.query_w}: a query window must be at least the index's w "
            f"({settings.w}){' and the index must be winnowed, not 0 mod p' if settings.mod_p else ''}"
        )
    return replace(
        cfg,
        winnow=WinnowConfig(
            k=settings.k,
            w=cfg.check.query_w or settings.w,
            robust=settings.robust,
            mod_p=settings.mod_p,
            unit=settings.unit,
            lexer=settings.lexer or "c",
        ),
    )


def _stage_config(cfg: RunConfig, folder: RunFolder, s: Stage) -> RunConfig:
    """Stages after the fingerprints use the k and w they were made with: taken from the table."""
    if not fingerprinted_before(s):
        return cfg
    meta = folder.meta("fingerprints")
    if meta is None:
        raise UserError(f"{folder.child('fingerprints')} is missing or incomplete: run the stage that writes it first")
    return replace(cfg, winnow=WinnowConfig(**meta["config"]["winnow"]))


def _input_bytes(plan: Plan) -> int:
    """What the run's shuffles are sized by: the crawl files, or (for a stage run alone on an
    output folder) the documents table they became."""
    if plan.inputs:
        return sum(max(f.size, 0) for f in plan.inputs)
    documents = plan.folder.data_location("documents")
    if storage.info(documents) is None:
        return 0
    return sum(max(e.size, 0) for e in storage.walk(documents) if e.name.endswith(".parquet"))


class _Background:
    """fn(*args) in a thread; result() waits for it and raises what it raised. behind: the
    thread steps back for the JVM's start (stages._prestart.behind_jvm)."""

    def __init__(self, fn, *args, behind: bool = False) -> None:
        self._error: BaseException | None = None

        def target() -> None:
            if behind:
                behind_jvm()
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


def run(plan: Plan, console: Console, capture: bool = False) -> dict:
    """Run the plan's stages on one Spark session; returns the run summary.

    A command that starts from the crawl builds the whole run where nobody reads it and
    publishes it only when every stage succeeded, so a run never mixes tables of two commands;
    later stages alone replace their own tables, and say which downstream tables they left
    stale. capture: the process's output goes to the run's log.
    """
    from ..stages._session import check_remote

    check_remote(plan.cfg.spark, plan.request.master)  # a Connect endpoint it cannot use: said before the folder is made
    folder, command = plan.folder, f"webwinnow {plan.request.command}"
    with folder.lock(command, console):
        folder.open(console, command=command, fresh=plan.fresh, resume=plan.request.resume, capture=capture, tables=TABLES)
        try:
            summary = _run_in(plan, console, capture)
        except BaseException:
            folder.abandon(console, fresh=plan.fresh, tables=TABLES)
            raise
        tables = folder.publish(summary, console, fresh=plan.fresh, tables=TABLES)
    _print_summary(summary, console, tables)
    return summary


def _run_in(plan: Plan, console: Console, own_process: bool = False) -> dict:
    from ..stages._daemon import paused_collection
    from ..stages._session import (
        build_session,
        check_filesystem,
        daemon_facts,
        session_facts,
        session_notes,
        size_shuffles,
    )
    from .progress import Progress

    cfg, folder = plan.cfg, plan.folder
    summary: dict = {"out": folder.final, "config": cfg.to_dict(), "tag": cfg.tag}
    if plan.fresh:
        summary["inputs"] = len(plan.inputs)
    started = time.time()
    timings: dict[str, float] = {}
    # The kernels load (or compile, on a first run) while the JVM starts: both take seconds, and
    # the driver only waits on the JVM's process then.
    warming = _Background(warm_kernels, console, behind=True)
    console.say("starting Spark ...")
    # The imports, kernels and SparkContext of the start make objects the run keeps: collecting
    # while they are made walked them all, again and again (0.11 CPU-s of the driver's 0.15 in
    # collections on the docs corpus, on the cores the JVM starts on). Frozen after, in a process
    # webwinnow owns (own_process: the console script), later collections skip them. Not while
    # the kernels compile (a first run): Numba's compiler leaves 100 MB of reference cycles.
    with paused_collection(freeze=own_process) if kernels_fresh() else contextlib.nullcontext():
        try:
            spark, owned = build_session(
                cfg.spark,
                plan.request.master,
                _input_bytes(plan),
                figures=_draws_figures(plan),
                modules=tuple(s.module for s in plan.stages),
            )
        finally:
            warming.result()
    for note in session_notes(spark):
        console.say(note)
    try:
        check_filesystem(spark, folder.final)
        folder.begin(
            console, command=f"webwinnow {plan.request.command}", fresh=plan.fresh, resume=plan.request.resume, tables=TABLES
        )
    except BaseException:
        if owned:
            spark.stop()
        raise
    if not plan.fresh:  # a stage run alone: the run's summary, updated
        summary = {**folder.previous_summary(), **summary}
    timings["spark_start"] = round(time.time() - started, 1)
    summary["spark"] = {**session_facts(spark), "shuffle_partitions": size_shuffles(spark, _input_bytes(plan))}
    progress = Progress(spark, console)
    kept: list[str] = []
    try:
        for s in plan.stages:
            metas = folder.metas(TABLES)
            scfg = _stage_config(cfg, folder, s)
            summary["config"] = scfg.to_dict()
            reads = {t: (metas.get(t) or {}).get("recipe") for t in s.reads}
            reads.update({t: r for t in s.follows if (r := (metas.get(t) or {}).get("recipe"))})
            expected = recipe(s, scfg, reads, plan.stage_inputs.get(s.name))
            if (
                plan.fresh
                and plan.request.resume
                and None not in reads.values()
                and all((metas.get(t) or {}).get("recipe") == expected for t in s.writes)
            ):
                summary[s.name] = s.entry((metas[s.writes[0]] or {}).get("stats") or {}, folder.home)
                kept.append(s.name)
                console.say(f"{s.name}: kept from the interrupted run (same inputs and settings)")
                continue
            check_reads(s, folder.final, metas)
            began = time.time()
            plan.running = s.name
            maybe_exhaust_heap(spark, s.name)
            stats = _run_stage(s, spark, scfg, plan, progress)
            plan.running = ""
            for t in s.writes:
                folder.stamp(t, {"recipe": expected, "reads": reads, "stats": stats})
            summary[s.name] = s.entry(stats, folder.home)
            if stats.get("headline"):
                summary["headline"] = stats["headline"]
            timings[s.name] = round(time.time() - began, 1)
            progress.end()
            _begin_later(s, spark, cfg, plan)
    finally:
        progress.stop()
        _drop_unused(plan)
        summary["spark"].update(daemon_facts(spark))
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
    stale = stale_tables(folder.metas(TABLES))
    summary["stale"] = stale
    if stale and not plan.fresh:
        tables = ", ".join(sorted(stale))
        console.say(
            f"now stale (made from tables this command replaced): {tables}; rerun them with "
            f"'webwinnow {plan.stages[0].name} --out {plan.request.out} --downstream' or stage by stage"
        )
    return summary


def _draws_figures(plan: Plan) -> bool:
    """Whether the command's report stage draws the figures (in a Spark task)."""
    return any(s.name == "report" for s in plan.stages) and plan.cfg.report.figure_docs > 0


def _drop_unused(plan: Plan) -> None:
    """Tables a stage made for a later one that did not take them (it was kept from an
    interrupted run, or the command failed first): they are never published."""
    from ..outputs.tables import drop_staged

    for made in plan.handoff.values():
        for table in made.get("tables", ()):
            drop_staged(plan.folder.location, table)
    plan.handoff.clear()


def _begin_later(done: Stage, spark: Any, cfg: RunConfig, plan: Plan) -> None:
    """Let the command's later stages that begin after `done` begin (Stage.begins_after)."""
    later = plan.stages[plan.stages.index(done) + 1 :]
    for s in later:
        if done.name in s.begins_after:
            module = importlib.import_module(s.module)
            module.begin(_context(s, spark, _stage_config(cfg, plan.folder, s), plan, None, later))


def _context(s: Stage, spark: Any, cfg: RunConfig, plan: Plan, counters: Any, later: list[Stage]) -> StageContext:
    return StageContext(
        spark,
        cfg,
        plan.folder,
        inputs=tuple(plan.inputs),
        exclude=plan.exclude,
        index=plan.index,
        manifest=plan.manifest,
        progress=counters,
        later=tuple(x.name for x in later),
        handoff=plan.handoff,
    )


def _run_stage(s: Stage, spark: Any, cfg: RunConfig, plan: Plan, progress: Any) -> dict:
    module = importlib.import_module(s.module)
    counters = None
    if s.reads:
        progress.begin(s.name)
    else:  # it reads the crawl: progress by bytes of the input files
        counters = progress.counters()
        progress.begin(s.name, sum(max(f.size, 0) for f in plan.inputs), counters)
    try:
        return dict(module.run(_context(s, spark, cfg, plan, counters, plan.stages[plan.stages.index(s) + 1 :])))
    finally:
        from ..stages._tasks import drop_exchanges

        drop_exchanges()


def _print_summary(s: dict, console: Console, tables: list[str]) -> None:
    w = s["config"]["winnow"]
    lines = list(s.get("headline") or [])
    ran = set(s.get("ran") or s)
    for st in STAGES:
        if st.name in s and st.name in ran:
            lines += st.summary(s[st.name], w)
    if s.get("stale"):
        lines.append(f"stale tables: {', '.join(sorted(s['stale']))}")
    lines.append(f"{s['seconds']} s: " + ", ".join(f"{k} {v}" for k, v in s["stage_seconds"].items()))
    lines.append(f"output: {s['out']}  tables: {', '.join(tables)}")
    console.result(lines)
