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

from ..config import RunConfig
from ..errors import UserError
from ..htmlreport import PairView, write_report
from ..htmlreport.summary import headline
from ..outputs.tables import table_meta, write_folder
from . import WRITER, StageContext
from ._reportfigures import EARLY, Figures, rank_of
from ._reportfigures import begin as begin  # the runner's: the figures begun before the report
from ._reportrows import pair_details, run_pages, top_hashes, top_pairs

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


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    rcfg = cfg.report
    stats = _stats(cfg, out)
    runs, fit, _ = rank_of(out)
    figures = None
    if rcfg.figure_docs:
        begun = ctx.handoff.pop(EARLY, None)
        figures = Figures(spark, out, rcfg.figure_docs, begun["figures"] if begun else [], hashes=rcfg.hashes)
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

    def hashes() -> list:
        """The boilerplate page's hashes: as the figure task with the plot read them, if it did."""
        got = figures.top_hashes() if figures is not None else None
        return got if got is not None else top_hashes(spark, out, rcfg.hashes)

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
    where = figures.where if figures is not None else {}
    drawn = {by: sorted(name for name in where if where[name] == by) for by in sorted(set(where.values()))}
    return {"index": "report/index.html", "headline": stats["headline"], "figures_drawn": drawn}
