"""Who draws the report's figures, and when: the figures page's PNGs and the boilerplate page's plot.

Spark tasks draw them, one per group of figures that share what they compute (the
per-document figures, the document sample's k-grams), each group begun by the runner as soon
as the tables it reads are made (`begin`): the sample's after the hash_freq stage, beside the
candidates stage (whose jobs of two tasks and driver's work on the pairs leave a core idle
0.3-0.7 s) and the passages stage's first jobs, the others with the boilerplate page's plot
after passages, beside the clusters stage.
A report run alone begins them itself; the driver writes the other pages meanwhile. What the
tasks did not give (a failed job: an executor without matplotlib, say), the driver draws. The
PNGs are the same, byte for byte, whoever draws them (the suite compares them).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from ..outputs.tables import read_arrow, table_meta
from . import STAGES, StageContext
from ._faults import injected_stages, maybe_fail
from ._frames import spark_schema
from ._tasks import slots

if TYPE_CHECKING:
    from ..htmlreport import HashView

#: The figures as their task returns them (explore.figures.drawn), the boilerplate page's plot
#: among them (as RANK_PLOT).
FIGURE_ROWS = pa.schema([("name", pa.string()), ("png", pa.binary()), ("error", pa.string())])
#: The name the figure task gives the boilerplate page's plot (htmlreport.plot).
RANK_PLOT = "rank_frequency.png"
#: The name under which the task with the plot also gives the boilerplate page's most frequent
#: hashes (stages._reportrows.top_hashes), an Arrow IPC stream where a figure has its PNG: the
#: task ends before the report's driver has written its other pages, and reading them there
#: (0.15 s on the docs corpus) took that much off the report's last stretch, the driver's.
TOP_HASHES = "top_hashes.arrow"
HASH_ROWS = pa.schema(
    [("hash", pa.int64()), ("docs", pa.int64()), ("occurrences", pa.int64()), ("hosts", pa.int64()), ("snippet", pa.string())]
)
#: The tables the boilerplate page's plot is drawn from: the curve, its fit, the max_df chosen.
RANK_READS = ("rank_freq", "candidate_pairs")
#: Where the command keeps the figures begun before the report (StageContext.handoff).
EARLY = "report_figures"


def rank_of(out: str) -> tuple:
    """The boilerplate page's plot's (runs, fit, max_df), from the tables' statistics."""
    curve = read_arrow(out, "rank_freq").sort_by("rank")  # a few hundred rows: no Spark job
    runs = list(zip(*(curve.column(name).to_pylist() for name in ("rank", "rank_last", "docs", "hashes")), strict=True))
    fit = ((table_meta(out, "rank_freq") or {}).get("stats") or {}).get("fit", {})
    max_df = ((table_meta(out, "candidate_pairs") or {}).get("stats") or {}).get("max_df")
    return runs, fit, max_df


def hash_rows(out: str, limit: int) -> bytes | None:
    """The boilerplate page's first `limit` hashes as an Arrow IPC stream of HASH_ROWS, read
    as the report's driver reads them; None where the driver reads them in Spark (a large
    hash_freq table), which a task cannot."""
    import dataclasses

    from ._reportrows import on_driver, top_hashes

    if not on_driver(out, "hash_freq"):
        return None
    table = pa.Table.from_pylist([dataclasses.asdict(h) for h in top_hashes(None, out, limit)], schema=HASH_ROWS)  # type: ignore[arg-type]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, HASH_ROWS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def settled(later: tuple[str, ...]) -> set[str]:
    """The tables none of the `later` stages writes: as they will be when the report reads them."""
    rewritten = {t for s in STAGES if s.name in later for t in s.writes}
    return {t for s in STAGES for t in s.writes if t not in rewritten}


def early_figures(later: tuple[str, ...]) -> set[str]:
    """The figures drawn from tables that none of the `later` stages writes."""
    from ..explore.figures import drawable

    return drawable(settled(later))


