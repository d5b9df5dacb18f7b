"""The fingerprint stage: `documents` → `fingerprints` (doc_id, hash, pos) and `doc_stats`.

The kernel runs once per Arrow batch (mapInArrow): the text column's buffers go to Numba as
they are, with no per-row Python. In a command that reads the crawl first, extract's tasks have
already winnowed each text as they read it (stages.extract): this stage then only publishes
those tables.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..core.winnowing import fingerprint_batch
from ..outputs.parts import drop_unfinished_parts
from ..outputs.tables import drop_staged, finish_table, staged, write_table
from . import StageContext
from ._faults import injected_stages, maybe_fail
from ._frames import read_table, spark_schema
from ._session import cache_level

#: doc_stats' hidden folder (Spark and pyarrow readers skip it) of its documents' text keys:
#: TEXT_KEY_ROWS for each ok document whose normalized text is not empty, written by the extract
#: tasks as they fingerprint the texts they read (core.winnowing.text_keys). The clusters stage
#: groups identical texts from them instead of reading and normalizing every text again.
TEXT_KEYS = "_text_keys"
TEXT_KEY_ROWS = pa.schema([("doc_id", pa.int64()), ("text_key", pa.int64())])


@dataclass(frozen=True)
class FingerprintResult:
    documents: int
    fingerprints: int
    kgrams: int
    norm_chars: int

    @property
    def density(self) -> float:
        return self.fingerprints / self.kgrams if self.kgrams else 0.0


def fingerprint_arrow(
    batch: pa.RecordBatch, k: int, w: int, robust: bool, mod_p: int, unit: str = "char", lexer: str = "c"
) -> pa.RecordBatch:
    """FINGERPRINT_ROWS for a batch of (doc_id, text): fingerprints, then one stats row per doc."""
    ids = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    fp = fingerprint_batch(batch.column(1), k, w, robust, mod_p=mod_p, unit=unit, lexer=lexer)
    n_fp, n_docs = len(fp.hashes), len(ids)
    if n_fp and int(fp.positions.max()) > np.iinfo(np.int32).max:
        raise ValueError("a document longer than 2^31 characters: lower extract.max_decoded_bytes")
    none = pa.nulls(n_docs, pa.int64())
    return pa.RecordBatch.from_arrays(
        [
            pa.array(np.concatenate([ids[fp.doc], ids])),
            pa.concat_arrays([pa.array(fp.hashes), none]),
            pa.array(np.concatenate([fp.positions.astype(np.int32), np.full(n_docs, -1, np.int32)])),
            pa.concat_arrays([pa.nulls(n_fp, pa.int64()), pa.array(fp.norm_chars)]),
            pa.concat_arrays([pa.nulls(n_fp, pa.int64()), pa.array(fp.kgrams)]),
            pa.concat_arrays([pa.nulls(n_fp, pa.int64()), pa.array(fp.counts)]),
        ],
        schema=schemas.FINGERPRINT_ROWS,
    )


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    wcfg = cfg.winnow
    k, w, robust, mod_p, unit, lexer = wcfg.k, wcfg.w, wcfg.robust, wcfg.mod_p, wcfg.unit, wcfg.lexer

    meta = {"t": wcfg.t, "expected_density": wcfg.expected_density}
    made = ctx.handoff.pop("fingerprints", None)
    if made:
        if made["winnow"] == wcfg.identity() and all(staged(out, t) for t in made["tables"]):
            keys = made.get("text_keys")  # the staged folder of doc_stats' text keys
            if keys:
                drop_unfinished_parts(keys)
            for t in made["tables"]:
                # each part holds the ok pages of the documents part of its name (hash_freq
                # finds their hosts there)
                also = {"text_keys": TEXT_KEYS} if keys and t == "doc_stats" else {}
                finish_table(out, t, cfg, "fingerprint", {**meta, "document_parts": True, **also})
            result = FingerprintResult(**made["stats"])
            return {**asdict(result), "density": result.density}
        for t in made["tables"]:
            drop_staged(out, t)

    inject = injected_stages(spark)

    def kernel(batches):
        for batch in batches:
            maybe_fail("fingerprint", inject)
            yield fingerprint_arrow(batch, k, w, robust, mod_p, unit, lexer)

    docs = read_table(spark, out, "documents").filter(F.col("status") == "ok").select("doc_id", "text")
    rows = docs.mapInArrow(kernel, spark_schema(schemas.FINGERPRINT_ROWS))
    rows = rows.persist(cache_level(spark))
    try:
        fingerprints = rows.filter(F.col("pos") >= 0).select("doc_id", "hash", "pos")
        stats = rows.filter(F.col("pos") < 0).select("doc_id", "norm_chars", "kgrams", "fingerprints")
        write_table(fingerprints, out, "fingerprints", cfg, "fingerprint", meta)
        write_table(stats, out, "doc_stats", cfg, "fingerprint", meta)
    finally:
        rows.unpersist()
    result = summarize(spark, out)
    return {**asdict(result), "density": result.density}


def summarize(spark: SparkSession, out: str) -> FingerprintResult:
    row = (
        read_table(spark, out, "doc_stats")
        .agg(
            F.count("*").alias("docs"),
            F.sum("fingerprints").alias("fps"),
            F.sum("kgrams").alias("kgrams"),
            F.sum("norm_chars").alias("norm"),
        )
        .first()
    )
    assert row is not None  # an aggregation has one row
    return FingerprintResult(row["docs"], row["fps"] or 0, row["kgrams"] or 0, row["norm"] or 0)
