"""Stage: `pairs` and `documents` → `clusters`: documents linked by pairs with resemblance >= the
threshold, and documents with identical normalized text.

Identical pages (mirrors, the same page fetched twice, WARC/ARC twins) are one cluster even when
every fingerprint they hold is above max_df and so never paired: their normalized texts are
keyed (webwinnow.core.winnowing.text_keys) and grouped by key: up to DRIVER_KEYED_DOCS
documents grouped on the driver, beyond that by Spark. The keys are those the extract tasks kept
beside doc_stats as they fingerprinted the texts (fingerprint.TEXT_KEYS), while doc_stats is
current; else (a check's indexed documents, doc_stats made by the fingerprint stage alone or
by an older webwinnow) each documents file's texts are keyed again by a Python task. Documents in no
such link are in no cluster (a singleton is not a near-duplicate). A cluster's source_doc is its
earliest member: by HTTP Last-Modified, then WARC-Date, then HTTP Date (a missing time sorts
last), then the smallest doc_id.

The linking edges, both kinds, are joined into components in Spark (webwinnow.stages._components:
large-star / small-star, the earliest member by an aggregation), so the driver holds none of
them; up to clusters.driver_edges of them (5 million: about 200 MB) are instead collected and
joined by union–find on the driver (webwinnow.analysis.components), which takes a second where
Spark's rounds take tens. Both give the same table. A run's driver calls no Numba kernel here:
the texts are keyed by the workers, and a crawl's few thousand links are joined by the
union–find's Python loop.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..analysis.components import components
from ..core.distinct import distinct
from ..outputs.tables import (
    data_location,
    folder_parquet_files,
    parquet_files,
    read_row_groups,
    row_count,
    table_meta,
    write_arrow,
    write_table,
)
from . import StageContext
from ._components import spark_components
from ._frames import read_documents, read_table, spark_schema
from ._session import broadcast_rows

KEYED = pa.schema([("doc_id", pa.int64()), ("text_key", pa.int64())])


def keyed_arrow(batches):
    """KEYED rows for batches of (doc_id, text): documents whose normalized text is not empty."""
    from ..core.winnowing import text_keys

    for batch in batches:
        keys, lengths = text_keys(batch.column("text"))
        kept = np.flatnonzero(lengths > 0)
        ids = batch.column("doc_id").to_numpy(zero_copy_only=False)
        yield pa.RecordBatch.from_arrays([pa.array(ids[kept]), pa.array(keys[kept])], schema=KEYED)


#: Up to this many documents (the indexed ones too, in a check), their texts are keyed by one
#: Python task per Parquet file, which reads them with pyarrow, and grouped on the driver: 0.4-0.5
#: CPU-s of keying for the docs corpus's 13,624, where Spark's job, its aggregation and its join
#: cost the JVM and the workers some 2 CPU-s; far more keys would take the driver's one core
#: longer than the executors take together.
DRIVER_KEYED_DOCS = 200_000
SAME = pa.schema([("doc_id", pa.int64()), ("first", pa.int64()), ("n", pa.int64())])


def _keyed_files(files: list[str]):
    """A task's KEYED rows: the ok texts of the documents files it is given (their ids in
    `files`), keyed a row group at a time."""

    def keyed(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                with storage.open_input(files[i]) as fh:
                    parquet = pq.ParquetFile(fh)
                    for group in range(parquet.num_row_groups):
                        rows = parquet.read_row_group(group, columns=["doc_id", "text", "status"])
                        yield from keyed_arrow(rows.filter(pc.equal(rows.column("status"), "ok")).to_batches())

    return keyed


def identical_on_driver(out: str, spark: SparkSession | None = None) -> pa.Table:
    """identical_groups' rows (SAME), grouped on the driver. The texts are keyed by one Python
    task per documents file, where the kernels are loaded already and the files are read side by
    side: the driver calls no kernel in a run (Numba's first call and the normalizer's load cost
    it 0.5-0.6 CPU-s, the keying itself 0.4-0.5 on one core); without a session (or under Spark
    Connect, whose Python tasks cannot read the files themselves) the driver keys them, a row
    group at a time."""
    from ._tasks import has_rdds, slots

    names = [name for name in ("documents", "indexed_documents") if table_meta(out, name) is not None]
    stored = stored_text_keys(out)
    if stored is not None:
        got = pa.concat_tables([_read_keys(name) for name in stored]) if stored else KEYED.empty_table()
        doc = got.column("doc_id").to_numpy().astype(np.int64)
        key = got.column("text_key").to_numpy().astype(np.int64)
    elif spark is not None and has_rdds(spark):
        files = [path for name in names for path in parquet_files(out, name)]
        got = slots(spark, len(files)).mapInArrow(_keyed_files(files), spark_schema(KEYED)).toArrow()
        doc = got.column("doc_id").to_numpy(zero_copy_only=False).astype(np.int64)
        key = got.column("text_key").to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        from ..core.winnowing import text_keys

        ids, keys = [], []
        for name in names:
            for group in read_row_groups(out, name, ["doc_id", "text", "status"]):
                ok = group.filter(pc.equal(group.column("status"), "ok"))
                key, length = text_keys(ok.column("text"))
                kept = length > 0
                ids.append(ok.column("doc_id").to_numpy()[kept])
                keys.append(key[kept])
        doc = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        key = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    order = np.lexsort((doc, key))
    doc, key = doc[order], key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
    n = np.diff(np.r_[starts, len(key)])
    group = np.repeat(np.arange(len(starts)), n)
    shared = (n >= 2)[group]
    first, count = doc[starts][group], n[group]
    return pa.table({"doc_id": doc[shared], "first": first[shared], "n": count[shared]}, schema=SAME)


def stored_text_keys(out: str) -> list[str] | None:
    """The parts of the text keys the extract tasks kept beside doc_stats (fingerprint.TEXT_KEYS)
    when they are every document's the stage groups: doc_stats current (made from the documents
    as they are) and no indexed documents (a check's, which have none); else None, and the texts
    are keyed again."""
    from . import table_is_current
    from .fingerprint import TEXT_KEYS

    if (table_meta(out, "doc_stats") or {}).get("text_keys") != TEXT_KEYS or table_meta(out, "indexed_documents"):
        return None
    if not table_is_current(out, "doc_stats"):
        return None
    return folder_parquet_files(storage.child(data_location(out, "doc_stats"), TEXT_KEYS))


def _read_keys(name: str) -> pa.Table:
    with storage.open_input(name) as fh:
        return pq.ParquetFile(fh).read().cast(KEYED)


def identical_groups(spark: SparkSession, out: str):
    """(doc_id, first, n): every ok document whose normalized text another document has too,
    with the smallest doc_id of that text and how many documents have it."""
    stored = stored_text_keys(out)
    if stored:
        keyed = spark.read.schema(spark_schema(KEYED)).parquet(*stored)
    else:
        keyed = (
            read_documents(spark, out)
            .filter(F.col("status") == "ok")
            .select("doc_id", "text")
            .mapInArrow(keyed_arrow, spark_schema(KEYED))
        )
    groups = keyed.groupBy("text_key").agg(F.min("doc_id").alias("first"), F.count(F.lit(1)).alias("n")).filter(F.col("n") >= 2)
    return keyed.join(groups, "text_key").select("doc_id", "first", "n")


def document_times(spark: SparkSession, out: str, doc: np.ndarray) -> list[np.ndarray]:
    """Per document of doc (in its order), its times in microseconds since 1970, one array per
    basis of the candidates stage's SOURCE_BASES (stages._pairtable) (Last-Modified, WARC-Date, Date); int64 max where a
    document has none (or an unreadable one). Read on the driver (stages._pairtable.driver_times)
    up to DRIVER_PAIRS documents, else by Spark."""
    from ._pairtable import DRIVER_PAIRS, SOURCE_BASES, driver_times

    if not len(doc):
        return [np.zeros(0, np.int64) for _ in SOURCE_BASES]
    known = sum(row_count(out, name) for name in ("documents", "indexed_documents") if table_meta(out, name) is not None)
    if known <= DRIVER_PAIRS:
        times = driver_times(spark, out)
    else:
        ids = spark.createDataFrame(pa.table({"doc_id": doc}).to_pandas())
        columns = [F.unix_micros(F.col(c).try_cast("timestamp")).alias(c) for _, c in SOURCE_BASES]
        times = (
            read_documents(spark, out)
            .join(F.broadcast(ids) if len(doc) <= broadcast_rows(spark, 8, 1_000_000) else ids, "doc_id")
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


def time_columns() -> list:
    """A document's times as document_times gives them: microseconds, int64 max where missing."""
    from ._pairtable import SOURCE_BASES

    never = F.lit(np.iinfo(np.int64).max)
    return [F.coalesce(F.unix_micros(F.col(c).try_cast("timestamp")), never).alias(c) for _, c in SOURCE_BASES]


def _near_on_driver(out: str, threshold: float) -> pa.Table:
    """(a, b) of the pairs at least `threshold` resemblant, read on the driver with pyarrow."""

    def near(part: pa.Table) -> pa.Array:  # as Spark compares: NaN above every number
        r = part.column("resemblance")
        return pc.or_kleene(pc.greater_equal(r, threshold), pc.is_nan(r))

    parts = [
        part.filter(near(part)).select(["doc_a", "doc_b"]).rename_columns(["a", "b"])
        for part in read_row_groups(out, "pairs", ["doc_a", "doc_b", "resemblance"])
    ]
    empty = pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.int64())})
    return pa.concat_tables([empty, *(p.cast(empty.schema) for p in parts)])


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    threshold = float(cfg.clusters.resemblance)

    def near():  # a DataFrame only where Spark reads the pairs (stages._lazysession)
        return (
            read_table(spark, out, "pairs")
            .filter(F.col("resemblance") >= threshold)
            .select(F.col("doc_a").alias("a"), F.col("doc_b").alias("b"))
        )

    documents = sum(row_count(out, name) for name in ("documents", "indexed_documents") if table_meta(out, name))
    same_rows: pa.Table | None = None
    if documents <= DRIVER_KEYED_DOCS:
        same_rows = identical_on_driver(out, spark)
        held = same_rows

        def same_frame():  # only where Spark joins the components
            return spark.createDataFrame(held.to_pandas(), spark_schema(SAME))
    else:
        keyed = identical_groups(spark, out).localCheckpoint()  # keyed once: the texts are read once

        def same_frame():
            return keyed

    def linked_same():
        return same_frame().filter(F.col("doc_id") != F.col("first"))

    # the pairs table small enough: its links are read on the driver, no Spark job
    pairs_on_driver = row_count(out, "pairs") <= cfg.clusters.driver_edges
    near_edges = _near_on_driver(out, threshold) if pairs_on_driver else None
    if near_edges is not None and same_rows is not None:
        edges = near_edges.num_rows + int(
            pc.sum(pc.not_equal(same_rows.column("doc_id"), same_rows.column("first"))).as_py() or 0
        )
    elif near_edges is not None:
        edges = near_edges.num_rows + linked_same().count()
    else:
        edges = near().unionByName(linked_same().select(F.col("first").alias("a"), F.col("doc_id").alias("b"))).count()
    if edges <= cfg.clusters.driver_edges:
        same_rows = same_rows if same_rows is not None else same_frame().toArrow()
        table = _on_driver(spark, out, near_edges if near_edges is not None else near().toArrow(), same_rows)
        write_arrow(table, out, "clusters", cfg, "clusters", {"cluster_resemblance": threshold})
        rounds = None
        size = table.column("cluster_size").to_numpy(zero_copy_only=False)
        sums = {
            "clusters": len(distinct(table.column("cluster_id").to_numpy(zero_copy_only=False))),
            "documents": table.num_rows,
            "largest": int(size.max()) if len(size) else 0,
        }
        twins = {
            "documents": same_rows.num_rows,
            "texts": len(distinct(same_rows.column("first").to_numpy(zero_copy_only=False))),
        }
    else:
        same = same_frame()
        links = near().unionByName(linked_same().select(F.col("first").alias("a"), F.col("doc_id").alias("b")))
        labels, rounds = spark_components(links)
        labels = labels.localCheckpoint()
        write_table(_in_spark(spark, out, labels, same), out, "clusters", cfg, "clusters", {"cluster_resemblance": threshold})
        counted = (
            read_table(spark, out, "clusters")
            .agg(
                F.countDistinct("cluster_id").alias("clusters"),
                F.count(F.lit(1)).alias("documents"),
                F.max("cluster_size").alias("largest"),
            )
            .first()
        )
        assert counted is not None  # an aggregation has one row
        sums = {"clusters": counted["clusters"], "documents": counted["documents"], "largest": counted["largest"] or 0}
        grouped = same.agg(F.count(F.lit(1)).alias("documents"), F.countDistinct("first").alias("texts")).first()
        assert grouped is not None
        twins = {"documents": grouped["documents"], "texts": grouped["texts"]}
    return {
        "cluster_resemblance": threshold,
        "clusters": int(sums["clusters"]),
        "clustered_documents": int(sums["documents"]),
        "largest": int(sums["largest"]),
        "identical_documents": int(twins["documents"]),  # documents sharing their exact text with another
        "identical_texts": int(twins["texts"]),
        "linking_edges": int(edges),
        "components": "driver" if rounds is None else "spark",
        **({} if rounds is None else {"rounds": rounds}),
    }


