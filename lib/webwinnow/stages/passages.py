"""Stage: `pair_seeds` + `documents` → `passages`, the exact copied spans of every reported pair.

Each pair's seeds (positions of its shared fingerprints, boilerplate excluded) are grown into
maximal matching spans of the two normalized texts (see webwinnow.analysis.spans). The work per pair
is bounded by pairs.max_spans and pairs.max_chars; a pair that hit a bound has capped = true.
Each span also gets the share of its fingerprints that are boilerplate hashes, so template
text a pair happens to share can be told from copied content.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.boilerplate import boilerplate_share
from ..analysis.spans import copied_passages
from ..config import RunConfig
from ..core.winnowing import fingerprint
from ..tables import read_table_config, write_table
from ._faults import injected_stages, maybe_fail
from ._frames import read_table, spark_schema
from .pairs import boilerplate_hashes


def passages_arrow(batch: pa.RecordBatch, cfg: RunConfig, boilerplate: np.ndarray) -> pa.RecordBatch:
    """PASSAGES rows for a batch of (doc_a, doc_b, seeds, text_a, text_b)."""
    w = cfg.winnow
    cols: dict[str, list[np.ndarray]] = {name: [] for name in schemas.PASSAGES.names}
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
        found = copied_passages(texts_a[row], texts_b[row], pos_a[lo:hi], pos_b[lo:hi], w.k,
                                max_spans=cfg.pairs.max_spans, max_chars=cfg.pairs.max_chars)
        n = len(found)
        cols["doc_a"].append(np.full(n, doc_a[row], np.int64))
        cols["doc_b"].append(np.full(n, doc_b[row], np.int64))
        for name in ("start_a", "end_a", "start_b", "end_b", "length"):
            cols[name].append(getattr(found, name).astype(np.int64))
        cols["capped"].append(np.full(n, found.capped, bool))
        # The seeds are the pair's non-boilerplate fingerprints; the span they grew into may
        # still be mostly site template (a k-gram straddling the end of a menu and the start of
        # the content can fall below the cap): say how much.
        fp_hashes, fp_positions = fingerprint(texts_a[row], w.k, w.w, w.robust, mod_p=w.mod_p)
        cols["boilerplate"].append(boilerplate_share(fp_hashes, fp_positions, boilerplate, found.start_a, found.end_a))
    arrays = [
        pa.array(np.concatenate(cols[f.name]) if cols[f.name] else np.empty(0, f.type.to_pandas_dtype()),
                 type=f.type, from_pandas=True)
        for f in schemas.PASSAGES
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schemas.PASSAGES)


def run(spark: SparkSession, cfg: RunConfig, out: str) -> dict:
    max_df = read_table_config(out, "pairs")["max_df"]
    boilerplate = np.sort(np.array([r["hash"] for r in boilerplate_hashes(spark, out, max_df).collect()], dtype=np.int64))
    shared = spark.sparkContext.broadcast(boilerplate)
    inject = injected_stages(spark)

    def grow(batches):
        for batch in batches:
            maybe_fail("passages", inject)
            yield passages_arrow(batch, cfg, shared.value)

    texts = read_table(spark, out, "documents").filter(F.col("status") == "ok").select("doc_id", "text")
    rows = (
        read_table(spark, out, "pair_seeds")
        .join(texts.select(F.col("doc_id").alias("doc_a"), F.col("text").alias("text_a")), "doc_a")
        .join(texts.select(F.col("doc_id").alias("doc_b"), F.col("text").alias("text_b")), "doc_b")
        .select("doc_a", "doc_b", "seeds", "text_a", "text_b")
    )
    passages = rows.mapInArrow(grow, spark_schema(schemas.PASSAGES))
    write_table(passages, out, "passages", cfg, "passages")
    row = read_table(spark, out, "passages").agg(
        F.count(F.lit(1)).alias("passages"),
        F.countDistinct("doc_a", "doc_b").alias("pairs"),
        F.sum(F.col("capped").cast("int")).alias("capped"),
        F.sum("length").alias("chars"),
        F.sum((F.col("boilerplate") >= 0.5).cast("int")).alias("boilerplate"),
    ).first()
    assert row is not None  # an aggregation has one row
    stats = {"passages": row["passages"], "pairs_with_passages": row["pairs"],
             "capped_spans": row["capped"] or 0, "normalized_chars": row["chars"] or 0,
             "boilerplate_passages": row["boilerplate"] or 0, "max_df": max_df}
    return stats
