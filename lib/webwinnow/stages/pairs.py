"""Stage: `fingerprints` → `pairs` (documents that share fingerprints) and `pair_seeds` (where).

Boilerplate cap first: a hash in more than max_df documents is never paired (MOSS's -m), so no
hash contributes more than max_df·(max_df−1)/2 pairs and the self-join stays bounded whatever
the crawl's templates; such hashes are in the boilerplate report instead. Every pair of
documents that shares a fingerprint below the cap is emitted (subject to --min-shared): users
rely on that completeness.

Memory: the self-join shuffles the capped (doc_id, hash, pos) rows by hash (24 bytes a row before
compression) and emits at most Σ df·(df−1)/2 ≤ pair_budget rows; Spark spills both to disk, so a
task needs only its share of one hash partition (spark.sql.shuffle.partitions sets how many).
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.boilerplate import auto_max_df
from ..config import RunConfig
from ..tables import table_is_current, write_table


def fingerprints_without(spark: SparkSession, out: str, excluded) -> DataFrame:
    """The fingerprints table less the excluded (template) hashes."""
    fp = spark.read.parquet(f"{out}/fingerprints")
    if excluded is not None and len(excluded):
        drop = spark.createDataFrame([(int(h),) for h in excluded], "hash long")
        fp = fp.join(F.broadcast(drop), "hash", "left_anti")
    return fp


def run(spark: SparkSession, cfg: RunConfig, out: str, excluded=None) -> dict:
    pcfg = cfg.pairs
    fp = fingerprints_without(spark, out, excluded).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        df = fp.groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"))
        documents = spark.read.parquet(f"{out}/documents").filter(F.col("status") == "ok").count()
        if pcfg.max_df:
            max_df = pcfg.max_df
        else:
            counts = [(r["docs"], r["n"]) for r in df.groupBy("docs").agg(F.count(F.lit(1)).alias("n")).collect()]
            max_df = auto_max_df(documents, counts, pcfg.pair_budget)
        kept = fp.join(df.filter(F.col("docs") <= max_df).select("hash"), "hash", "left_semi")
        fp_counts = kept.groupBy("doc_id").agg(F.countDistinct("hash").alias("fp"))
        a, b = kept.alias("a"), kept.alias("b")
        seeds = (
            a.join(b, F.col("a.hash") == F.col("b.hash"))
            .where(F.col("a.doc_id") < F.col("b.doc_id"))
            .select(
                F.col("a.doc_id").alias("doc_a"),
                F.col("b.doc_id").alias("doc_b"),
                F.col("a.hash").alias("hash"),
                F.col("a.pos").alias("pos_a"),
                F.col("b.pos").alias("pos_b"),
            )
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        shared = (
            seeds.groupBy("doc_a", "doc_b")
            .agg(F.countDistinct("hash").alias("shared"))
            .filter(F.col("shared") >= pcfg.min_shared)
        )
        urls = spark.read.parquet(f"{out}/documents").select("doc_id", "url")
        pairs = (
            shared.join(fp_counts.select(F.col("doc_id").alias("doc_a"), F.col("fp").alias("fp_a")), "doc_a")
            .join(fp_counts.select(F.col("doc_id").alias("doc_b"), F.col("fp").alias("fp_b")), "doc_b")
            .join(urls.select(F.col("doc_id").alias("doc_a"), F.col("url").alias("url_a")), "doc_a", "left")
            .join(urls.select(F.col("doc_id").alias("doc_b"), F.col("url").alias("url_b")), "doc_b", "left")
            .withColumn("resemblance", F.col("shared") / (F.col("fp_a") + F.col("fp_b") - F.col("shared")))
            .withColumn("containment_a", F.col("shared") / F.col("fp_a"))
            .withColumn("containment_b", F.col("shared") / F.col("fp_b"))
            .select(*schemas.PAIRS.names)
        )
        meta = {"max_df": max_df, "max_df_auto": not pcfg.max_df, "excluded_hashes": int(len(excluded) if excluded is not None else 0)}
        write_table(pairs, out, "pairs", cfg, "pairs", meta)
        grouped = (
            seeds.join(spark.read.parquet(f"{out}/pairs").select("doc_a", "doc_b"), ["doc_a", "doc_b"], "left_semi")
            .groupBy("doc_a", "doc_b")
            .agg(F.sort_array(F.collect_list(F.struct("pos_a", "pos_b"))).alias("seeds"))
        )
        write_table(grouped, out, "pair_seeds", cfg, "pairs", meta)
        seeds.unpersist()
    finally:
        fp.unpersist()
    n_pairs = spark.read.parquet(f"{out}/pairs").count()
    result = {**meta, "documents": documents, "pairs": n_pairs, "boilerplate_hashes": boilerplate_hashes(spark, out, max_df).count()}
    return result


def boilerplate_hashes(spark: SparkSession, out: str, max_df: int) -> DataFrame:
    """Hashes in more than max_df documents: from hash_freq when it is current (made from these
    fingerprints), else counted from the fingerprints."""
    if table_is_current(out, "hash_freq"):
        freq = spark.read.parquet(f"{out}/hash_freq").select("hash", "docs")
    else:
        freq = spark.read.parquet(f"{out}/fingerprints").groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"))
    return freq.filter(F.col("docs") > max_df).select("hash")