def _on_driver(spark: SparkSession, out: str, edges: pa.Table, same: pa.Table) -> pa.Table:
    """The clusters table from edges and identical groups collected to the driver: union–find."""
    same_doc = same.column("doc_id").to_numpy()
    same_first = same.column("first").to_numpy()
    linked = same_doc != same_first
    doc, cluster, size = components(
        np.concatenate([edges.column("a").to_numpy(), same_first[linked]]),
        np.concatenate([edges.column("b").to_numpy(), same_doc[linked]]),
    )
    identical = np.ones(len(doc), np.int64)
    if len(same_doc):
        at = np.searchsorted(doc, same_doc)  # components returns the documents sorted
        identical[at] = same.column("n").to_numpy()
    source = earliest_members(doc, cluster, document_times(spark, out, doc))
    return pa.table(
        {"doc_id": doc, "cluster_id": cluster, "cluster_size": size, "identical": identical, "source_doc": source},
        schema=schemas.CLUSTERS,
    )


def _in_spark(spark: SparkSession, out: str, labels, same):
    """The clusters table from (doc_id, cluster_id) labels: sizes, identical counts and each
    cluster's earliest member by joins and aggregations, nothing on the driver."""
    from ._pairtable import SOURCE_BASES

    never = F.lit(np.iinfo(np.int64).max)
    times = read_documents(spark, out).select("doc_id", *time_columns())
    earliest = (
        labels.join(times, "doc_id", "left")
        .groupBy("cluster_id")
        .agg(
            F.sum(F.lit(1)).cast("long").alias("cluster_size"),  # nullable, as the driver's table is
            F.min(F.struct(*(F.coalesce(F.col(c), never).alias(c) for _, c in SOURCE_BASES), F.col("doc_id"))).alias("e"),
        )
    )
    counted = same.select("doc_id", F.col("n").alias("identical"))
    return (
        labels.join(earliest, "cluster_id")
        .join(counted, "doc_id", "left")
        .select(
            "doc_id",
            "cluster_id",
            "cluster_size",
            F.coalesce("identical", F.when(F.col("identical").isNull(), F.lit(1).cast("long"))).alias("identical"),
            F.col("e.doc_id").alias("source_doc"),
        )
    )
