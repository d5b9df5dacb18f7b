"""Stage: every table → `report/` (index.html, pair pages, cross-host pairs, clusters, failed files,
dedup, boilerplate page, plot, figures, stats.json).

Only what a person can read is collected to the driver: the top pairs (report.pairs), the texts
and passages of the first report.details of them, the most frequent hashes, and the
run-length-encoded rank–frequency curve (stages._reportrows: read with pyarrow on the driver
when a table is small, in Spark when not). The figures page (webwinnow.explore.figures) is drawn
from the tables with pyarrow, its per-document parts on report.figure_docs documents: all of its
figures and the boilerplate page's plot by one Spark task while the driver writes the other
pages (the executors wait for the report otherwise, and the figures are most of its time).
"""

from __future__ import annotations

import warnings

import pyarrow as pa

from ..config import RunConfig
from ..errors import UserError
from ..htmlreport import PairView, write_report
from ..htmlreport.summary import headline
from ..outputs.tables import read_arrow, table_meta, write_folder
from . import WRITER, StageContext
from ._faults import injected_stages, maybe_fail
from ._frames import spark_schema
from ._reportrows import pair_details, run_pages, top_hashes, top_pairs
from ._tasks import slots

#: The tables whose stages' statistics the summary shows, and which of their keys it lifts up.
SHOWN = {
    "candidate_pairs": ("max_df", "candidate_pairs", "boilerplate_hashes"),
    "passages": ("passages", "pairs", "template_pairs", "content_chars"),
    "clusters": ("clusters", "clustered_documents", "cluster_resemblance"),
    "rank_freq": ("hashes",),
}


def _stage_stats(out: str, table: str) -> dict:
    stats = (table_meta(out, table) or {}).get("stats")
    if stats is None:
        raise UserError(f"{out}/{table} records no statistics (made by an older webwinnow): rerun 'webwinnow run' on the crawl")
    return stats


def _stats(cfg: RunConfig, out: str) -> dict:
    """The report's figures, from the statistics each stage stored once beside its table."""
    by_table = {table: _stage_stats(out, table) for table in ("rank_freq", "candidate_pairs", "passages", "clusters")}
    stages = {WRITER[table].name: by_table[table] for table in by_table}  # the stage table names them
    w = cfg.winnow
    stats: dict = {
        "unit": w.unit,
        **({"lexer": w.lexer} if w.unit == "code" else {}),
        "k": w.k,
        "w": w.w,
        "t": w.t,
        "robust": w.robust,
        "mod_p": w.mod_p,
        "expected_density": w.expected_density,
        "stages": stages,
    }
    e, f = _stage_stats(out, "ledger"), _stage_stats(out, "doc_stats")
    stats.update(
        {
            "inputs": e["files"],
            "failed_files": e["failed_files"],
            "records_seen": e["records"],
            **{key: e[key] for key in ("parsed", "skipped", "failed", "flagged")},
        }
    )
    stats.update({key: f[key] for key in ("documents", "fingerprints", "kgrams", "norm_chars", "density")})
    for table, keys in SHOWN.items():
        for key in keys:
            if key in by_table[table]:
                stats[key] = by_table[table][key]
    return stats


def _view(r, text_a: str | None, text_b: str | None, spans: list, capped: bool, unit: str = "char") -> PairView:
    return PairView(
        doc_a=r["doc_a"],
        doc_b=r["doc_b"],
        url_a=r["url_a"],
        url_b=r["url_b"],
        shared=r["shared"],
        fp_a=r["fp_a"],
        fp_b=r["fp_b"],
        resemblance=r["resemblance"],
        containment_a=r["containment_a"],
        containment_b=r["containment_b"],
        text_a=text_a,
        text_b=text_b,
        passages=tuple(sorted(spans)),
        capped=capped,
        source=r["source"],
        source_basis=r["source_basis"],
        fetch_a=r["fetch_time_a"],
        fetch_b=r["fetch_time_b"],
        last_modified_a=r["last_modified_a"],
        last_modified_b=r["last_modified_b"],
        http_date_a=r["http_date_a"],
        http_date_b=r["http_date_b"],
        warc_a=r["warc_file_a"],
        warc_b=r["warc_file_b"],
        offset_a=r["warc_offset_a"],
        offset_b=r["warc_offset_b"],
        norm_copied_a=r["copied_chars_a"],
        norm_copied_b=r["copied_chars_b"],
        content_a=r["content_chars_a"],
        content_b=r["content_chars_b"],
        share_a=r["content_share_a"],
        share_b=r["content_share_b"],
        unit=unit,
    )


#: The figures as their task returns them (explore.figures.drawn), the boilerplate page's plot
#: among them (as RANK_PLOT).
FIGURE_ROWS = pa.schema([("name", pa.string()), ("png", pa.binary()), ("error", pa.string())])
#: The name the figure task gives the boilerplate page's plot (htmlreport.plot).
RANK_PLOT = "rank_frequency.png"