def begin(ctx: StageContext) -> None:
    """Begin drawing each group of figures (explore.figures.figure_groups) whose tables are all
    made (ctx.later: the stages the command still runs, the report among them) and that no
    earlier call began, in a Spark task beside the stages before the report; the boilerplate
    page's plot with the last of them."""
    if not ctx.cfg.report.figure_docs:
        return
    from ..explore.figures import figure_groups, figure_names

    now, every = early_figures(ctx.later), figure_names()
    begun: list[SparkFigures] = ctx.handoff.get(EARLY, {}).get("figures", [])
    started = {name for figures in begun for name in figures.names}
    names = {
        name for group in figure_groups(every) if now.issuperset(group) and not started.intersection(group) for name in group
    }
    if not names:
        return
    rank = None
    if not (every - started - names) and not any(figures.plot for figures in begun):
        try:
            rank = rank_of(ctx.out) if settled(ctx.later).issuperset(RANK_READS) else None
        except Exception:  # noqa: BLE001 - only a head start: the report stage reads them again, and says what is wrong
            return
    figures = SparkFigures(
        ctx.spark, ctx.out, ctx.cfg.report.figure_docs, names, rank, group="report", hashes=ctx.cfg.report.hashes if rank else 0
    )
    ctx.handoff[EARLY] = {"figures": [*begun, figures]}


class SparkFigures:
    """The named figures, and the boilerplate page's plot when `rank` is given, drawn by Spark
    tasks in a thread of the driver's while the driver goes on.

    One task per group of explore.figures.figure_groups, side by side: the per-document figures
    share their sample's texts and k-grams (1.0-1.3 CPU-s) and are drawn by one process, the
    others and the plot by another. A second process costs little more than one: matplotlib is
    imported before the workers are forked (stages._prestart), its first figure then costs a
    tenth of a CPU-second more than the next. `pngs()` waits for the tasks; what they did not
    give (their job failed) is missing from it."""

    def __init__(
        self, spark, out: str, max_docs: int, names: set[str], rank: tuple | None = None, group: str = "", hashes: int = 0
    ) -> None:
        """hashes: with the plot, also read the boilerplate page's first `hashes` hashes (TOP_HASHES)."""
        from pyspark import InheritableThread

        self.out, self.max_docs, self.names = out, max_docs, frozenset(names)
        self.plot = rank is not None
        self.hashes = hashes if self.plot else 0
        self._pngs: dict[str, tuple[bytes | None, str]] = {}
        self.failed = ""
        self._thread = InheritableThread(lambda: self._draw(spark, rank, group), session=spark)
        self._thread.daemon = True
        self._thread.start()

    def _draw(self, spark, rank: tuple | None, group: str) -> None:
        out, max_docs, names = self.out, self.max_docs, sorted(self.names)
        try:
            inject = injected_stages(spark)
            if group:  # begun by the runner between stages: its job is the report's
                spark.sparkContext.setJobGroup(group, "webwinnow report: figures")
        except Exception as exc:  # noqa: BLE001 - the driver draws them instead
            self.failed = f"{type(exc).__name__}: {exc}"
            return

        from ..explore.figures import figure_groups

        groups = figure_groups(names) or [[]]
        hashes = self.hashes

        def draw(batches):
            from ..explore.figures import drawn
            from ..explore.run import RunOutput
            from ..htmlreport.plot import rank_frequency_png

            for batch in batches:
                for group in batch.column("id").to_pylist():
                    maybe_fail("report", inject)
                    got = drawn(RunOutput(out, tables_in=out), groups[group], max_docs)
                    if rank is not None and group == len(groups) - 1:  # with the figures sharing nothing, if any
                        try:
                            got.append((RANK_PLOT, rank_frequency_png(*rank), ""))
                        except Exception as exc:  # noqa: BLE001 - the driver draws it, and says why if it fails there too
                            got.append((RANK_PLOT, None, f"{type(exc).__name__}: {exc}"))
                        if hashes:
                            try:
                                got.append((TOP_HASHES, hash_rows(out, hashes), ""))
                            except Exception as exc:  # noqa: BLE001 - the driver reads them, and says why if it fails too
                                got.append((TOP_HASHES, None, f"{type(exc).__name__}: {exc}"))
                    yield pa.RecordBatch.from_pylist([dict(zip(FIGURE_ROWS.names, g, strict=True)) for g in got], FIGURE_ROWS)

        try:
            got = slots(spark, len(groups)).mapInArrow(draw, spark_schema(FIGURE_ROWS)).toArrow()
        except Exception as exc:  # noqa: BLE001 - the driver draws them instead
            self.failed = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return
        for name, png, error in zip(*(got.column(c).to_pylist() for c in FIGURE_ROWS.names), strict=True):
            self._pngs[name] = (png, error or "")

    def pngs(self) -> dict[str, tuple[bytes | None, str]]:
        """What the task drew (name -> (PNG, error)), once it is done: empty if its job failed."""
        self._thread.join()
        return self._pngs


