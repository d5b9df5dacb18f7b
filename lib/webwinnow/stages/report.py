"""Stage: every table → `report/` (index.html, pair pages, cross-host pairs, clusters, failed files,
dedup, boilerplate page, plot, figures, stats.json).

Only what a person can read is collected to the driver: the top pairs (report.pairs), the texts
and passages of the first report.details of them, the most frequent hashes, and the
run-length-encoded rank–frequency curve. The figures page (webwinnow.explore.figures) is drawn
on the driver from the tables with pyarrow, its per-document parts on report.figure_docs
documents.
"""

from __future__ import annotations

from collections import defaultdict

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from ..config import RunConfig
from ..errors import UserError
from ..htmlreport import ClusterView, HashView, PairView, RunPages, write_report
from ..htmlreport.summary import headline
from ..outputs.tables import read_arrow, table_meta, table_stats, write_folder
from . import WRITER, StageContext, table_is_current
from ._frames import read_documents, read_table, url_host

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


def _top_pairs(spark: SparkSession, out: str, limit: int, cross_host: bool = False) -> tuple[list, int]:
    """The pairs the report lists (with their pages' fetch times and WARC coordinates), best
    first: by copied content (characters outside template, the smaller side), then the larger
    share of a page; and how many such pairs there are."""
    pairs = read_table(spark, out, "pairs")
    if cross_host:
        pairs = pairs.filter(~F.coalesce(url_host(F.col("url_a")) == url_host(F.col("url_b")), F.lit(False)))
    total = pairs.count()
    docs = read_documents(spark, out).select("doc_id", "fetch_time", "last_modified", "http_date", "warc_file", "warc_offset")

    def side(x: str):
        return docs.select(*(F.col(c).alias(f"{c}_{x}" if c != "doc_id" else f"doc_{x}") for c in docs.columns))

    top = (
        pairs.withColumn("_c", F.least("content_chars_a", "content_chars_b"))
        .withColumn("_s", F.greatest("content_share_a", "content_share_b"))
        .orderBy(F.desc("_c"), F.desc("_s"), "doc_a", "doc_b")
        .limit(limit)
        .join(side("a"), "doc_a", "left")
        .join(side("b"), "doc_b", "left")
        .orderBy(F.desc("_c"), F.desc("_s"), "doc_a", "doc_b")
        .collect()
    )
    return top, total


