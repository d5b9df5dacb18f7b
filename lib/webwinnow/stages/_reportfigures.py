"""Who draws the report's figures, and when: the figures page's PNGs and the boilerplate page's plot.

One Spark task draws them all, begun by the runner as soon as the tables they read are made
(`begin`, after the passages stage: the clusters stage, a few short jobs that leave a core idle,
runs beside it), or by the report stage when nothing began it (the report run alone); the driver
writes the other pages meanwhile. What the task did not give (a failed job: an executor without
matplotlib, say), the driver draws. The PNGs are the same, byte for byte, whoever draws them
(the suite compares them).
"""

from __future__ import annotations

import warnings

import pyarrow as pa

from ..outputs.tables import read_arrow, table_meta
from . import STAGES, StageContext
from ._faults import injected_stages, maybe_fail
from ._frames import spark_schema
from ._tasks import slots

#: The figures as their task returns them (explore.figures.drawn), the boilerplate page's plot
#: among them (as RANK_PLOT).
FIGURE_ROWS = pa.schema([("name", pa.string()), ("png", pa.binary()), ("error", pa.string())])
#: The name the figure task gives the boilerplate page's plot (htmlreport.plot).
RANK_PLOT = "rank_frequency.png"
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


def settled(later: tuple[str, ...]) -> set[str]:
    """The tables none of the `later` stages writes: as they will be when the report reads them."""
    rewritten = {t for s in STAGES if s.name in later for t in s.writes}
    return {t for s in STAGES for t in s.writes if t not in rewritten}


def early_figures(later: tuple[str, ...]) -> set[str]:
    """The figures drawn from tables that none of the `later` stages writes."""
    from ..explore.figures import drawable

    return drawable(settled(later))


def begin(ctx: StageContext) -> None:
    """Begin drawing the figures whose tables are made (ctx.later: the stages the command still
    runs, the report among them), in one Spark task beside the stages before the report."""
    names = early_figures(ctx.later)
    if not ctx.cfg.report.figure_docs or not names:
        return
    try:
        rank = rank_of(ctx.out) if settled(ctx.later).issuperset(RANK_READS) else None
    except Exception:  # noqa: BLE001 - only a head start: the report stage reads them again, and says what is wrong
        return
    ctx.handoff[EARLY] = {"figures": SparkFigures(ctx.spark, ctx.out, ctx.cfg.report.figure_docs, names, rank, group="report")}


class SparkFigures:
    """The named figures, and the boilerplate page's plot when `rank` is given, drawn by one
    Spark task in a thread of the driver's while the driver goes on.

    One process draws them all: matplotlib's first figure costs a process about 0.9 CPU-s more
    than its next ones (its imports, fonts, the first layout), and the per-document figures
    share their sample's texts and k-grams. `pngs()` waits for the task; what it did not give
    (its job failed) is missing from it."""

    def __init__(self, spark, out: str, max_docs: int, names: set[str], rank: tuple | None = None, group: str = "") -> None:
        from pyspark import InheritableThread

        self.out, self.max_docs, self.names = out, max_docs, frozenset(names)
        self.plot = rank is not None
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

        def draw(batches):
            from ..explore.figures import drawn
            from ..explore.run import RunOutput
            from ..htmlreport.plot import rank_frequency_png

            for _ in batches:
                maybe_fail("report", inject)
                got = drawn(RunOutput(out, tables_in=out), names, max_docs)
                if rank is not None:
                    try:
                        got.append((RANK_PLOT, rank_frequency_png(*rank), ""))
                    except Exception as exc:  # noqa: BLE001 - the driver draws it, and says why if it fails there too
                        got.append((RANK_PLOT, None, f"{type(exc).__name__}: {exc}"))
                yield pa.RecordBatch.from_pylist([dict(zip(FIGURE_ROWS.names, g, strict=True)) for g in got], FIGURE_ROWS)

        try:
            got = slots(spark, 1).mapInArrow(draw, spark_schema(FIGURE_ROWS)).toArrow()
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

    def __init__(self, spark, out: str, max_docs: int, begun: SparkFigures | None) -> None:
        from ..explore.figures import figure_names

        self.out, self.max_docs = out, max_docs
        self.sources = [("begun early", begun)] if begun is not None else []
        rest = figure_names() - (begun.names if begun is not None else set())
        plot = begun is None or not begun.plot
        if rest or plot:
            self.sources.append(("report task", SparkFigures(spark, out, max_docs, rest, rank_of(out) if plot else None)))
        self.where: dict[str, str] = {}
        self._warned = False

    def _all(self) -> dict[str, tuple[bytes | None, str]]:
        got: dict[str, tuple[bytes | None, str]] = {}
        for by, source in self.sources:
            for name, drawn in source.pngs().items():
                got[name] = drawn
                if drawn[0] is not None:
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

    def write(self, folder):
        from ..explore.figures import drawn, figure_entries, figure_names
        from ..explore.run import RunOutput

        run = RunOutput(self.out, tables_in=self.out)
        pngs = {name: got for name, got in self._all().items() if got[0] is not None and name != RANK_PLOT}
        missing = figure_names() - set(pngs)
        pngs.update({name: (png, error) for name, png, error in drawn(run, missing, self.max_docs)})
        self.where.update({name: "driver" for name in missing})
        return figure_entries(run, folder, pngs, self.max_docs)