class Figures:
    """The report's figures for its pages: from the task begun before the report, a task of the
    report's own for what that one was not asked for, and the driver (what neither gave)."""

    def __init__(self, spark, out: str, max_docs: int, begun: Sequence[SparkFigures] = (), hashes: int = 0) -> None:
        """hashes: how many of the most frequent hashes the boilerplate page lists (top_hashes
        gives them as a task read them, if one did)."""
        from ..explore.figures import figure_names

        self.out, self.max_docs = out, max_docs
        self.sources = [("begun early", figures) for figures in begun]
        rest = figure_names() - {name for figures in begun for name in figures.names}
        plot = not any(figures.plot for figures in begun)
        if rest or plot:
            rank = rank_of(out) if plot else None
            self.sources.append(("report task", SparkFigures(spark, out, max_docs, rest, rank, hashes=hashes)))
        self.hashes = hashes
        self.where: dict[str, str] = {}
        self._warned = False

    def _all(self) -> dict[str, tuple[bytes | None, str]]:
        got: dict[str, tuple[bytes | None, str]] = {}
        for by, source in self.sources:
            for name, drawn in source.pngs().items():
                got[name] = drawn
                if drawn[0] is not None and name != TOP_HASHES:
                    self.where[name] = by
        failed = [source.failed for _, source in self.sources if source.failed]
        if failed and not self._warned:
            self._warned = True
            warnings.warn(
                f"report: the figures' Spark task failed ({failed[0]}); drawn on the driver", RuntimeWarning, stacklevel=3
            )
        return got

    def rank_plot(self) -> bytes | None:
        """The boilerplate page's plot as a task drew it; None: the driver draws it."""
        return self._all().get(RANK_PLOT, (None, ""))[0]

    def top_hashes(self) -> list[HashView] | None:
        """The boilerplate page's hashes (self.hashes of them) as a task read them; None: the
        driver reads them."""
        from ..htmlreport import HashView

        if not self.hashes or not any(source.hashes == self.hashes for _, source in self.sources):
            return None
        got = self._all().get(TOP_HASHES, (None, ""))[0]
        if got is None:
            return None
        return [HashView(**row) for row in pa.ipc.open_stream(got).read_all().to_pylist()]

    def write(self, folder):
        from ..explore.figures import drawn, figure_entries, figure_names
        from ..explore.run import RunOutput

        run = RunOutput(self.out, tables_in=self.out)
        pngs = {name: got for name, got in self._all().items() if got[0] is not None and name not in (RANK_PLOT, TOP_HASHES)}
        missing = figure_names() - set(pngs)
        pngs.update({name: (png, error) for name, png, error in drawn(run, missing, self.max_docs)})
        self.where.update({name: "driver" for name in missing})
        return figure_entries(run, folder, pngs, self.max_docs)
