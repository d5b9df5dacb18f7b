"""Stage: `pair_seeds` + `documents` → `passages`, the exact copied spans of every reported pair.

Each pair's seeds (positions of its shared fingerprints, boilerplate excluded) are grown into
maximal matching spans of the two normalized texts (see webwinnow.passages). The work per pair
is bounded by pairs.max_spans and pairs.max_chars; a pair that hit a bound has capped = true.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..config import RunConfig
from ..faults import injected_stages, maybe_fail
from ..output import update_stats, write_table
from ..passages import copied_passages


def passages_arrow(batch: pa.RecordBatch, k: int, max_spans: int, max_chars: int) -> pa.RecordBatch:
    """PASSAGES rows for a batch of (doc_a, doc_b, seeds, text_a, text_b)."""
    cols = {name: [] for name in schemas.PASSAGES.names}
    doc_a = batch.column("doc_a").to_pylist()
    doc_b = batch.column("doc_b").to_pylist()
    texts_a = batch.column("text_a").to_pylist()
    texts_b = batch.column("text_b").to_pylist()
    seeds = batch.column("seeds")
    pos_a = seeds.values.field("pos_a").to_numpy(zero_copy_only=False)
    pos_b = seeds.values.field("pos_b").to_numpy(zero_copy_only=False)
    offsets = seeds.offsets.to_numpy()
    for row in range(batch.num_rows):
        if texts_a[row] is None or texts_b[row] is None:
            continue
        lo, hi = offsets[row] - offsets[0], offsets[row + 1] - offsets[0]
        found = copied_passages(texts_a[row], texts_b[row], pos_a[lo:hi], pos_b[lo:hi], k,
                                max_spans=max_spans, max_chars=max_chars)
        n = len(found)
        cols["doc_a"].append(np.full(n, doc_a[row], np.int64))
        cols["doc_b"].append(np.full(n, doc_b[row], np.int64))
        for name in ("start_a", "end_a", "start_b", "end_b", "length"):
            cols[name].append(getattr(found, name).astype(np.int64))
        cols["capped"].append(np.full(n, found.capped, bool))
    arrays = [
        pa.array(np.concatenate(cols[f.name]) if cols[f.name] else np.empty(0, f.type.to_pandas_dtype()), type=f.type)
        for f in schemas.PASSAGES
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schemas.PASSAGES)


def run(spark: SparkSession, cfg: RunConfig, out: str) -> dict:
    k, max_spans, max_chars = cfg.winnow.k, cfg.pairs.max_spans, cfg.pairs.max_chars

    inject = injected_stages(spark)

    def grow(batches):
        for batch in batches:
            maybe_fail("passages", inject)
            yield passages_arrow(batch, k, max_spans, max_chars)

    texts = spark.read.parquet(f"{out}/documents").filter(F.col("status") == "ok").select("doc_id", "text")
    rows = (
        spark.read.parquet(f"{out}/pair_seeds")
        .join(texts.select(F.col("doc_id").alias("doc_a"), F.col("text").alias("text_a")), "doc_a")
        .join(texts.select(F.col("doc_id").alias("doc_b"), F.col("text").alias("text_b")), "doc_b")
        .select("doc_a", "doc_b", "seeds", "text_a", "text_b")
    )
    passages = rows.mapInArrow(grow, schemas.spark_schema(schemas.PASSAGES))
    write_table(passages, out, "passages", cfg, "passages")
    row = spark.read.parquet(f"{out}/passages").agg(
        F.count(F.lit(1)).alias("passages"),
        F.countDistinct("doc_a", "doc_b").alias("pairs"),
        F.sum(F.col("capped").cast("int")).alias("capped"),
        F.sum("length").alias("chars"),
    ).first()
    stats = {"passages": row["passages"], "pairs_with_passages": row["pairs"],
             "capped_spans": row["capped"] or 0, "normalized_chars": row["chars"] or 0}
    update_stats(out, "passages", stats)
    return stats