def _run_pages(
    spark: SparkSession, out: str, clusters_shown: int = 50, members_shown: int = 20, trimmed_shown: int = 50
) -> RunPages:
    """The clusters, failed files and dedup pages' content."""
    ledger = read_table(spark, out, "ledger")
    failed = [
        (r["file"], r["reason"], r["records_seen"], r["parsed"])
        for r in ledger.filter((F.col("kind") == "file") & (F.col("status") == "failed")).orderBy("file").collect()
    ]
    outcomes = [
        (r["status"], r["reason"], r["count"])
        for r in ledger.filter(F.col("kind") == "record")
        .groupBy("status", "reason")
        .count()
        .orderBy(F.desc("count"), "status", "reason")
        .collect()
    ]
    clusters = read_table(spark, out, "clusters")
    total_clusters = clusters.select("cluster_id").distinct().count()
    biggest = (
        clusters.groupBy("cluster_id")
        .agg(
            F.first("cluster_size").alias("size"),
            F.max("identical").alias("identical"),
            F.first("source_doc").alias("source_doc"),
        )
        .orderBy(F.desc("size"), "cluster_id")
        .limit(clusters_shown)
    )
    # a cluster's first members_shown by doc_id and its source: a cluster of a crawl's exact
    # duplicates can hold millions of documents, and the page shows a few
    members = (
        clusters.join(F.broadcast(biggest.select("cluster_id")), "cluster_id")
        .withColumn("_n", F.row_number().over(Window.partitionBy("cluster_id").orderBy("doc_id")))
        .filter((F.col("_n") <= members_shown) | (F.col("doc_id") == F.col("source_doc")))
        .join(read_documents(spark, out).select("doc_id", "url"), "doc_id")
        .collect()
    )
    urls = {m["doc_id"]: m["url"] for m in members}
    by_cluster: dict[int, list] = defaultdict(list)
    for m in sorted(members, key=lambda m: m["doc_id"]):
        if m["_n"] <= members_shown:
            by_cluster[m["cluster_id"]].append((m["doc_id"], m["url"]))
    views = tuple(
        ClusterView(
            c["cluster_id"],
            c["size"],
            c["identical"],
            c["source_doc"],
            urls.get(c["source_doc"]),
            tuple(by_cluster[c["cluster_id"]]),
        )
        for c in biggest.collect()
    )
    dedup, trimmed = None, ()  # type: tuple[dict | None, tuple]
    if table_is_current(out, "deduped"):
        dedup = table_stats(out, "deduped")
        trimmed = tuple(
            (r["doc_id"], r["url"], r["original_chars"], r["removed_chars"], r["dropped_reason"])
            for r in read_table(spark, out, "deduped")
            .filter(F.col("dropped_reason").isNull())
            .orderBy(F.desc("removed_chars"), "doc_id")
            .limit(trimmed_shown)
            .collect()
            if r["removed_chars"]
        )
    contamination, covered = None, ()  # type: tuple[dict | None, tuple]
    if table_is_current(out, "contamination"):
        contamination = {**(table_stats(out, "indexed_documents") or {}), **(table_stats(out, "contamination") or {})}
        covered = tuple(
            (
                r["item_id"] if not r["url"] or r["url"] == r["item_id"] else r["url"],
                r["norm_chars"],
                r["covered_chars"],
                r["covered_share"],
                r["longest"],
                r["indexed_documents"],
                tuple(m["url"] for m in (r["matches"] or [])[:3]),
            )
            for r in read_table(spark, out, "contamination")
            .filter(F.col("covered_chars") > 0)
            .orderBy(F.desc("covered_share"), F.desc("covered_chars"), "doc_id")
            .limit(trimmed_shown * 4)
            .collect()
        )
    return RunPages(
        failed_files=tuple(failed),
        record_outcomes=tuple(outcomes),
        clusters=views,
        total_clusters=total_clusters,
        dedup=dedup,
        trimmed=trimmed,
        contamination=contamination,
        covered=covered,
    )


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
    top, total = _top_pairs(spark, out, rcfg.pairs)
    cross, total_cross = _top_pairs(spark, out, rcfg.pairs, cross_host=True)
    stats["cross_host_pairs"] = total_cross
    detail = top[: rcfg.details] + cross[: rcfg.details]
    texts: dict[int, str | None] = {}
    spans: dict[tuple[int, int], list] = defaultdict(list)
    capped: set[tuple[int, int]] = set()
    if detail:
        keys = spark.createDataFrame(sorted({(r["doc_a"], r["doc_b"]) for r in detail}), "doc_a long, doc_b long")
        for p in read_table(spark, out, "passages").join(F.broadcast(keys), ["doc_a", "doc_b"]).collect():
            spans[(p["doc_a"], p["doc_b"])].append((p["start_a"], p["end_a"], p["start_b"], p["end_b"], p["length"]))
            if p["capped"]:
                capped.add((p["doc_a"], p["doc_b"]))
        ids = spark.createDataFrame([(d,) for d in {x for r in detail for x in (r["doc_a"], r["doc_b"])}], "doc_id long")
        for d in read_documents(spark, out).join(F.broadcast(ids), "doc_id").select("doc_id", "text").collect():
            texts[d["doc_id"]] = d["text"]

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
    run_pages = _run_pages(spark, out)
    hashes = [
        HashView(hash=h["hash"], docs=h["docs"], occurrences=h["occurrences"], hosts=h["hosts"], snippet=h["snippet"])
        for h in read_table(spark, out, "hash_freq")
        .orderBy(F.desc("docs"), F.desc("occurrences"), "hash")
        .limit(rcfg.hashes)
        .collect()
    ]
    curve = read_arrow(out, "rank_freq").sort_by("rank")  # a few hundred rows: no Spark job
    runs = list(zip(*(curve.column(name).to_pylist() for name in ("rank", "rank_last", "docs", "hashes")), strict=True))
    fit = stats["stages"].get(WRITER["rank_freq"].name, {}).get("fit", {})
    stats["headline"] = headline({**stats, "fit": fit}, runs, pairs[0] if pairs else None)

    def draw(folder):
        from ..explore.figures import write_figures
        from ..explore.run import RunOutput

        return write_figures(RunOutput(out, tables_in=out), folder, max_docs=rcfg.figure_docs)

    def write(folder: str):
        return write_report(
            folder,
            stats=stats,
            pairs=pairs,
            boilerplate=hashes,
            rank_freq=runs,
            fit=fit,
            detail_pages=rcfg.details,
            figures=draw if rcfg.figure_docs else None,
            total_pairs=total,
            cross_host=cross_views,
            total_cross_host=total_cross,
            run=run_pages,
        )

    write_folder(out, "report", write)
    return {"index": "report/index.html", "headline": stats["headline"]}
