"""Stage (check only): `passages` of the new documents with indexed ones → `contamination`, one
row per new document (a benchmark item, a page): which indexed documents hold which of its
spans, and how much of it they cover.

What decontamination asks of a benchmark against a training crawl. The guarantee is the
pipeline's: every passage of at least t = w + k − 1 normalized characters that an item shares
with an indexed document, outside template text and made of fingerprints below the cap, is in
`passages` with exact spans on both sides; so it is here. Coverage counts the item's normalized
characters inside those spans (overlapping spans once), so a re-wrapped copy (other line breaks,
other spacing) covers the same characters as the original would.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import functions as F

from .. import schemas
from ..core.winnowing import normalized_offsets
from ..outputs.tables import write_table
from . import StageContext
from ._frames import read_table, spark_schema

#: What the coverage pass is given per new document.
_GIVEN = ["doc_id", "item_id", "url", "warc_file", "warc_offset", "text", "matches", "spans"]


def covered(offsets: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> int:
    """Normalized characters (whose offsets in the text are `offsets`, sorted) inside the union of
    the character spans [starts[i], ends[i])."""
    if not len(starts) or not len(offsets):
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    total, lo, hi = 0, int(starts[0]), int(ends[0])
    for s, e in zip(starts[1:].tolist(), ends[1:].tolist(), strict=True):
        if s > hi:
            total += int(np.searchsorted(offsets, hi) - np.searchsorted(offsets, lo))
            lo, hi = s, e
        else:
            hi = max(hi, e)
    return total + int(np.searchsorted(offsets, hi) - np.searchsorted(offsets, lo))


def coverage_arrow(batches, unit: str = "char", lexer: str = "c"):
    """CONTAMINATION rows: per new document its spans, matches and the share of its units covered."""
    for batch in batches:
        rows = batch.to_pylist()
        out = []
        for r in rows:
            offsets = normalized_offsets(r["text"] or "", unit, lexer)
            spans = r["spans"] or []
            starts = np.array([s["start"] for s in spans], np.int64)
            ends = np.array([s["end"] for s in spans], np.int64)
            n = len(offsets)
            chars = covered(offsets, starts, ends)
            out.append(
                {
                    **{k: r[k] for k in _GIVEN if k != "text"},
                    "norm_chars": n,
                    "covered_chars": chars,
                    "covered_share": chars / n if n else None,
                    "longest": max((s["length"] for s in spans), default=0),
                    "indexed_documents": len(r["matches"] or []),
                    "matches": r["matches"] or [],
                    "spans": sorted(spans, key=lambda s: (s["start"], s["doc_id"])),
                }
            )
        yield pa.RecordBatch.from_pylist(out, schema=schemas.CONTAMINATION)


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    unit, lexer = cfg.winnow.unit, cfg.winnow.lexer
    indexed = read_table(spark, out, "indexed_documents").select(
        F.col("doc_id").alias("doc_a"),
        F.col("url").alias("i_url"),
        F.col("warc_file").alias("i_file"),
        F.col("warc_offset").alias("i_offset"),
    )
    # with --self, pairs of two new documents are in passages too: only the indexed side counts here
    shared = read_table(spark, out, "passages").join(indexed.select("doc_a"), "doc_a", "left_semi")
    spans = shared.groupBy(F.col("doc_b").alias("doc_id")).agg(
        F.collect_list(
            F.struct(
                F.col("start_b").alias("start"),
                F.col("end_b").alias("end"),
                F.col("doc_a").alias("doc_id"),
                F.col("start_a").alias("start_indexed"),
                F.col("end_a").alias("end_indexed"),
                "length",
            )
        ).alias("spans")
    )
    per_pair = (
        shared.groupBy("doc_a", "doc_b")
        .agg(F.count(F.lit(1)).alias("passages"), F.sum("length").alias("chars"))
        .join(indexed, "doc_a")
    )
    matches = per_pair.groupBy(F.col("doc_b").alias("doc_id")).agg(
        F.sort_array(
            F.collect_list(
                F.struct(
                    F.col("doc_a").alias("doc_id"),
                    F.col("i_url").alias("url"),
                    F.col("i_file").alias("warc_file"),
                    F.col("i_offset").alias("warc_offset"),
                    "passages",
                    "chars",
                )
            )
        ).alias("matches")
    )
    new = (
        read_table(spark, out, "documents")
        .filter(F.col("status") == "ok")
        .select("doc_id", F.col("record_id").alias("item_id"), "url", "warc_file", "warc_offset", "text")
    )
    rows = (
        new.join(matches, "doc_id", "left")
        .join(spans, "doc_id", "left")
        .select(*_GIVEN)
        .mapInArrow(lambda batches: coverage_arrow(batches, unit, lexer), spark_schema(schemas.CONTAMINATION))
    )
    t = cfg.winnow.w + cfg.winnow.k - 1
    write_table(rows, out, "contamination", cfg, "contamination", {"t": t})
    row = (
        read_table(spark, out, "contamination")
        .agg(
            F.count(F.lit(1)).alias("documents"),
            F.sum((F.col("indexed_documents") > 0).cast("long")).alias("contaminated"),
            F.sum((F.col("covered_share") >= 0.5).cast("long")).alias("half"),
            F.sum((F.col("covered_chars") == F.col("norm_chars")).cast("long") * (F.col("norm_chars") > 0).cast("long")).alias(
                "all"
            ),
            F.sum("covered_chars").alias("chars"),
        )
        .collect()[0]
    )
    return {
        "documents": row["documents"],
        "contaminated": row["contaminated"] or 0,
        "half_covered": row["half"] or 0,
        "covered": row["all"] or 0,
        "covered_chars": row["chars"] or 0,
        "t": t,
    }
