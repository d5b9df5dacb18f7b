"""Stage: `pairs` + `passages` + `clusters` + `documents` → `deduped` (Parquet) and
`deduped_jsonl` (gzipped JSON lines in the datatrove/Dolma shape): the crawl with its copies removed.

What is removed, per ok document:

- **Near-duplicates** (dedup.drop_near_duplicates): a cluster keeps its `source_doc` (its
  earliest member; the passages it copied from other kept pages are cut like any page's) and
  drops every other member (`dropped_reason = near_duplicate`,
  `duplicate_of`). The threshold is the clusters' (clusters.resemblance); identical texts
  are one cluster whatever max_df said.
- **Copied passages**: every passage of a content pair at least dedup.min_passage normalized
  characters long (default t, the guarantee's length) that is content on the copying side (at
  least k characters outside its template) is cut out of the copy, and kept in the source: the
  earlier page in one order of the whole crawl, the clusters' (Last-Modified, WARC-Date, Date,
  a missing time last), then crawl order (WARC file, offset): the first occurrence. Where both
  pages have the same kinds of time this is the pair's `source`. A copy loses a passage only to
  a source that is itself kept, so a passage copied from a dropped near-duplicate stays where no
  kept page holds it, and one order means a passage is never cut from all its pages.
- **Template text** (dedup.strip_template): cut from every kept page of a host but the first in
  crawl order (webwinnow.analysis.template defines it); a page without a host keeps its own.
- A page left with fewer than dedup.min_kept_chars letters and digits is dropped (`emptied`).

Cuts use the passages' character offsets, so they are exact (webwinnow.analysis.removal). The
JSONL holds the kept pages only, one JSON object per line:
{"id", "text", "source": "webwinnow", "created": WARC-Date, "metadata": {url, WARC coordinates,
cluster, character counts}}.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import Window
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.boilerplate import is_boilerplate
from ..analysis.removal import cut, merge_spans, original_spans, span_chars, subtract_spans
from ..analysis.template import template_intervals
from ..config import RunConfig
from ..core.winnowing import fingerprint, units
from ..outputs.tables import read_table_config, write_table
from . import StageContext
from ._frames import read_table, spark_schema, url_host
from .candidates import SOURCE_BASES, boilerplate_hashes

#: What a dedup task gets per document.
_IN = (
    "doc_id",
    "url",
    "warc_file",
    "warc_offset",
    "record_id",
    "fetch_time",
    "text",
    "cluster_id",
    "cluster_size",
    "duplicate_of",
    "cuts",
    "strip",
)


def dedup_arrow(batches: Iterator[pa.RecordBatch], cfg: RunConfig, boilerplate: np.ndarray) -> Iterator[pa.RecordBatch]:
    """DEDUPED rows for batches of _IN rows (cuts: the passages to remove, with their sources)."""
    w = cfg.winnow
    for batch in batches:
        rows = batch.to_pylist()
        out: dict[str, list] = {f.name: [] for f in schemas.DEDUPED}
        for r in rows:
            text = r["text"] or ""
            n = len(text)
            copies = merge_spans(((c["start"], c["end"]) for c in r["cuts"] or ()), n)
            sources = sorted({c["source"] for c in r["cuts"] or ()})
            template: list[tuple[int, int]] = []
            if r["strip"] and r["duplicate_of"] is None:
                template = subtract_spans(template_spans(text, w.k, w.w, w.robust, w.mod_p, boilerplate, w.unit), copies)
            removed = merge_spans(copies + template, n)
            kept: str | None = cut(text, removed)
            reason = "near_duplicate" if r["duplicate_of"] is not None else None
            if reason is None and sum(ch.isalnum() for ch in kept or "") < cfg.dedup.min_kept_chars:
                reason = "emptied"
            if reason is not None:
                removed, kept = ([(0, n)] if n else []), None
            for name in ("doc_id", "url", "warc_file", "warc_offset", "record_id", "fetch_time", "cluster_id", "duplicate_of"):
                out[name].append(r[name])
            out["cluster_size"].append(r["cluster_size"] or 1)
            out["text"].append(kept)
            out["original_chars"].append(n)
            out["removed_chars"].append(span_chars(removed))
            out["kept_chars"].append(n - span_chars(removed))
            out["template_chars"].append(span_chars(template) if reason is None else 0)
            out["removed_spans"].append([{"start": s, "end": e} for s, e in removed])
            out["copied_from"].append(sources)
            out["dropped_reason"].append(reason)
        yield pa.RecordBatch.from_pydict(out, schema=schemas.DEDUPED)


def template_spans(
    text: str, k: int, w: int, robust: bool, mod_p: int, boilerplate: np.ndarray, unit: str = "char"
) -> list[tuple[int, int]]:
    """A page's template text as merged character spans of the original text."""
    hashes, positions = fingerprint(text, k=k, w=w, robust=robust, mod_p=mod_p, unit=unit)
    _, offsets, ends = units(text, unit)
    lo, hi = template_intervals(np.searchsorted(offsets, positions), is_boilerplate(hashes, boilerplate), k, w, len(offsets))
    return merge_spans(original_spans(offsets, lo, hi, ends), len(text))


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    d = cfg.dedup
    k = cfg.winnow.k
    min_passage = d.min_passage or cfg.winnow.t
    docs = (
        read_table(spark, out, "documents")
        .filter(F.col("status") == "ok")
        .select("doc_id", "url", "warc_file", "warc_offset", "record_id", "fetch_time", "text", *{c for _, c in SOURCE_BASES})
    )
    clusters = read_table(spark, out, "clusters").select("doc_id", "cluster_id", "cluster_size", "source_doc")
    duplicate_of = (
        F.when(F.col("source_doc") != F.col("doc_id"), F.col("source_doc"))
        if d.drop_near_duplicates
        else F.lit(None).cast("long")
    )
    placed = (
        docs.join(clusters, "doc_id", "left").withColumn("duplicate_of", duplicate_of).withColumn("host", url_host(F.col("url")))
    )
    # One order of the whole crawl, so a passage always stays somewhere: the clusters' (Last-Modified,
    # WARC-Date, Date, a missing or malformed time last), then crawl order. On pages with the same
    # kinds of time it is the pairs' source; a pairwise choice could make each of three pages
    # another's copy.
    never = F.lit(2**62).cast("long")
    earliest = F.struct(
        *(F.coalesce(F.unix_micros(F.col(c).try_cast("timestamp")), never) for _, c in SOURCE_BASES),
        "warc_file",
        "warc_offset",
        "doc_id",
    )
    coords = placed.select("doc_id", earliest.alias("order"), F.col("duplicate_of").isNull().alias("kept"))

    def side(x: str):
        return coords.select(*(F.col(c).alias(f"{c}_{x}") for c in ("doc_id", "order", "kept")))

    passages = (
        read_table(spark, out, "passages")
        .filter(F.col("length") >= min_passage)
        .join(side("a"), F.col("doc_a") == F.col("doc_id_a"))
        .join(side("b"), F.col("doc_b") == F.col("doc_id_b"))
        .withColumn("copy_is_b", F.col("order_a") < F.col("order_b"))
    )
    pick = lambda b, a: F.when(F.col("copy_is_b"), F.col(b)).otherwise(F.col(a))
    cuts = (
        passages.select(
            pick("doc_b", "doc_a").alias("doc_id"),
            pick("start_b", "start_a").alias("start"),
            pick("end_b", "end_a").alias("end"),
            pick("content_chars_b", "content_chars_a").alias("content"),
            pick("doc_a", "doc_b").alias("source"),
            pick("kept_a", "kept_b").alias("source_kept"),
        )
        .filter((F.col("content") >= k) & F.col("source_kept"))
        .groupBy("doc_id")
        .agg(F.collect_list(F.struct("start", "end", "source")).alias("cuts"))
    )
    first_of_host = F.row_number().over(Window.partitionBy("host").orderBy("warc_file", "warc_offset", "doc_id"))
    kept_docs = placed.filter(F.col("duplicate_of").isNull() & F.col("host").isNotNull())
    keepers = kept_docs.withColumn("_n", first_of_host).filter(F.col("_n") == 1).select("doc_id", F.lit(True).alias("_keeps"))
    # a page without a host is the first of its own
    strip = F.lit(d.strip_template) & F.col("host").isNotNull() & F.col("_keeps").isNull()
    rows = placed.join(cuts, "doc_id", "left").join(keepers, "doc_id", "left").withColumn("strip", strip).select(*_IN)

    boilerplate = np.zeros(0, np.int64)
    if d.strip_template:
        max_df = read_table_config(out, "candidate_pairs")["max_df"]
        boilerplate = np.sort(np.array([r["hash"] for r in boilerplate_hashes(spark, out, max_df).collect()], np.int64))
    shared = spark.sparkContext.broadcast(boilerplate)

    def deduped(batches):
        yield from dedup_arrow(batches, cfg, shared.value)

    # documents' order: the same rows whatever Spark's partitioning (tests compare runs)
    table = rows.repartition("doc_id").mapInArrow(deduped, spark_schema(schemas.DEDUPED)).sortWithinPartitions("doc_id")
    meta = {"min_passage": min_passage}
    write_table(table, out, "deduped", cfg, "dedup", meta)
    written = read_table(spark, out, "deduped")
    dolma = written.filter(F.col("dropped_reason").isNull()).select(
        F.col("doc_id").cast("string").alias("id"),
        "text",
        F.lit("webwinnow").alias("source"),
        F.col("fetch_time").alias("created"),
        F.struct(
            "url",
            "warc_file",
            "warc_offset",
            F.col("record_id").alias("warc_record_id"),
            "cluster_id",
            "cluster_size",
            "original_chars",
            "removed_chars",
            "kept_chars",
            "copied_from",
        ).alias("metadata"),
    )
    write_table(dolma, out, "deduped_jsonl", cfg, "dedup", meta, fmt="json")
    row = written.agg(
        F.count(F.lit(1)).alias("documents"),
        F.sum(F.col("dropped_reason").isNull().cast("long")).alias("kept"),
        F.sum((F.col("dropped_reason") == "near_duplicate").cast("long")).alias("near_duplicates"),
        F.sum((F.col("dropped_reason") == "emptied").cast("long")).alias("emptied"),
        F.sum("original_chars").alias("original_chars"),
        F.sum("removed_chars").alias("removed_chars"),
        F.sum("template_chars").alias("template_chars"),
        F.sum(F.when(F.col("dropped_reason").isNull(), F.col("removed_chars") - F.col("template_chars"))).alias("copied"),
        F.sum(F.when(F.col("dropped_reason").isNull() & (F.size("copied_from") > 0), 1)).alias("trimmed"),
    ).first()
    assert row is not None  # an aggregation has one row
    return {
        "documents": row["documents"],
        "kept": row["kept"] or 0,
        "near_duplicates": row["near_duplicates"] or 0,
        "emptied": row["emptied"] or 0,
        "original_chars": row["original_chars"] or 0,
        "removed_chars": row["removed_chars"] or 0,
        "copied_chars_removed": row["copied"] or 0,
        "template_chars_removed": row["template_chars"] or 0,
        "trimmed_documents": row["trimmed"] or 0,
        "min_passage": min_passage,
        "strip_template": d.strip_template,
    }