class _Figures:
    """The report's PNGs, every figure of the figures page and the boilerplate page's plot,
    drawn by one Spark task in a thread of the driver's while the driver writes its pages.

    One process draws them all: matplotlib's first figure costs a process about 0.9 CPU-s more
    than its next ones (its imports, fonts, the first layout), which the driver paid again when
    it drew half of them (docs corpus: the driver's figures 2.1-2.3 CPU-s, the same drawn after
    others 1.3-1.4). write() and rank_plot() wait for the task; whatever it did not give (its
    job failed: an executor without matplotlib, say, or a figure that failed there) the driver
    draws. `rank` is the plot's (runs, fit, max_df), as the driver would draw it."""

    def __init__(self, spark, out: str, max_docs: int, rank: tuple) -> None:
        from pyspark import InheritableThread

        self.out, self.max_docs = out, max_docs
        self.pngs: dict[str, tuple[bytes | None, str]] = {}
        self.failed = ""
        self._warned = False
        self._thread = InheritableThread(lambda: self._draw(spark, rank), session=spark)
        self._thread.daemon = True
        self._thread.start()

    def _draw(self, spark, rank: tuple) -> None:
        out, max_docs = self.out, self.max_docs
        inject = injected_stages(spark)

        def draw(batches):
            from ..explore.figures import drawn, figure_names
            from ..explore.run import RunOutput
            from ..htmlreport.plot import rank_frequency_png

            for _ in batches:
                maybe_fail("report", inject)
                got = drawn(RunOutput(out, tables_in=out), figure_names(), max_docs)
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
            self.pngs[name] = (png, error or "")

    def _joined(self) -> None:
        self._thread.join()
        if self.failed and not self._warned:
            self._warned = True
            warnings.warn(
                f"report: the figures' Spark task failed ({self.failed}); drawn on the driver", RuntimeWarning, stacklevel=3
            )

    def rank_plot(self) -> bytes | None:
        """The boilerplate page's plot as the task drew it; None: the driver draws it."""
        self._joined()
        return self.pngs.get(RANK_PLOT, (None, ""))[0]

    def write(self, folder):
        from ..explore.figures import drawn, figure_entries, figure_names
        from ..explore.run import RunOutput

        self._joined()
        run = RunOutput(self.out, tables_in=self.out)
        pngs = {name: got for name, got in self.pngs.items() if got[0] is not None and name != RANK_PLOT}
        missing = figure_names() - set(pngs)
        pngs.update({name: (png, error) for name, png, error in drawn(run, missing, self.max_docs)})
        return figure_entries(run, folder, pngs, self.max_docs)


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    rcfg = cfg.report
    stats = _stats(cfg, out)
    curve = read_arrow(out, "rank_freq").sort_by("rank")  # a few hundred rows: no Spark job
    runs = list(zip(*(curve.column(name).to_pylist() for name in ("rank", "rank_last", "docs", "hashes")), strict=True))
    fit = stats["stages"].get(WRITER["rank_freq"].name, {}).get("fit", {})
    figures = _Figures(spark, out, rcfg.figure_docs, (runs, fit, stats.get("max_df"))) if rcfg.figure_docs else None
    top, total = top_pairs(spark, out, rcfg.pairs)
    cross, total_cross = top_pairs(spark, out, rcfg.pairs, cross_host=True)
    stats["cross_host_pairs"] = total_cross
    detail = top[: rcfg.details] + cross[: rcfg.details]
    texts, spans, capped = pair_details(spark, out, {(r["doc_a"], r["doc_b"]) for r in detail})

    def views(rows: list) -> list[PairView]:
        out_rows = []
        for i, r in enumerate(rows):
            key = (r["doc_a"], r["doc_b"])
            loaded = i < rcfg.details
            out_rows.append(
                _view(
                    r,
                    texts.get(r["doc_a"]) if loaded else None,
                    texts.get(r["doc_b"]) if loaded else None,
                    spans.get(key, []),
                    key in capped,
                    cfg.winnow.unit,
                )
            )
        return out_rows

    pairs, cross_views = views(top), views(cross)
    pages = run_pages(spark, out)
    hashes = top_hashes(spark, out, rcfg.hashes)
    stats["headline"] = headline({**stats, "fit": fit}, runs, pairs[0] if pairs else None)

    def write(folder: str):
        return write_report(
            folder,
            stats=stats,
            pairs=pairs,
            boilerplate=hashes,
            rank_freq=runs,
            fit=fit,
            detail_pages=rcfg.details,
            figures=figures.write if figures else None,
            total_pairs=total,
            cross_host=cross_views,
            total_cross_host=total_cross,
            run=pages,
            rank_frequency=figures.rank_plot if figures else None,
        )

    write_folder(out, "report", write)
    return {"index": "report/index.html", "headline": stats["headline"]}
