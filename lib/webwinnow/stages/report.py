"""Stage: every table → `report/` (index.html, pair pages, boilerplate page, plot, figures, stats.json).

Only what a person can read is collected to the driver: the top pairs (report_pairs), the texts
and passages of the first report_details of them, the most frequent hashes, and the
run-length-encoded rank–frequency curve. The figures page (webwinnow.explore.figures) is drawn
on the driver from the tables with pyarrow, its per-document parts on report_figure_docs
documents.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import storage
from ..config import RunConfig
from ..errors import UserError
from ..htmlreport import HashView, PairView, write_report
from ..tables import read_arrow, table_meta
from ._frames import read_table

STAGE_TABLES = {"hash_freq": "rank_freq", "pairs": "candidate_pairs", "passages": "passages", "clusters": "clusters"}


def _stage_stats(out: str, table: str) -> dict:
    stats = (table_meta(out, table) or {}).get("stats")
    if stats is None:
        raise UserError(f"{out}/{table} records no statistics (made by an older webwinnow): "
                        "rerun 'webwinnow run' on the crawl")
    return stats


def _stats(cfg: RunConfig, out: str) -> dict:
    """The report's figures, from the statistics each stage stored once beside its table."""
    stages = {key: _stage_stats(out, table) for key, table in STAGE_TABLES.items()}
    w = cfg.winnow
    stats: dict = {"k": w.k, "w": w.w, "t": w.t, "robust": w.robust, "mod_p": w.mod_p,
                   "expected_density": w.expected_density, "stages": stages}
    e, f = _stage_stats(out, "ledger"), _stage_stats(out, "doc_stats")
    stats.update({"inputs": e["files"], "failed_files": e["failed_files"],
                  **{key: e[key] for key in ("records", "parsed", "skipped", "failed", "flagged")}})
    stats.update({key: f[key] for key in ("documents", "fingerprints", "kgrams", "norm_chars", "density")})
    for stage, keys in (("pairs", ("max_df", "candidate_pairs", "boilerplate_hashes")),
                        ("passages", ("passages", "pairs", "template_pairs", "content_chars")),
                        ("clusters", ("clusters", "clustered_documents", "cluster_resemblance")),
                        ("hash_freq", ("hashes",))):
        for key in keys:
            if key in stages[stage]:
                stats[key] = stages[stage][key]
    return stats


def run(spark: SparkSession, cfg: RunConfig, out: str) -> str:
    pcfg = cfg.pairs
    stats = _stats(cfg, out)
    top = (
        # by copied content: characters outside template (the smaller side), then share of a page
        read_table(spark, out, "pairs")
        .withColumn("_c", F.least("content_chars_a", "content_chars_b"))
        .withColumn("_s", F.greatest("content_share_a", "content_share_b"))
        .orderBy(F.desc("_c"), F.desc("_s"), "doc_a", "doc_b")
        .limit(pcfg.report_pairs)
        .drop("_c", "_s")
        .collect()
    )
    detail = top[: pcfg.report_details]
    texts: dict[int, str | None] = {}
    spans: dict[tuple[int, int], list] = defaultdict(list)
    capped: set[tuple[int, int]] = set()
    if detail:
        keys = spark.createDataFrame([(r["doc_a"], r["doc_b"]) for r in detail], "doc_a long, doc_b long")
        for p in read_table(spark, out, "passages").join(F.broadcast(keys), ["doc_a", "doc_b"]).collect():
            spans[(p["doc_a"], p["doc_b"])].append((p["start_a"], p["end_a"], p["start_b"], p["end_b"], p["length"]))
            if p["capped"]:
                capped.add((p["doc_a"], p["doc_b"]))
        ids = spark.createDataFrame([(d,) for d in {x for r in detail for x in (r["doc_a"], r["doc_b"])}], "doc_id long")
        for d in read_table(spark, out, "documents").join(F.broadcast(ids), "doc_id").select("doc_id", "text").collect():
            texts[d["doc_id"]] = d["text"]
    pairs = []
    for i, r in enumerate(top):
        key = (r["doc_a"], r["doc_b"])
        pairs.append(PairView(
            doc_a=r["doc_a"], doc_b=r["doc_b"], url_a=r["url_a"], url_b=r["url_b"], shared=r["shared"],
            fp_a=r["fp_a"], fp_b=r["fp_b"], resemblance=r["resemblance"], containment_a=r["containment_a"],
            containment_b=r["containment_b"],
            text_a=texts.get(r["doc_a"]) if i < len(detail) else None,
            text_b=texts.get(r["doc_b"]) if i < len(detail) else None,
            passages=tuple(sorted(spans.get(key, ()))), capped=key in capped,
            source=r["source"], source_basis=r["source_basis"],
        ))
    hashes = [
        HashView(hash=h["hash"], docs=h["docs"], occurrences=h["occurrences"], hosts=h["hosts"], snippet=h["snippet"])
        for h in read_table(spark, out, "hash_freq")
        .orderBy(F.desc("docs"), F.desc("occurrences"), "hash").limit(pcfg.report_hashes).collect()
    ]
    curve = read_arrow(out, "rank_freq").sort_by("rank")  # a few hundred rows: no Spark job
    runs = list(zip(*(curve.column(name).to_pylist() for name in ("rank", "rank_last", "docs", "hashes")), strict=True))
    fit = stats["stages"].get("hash_freq", {}).get("fit", {})
    def draw(folder):
        from ..explore.figures import write_figures
        from ..explore.run import RunOutput

        return write_figures(RunOutput(out, tables_in=out), folder, max_docs=pcfg.report_figure_docs)

    def write(folder: str):
        return write_report(folder, stats=stats, pairs=pairs, boilerplate=hashes, rank_freq=runs, fit=fit,
                            detail_pages=pcfg.report_details, figures=draw if pcfg.report_figure_docs else None)

    if not storage.is_uri(out):
        return str(write(os.path.join(out, "report")))
    # a generation on a store (unread until committed): built on the driver's disk, then uploaded
    target = storage.child(out, "report")
    with tempfile.TemporaryDirectory(prefix="webwinnow-report-") as tmp:
        write(os.path.join(tmp, "report"))
        storage.delete_tree(target)
        storage.upload_tree(os.path.join(tmp, "report"), target)
    return storage.child(target, "index.html")
