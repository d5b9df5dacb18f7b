"""Stage: `pairs` and `documents` → `clusters`: documents linked by pairs with resemblance >= the
threshold, and documents with identical normalized text.

Identical pages (mirrors, the same page fetched twice, WARC/ARC twins) are one cluster even when
every fingerprint they hold is above max_df and so never paired: their normalized texts are
keyed (webwinnow.core.winnowing.text_keys) on the executors and grouped by key. The linking
edges, both kinds, are collected to the driver and joined by union–find
(webwinnow.analysis.components): near-duplicate links are a small part of all pairs, and one
machine handles 10^8 of them. Documents in no such link are in no cluster (a singleton is not a
near-duplicate). A cluster's source_doc is its earliest member: by HTTP Last-Modified, then
WARC-Date, then HTTP Date (a missing time sorts last), then the smallest doc_id.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.components import components
from ..outputs.tables import write_arrow
from . import StageContext
from ._frames import read_documents, read_table, spark_schema

KEYED = pa.schema([("doc_id", pa.int64()), ("text_key", pa.int64())])


def keyed_arrow(batches):
    """KEYED rows for batches of (doc_id, text): documents whose normalized text is not empty."""
    from ..core.winnowing import text_keys

    for batch in batches:
        keys, lengths = text_keys(batch.column("text"))
        kept = np.flatnonzero(lengths > 0)
        ids = batch.column("doc_id").to_numpy(zero_copy_only=False)
        yield pa.RecordBatch.from_arrays([pa.array(ids[kept]), pa.array(keys[kept])], schema=KEYED)


def identical_groups(spark: SparkSession, out: str) -> pa.Table:
    """(doc_id, first, n): every ok document whose normalized text another document has too,
    with the smallest doc_id of that text and how many documents have it."""
    keyed = (
        read_documents(spark, out)
        .filter(F.col("status") == "ok")
        .select("doc_id", "text")
        .mapInArrow(keyed_arrow, spark_schema(KEYED))
    )
    groups = keyed.groupBy("text_key").agg(F.min("doc_id").alias("first"), F.count(F.lit(1)).alias("n")).filter(F.col("n") >= 2)
    return keyed.join(groups, "text_key").select("doc_id", "first", "n").toArrow()


def document_times(spark: SparkSession, out: str, doc: np.ndarray) -> list[np.ndarray]:
    """Per document of doc (in its order), its times in microseconds since 1970, one array per
    basis of the candidates stage's SOURCE_BASES (Last-Modified, WARC-Date, Date); int64 max where a
    document has none (or an unreadable one)."""
    from .candidates import SOURCE_BASES

    if not len(doc):
        return [np.zeros(0, np.int64) for _ in SOURCE_BASES]
    ids = spark.createDataFrame(pa.table({"doc_id": doc}).to_pandas())
    columns = [F.unix_micros(F.col(c).try_cast("timestamp")).alias(c) for _, c in SOURCE_BASES]
    times = (
        read_documents(spark, out)
        .join(F.broadcast(ids) if len(doc) <= 1_000_000 else ids, "doc_id")
        .select("doc_id", *columns)
        .toArrow()
    )
    order = np.argsort(times.column("doc_id").to_numpy())
    at = np.searchsorted(times.column("doc_id").to_numpy()[order], doc)
    never = np.iinfo(np.int64).max
    return [times.column(c).fill_null(never).to_numpy()[order][at] for _, c in SOURCE_BASES]


def earliest_members(doc: np.ndarray, cluster: np.ndarray, times: list[np.ndarray]) -> np.ndarray:
    """Per document, its cluster's earliest member: the smallest (times[0], times[1], ..., doc_id)."""
    if not len(doc):
        return np.zeros(0, np.int64)
    order = np.lexsort((doc, *reversed(times), cluster))
    first = np.ones(len(order), bool)
    first[1:] = cluster[order][1:] != cluster[order][:-1]
    heads = order[first]  # one per cluster, clusters in increasing id
    ids = cluster[heads]
    return doc[heads][np.searchsorted(ids, cluster)]


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    threshold = float(cfg.clusters.resemblance)
    edges = read_table(spark, out, "pairs").filter(F.col("resemblance") >= threshold).select("doc_a", "doc_b").toArrow()
    same = identical_groups(spark, out)
    same_doc = same.column("doc_id").to_numpy()
    same_first = same.column("first").to_numpy()
    linked = same_doc != same_first
    doc, cluster, size = components(
        np.concatenate([edges.column("doc_a").to_numpy(), same_first[linked]]),
        np.concatenate([edges.column("doc_b").to_numpy(), same_doc[linked]]),
    )
    identical = np.ones(len(doc), np.int64)
    if len(same_doc):
        at = np.searchsorted(doc, same_doc)  # components returns the documents sorted
        identical[at] = same.column("n").to_numpy()
    source = earliest_members(doc, cluster, document_times(spark, out, doc))
    table = pa.table(
        {"doc_id": doc, "cluster_id": cluster, "cluster_size": size, "identical": identical, "source_doc": source},
        schema=schemas.CLUSTERS,
    )
    # The driver holds the components already: written from here, no Spark job.
    write_arrow(table, out, "clusters", cfg, "clusters", {"cluster_resemblance": threshold})
    stats = {
        "cluster_resemblance": threshold,
        "clusters": int(len(set(cluster.tolist()))),
        "clustered_documents": int(len(doc)),
        "largest": int(size.max()) if len(size) else 0,
        "identical_documents": int(len(same_doc)),  # documents sharing their exact text with another
        "identical_texts": int(len(set(same_first.tolist()))),
    }
    return stats
