"""Stage: `fingerprints` → `hash_freq` (per hash: documents, occurrences, hosts, a snippet) and
`rank_freq` (the rank–frequency curve) with a power-law fit in `report/stats.json`.

Snippets are cut only for hashes seen in two or more documents: nobody looks at the long tail of
hashes seen once (82% of them on web pages, by the paper), and joining every hash to its
document's text would move the whole corpus through a shuffle.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.powerlaw import fit_power_law, frequency_shares, rank_frequency
from ..config import RunConfig
from ..tables import write_table
from ._frames import spark_schema


def doc_hosts(spark: SparkSession, out: str):
    """(doc_id, host) of ok documents; host lower-cased, null when the URL has none."""
    return (
        spark.read.parquet(f"{out}/documents")
        .filter(F.col("status") == "ok")
        .select("doc_id", F.lower(F.expr("try_parse_url(url, 'HOST')")).alias("host"))
    )


def run(spark: SparkSession, cfg: RunConfig, out: str) -> dict:
    fp = spark.read.parquet(f"{out}/fingerprints")
    # One row per (hash, document) first: the distinct counts become plain counts, and only
    # hosts need a distinct count, over far fewer rows than the fingerprints.
    per_doc = (
        fp.groupBy("hash", "doc_id")
        .agg(F.count(F.lit(1)).alias("n"), F.min("pos").alias("pos"))
        .join(doc_hosts(spark, out), "doc_id", "left")
    )
    counted = (
        per_doc.groupBy("hash")
        .agg(
            F.count(F.lit(1)).alias("docs"),
            F.sum("n").alias("occurrences"),
            F.countDistinct("host").alias("hosts"),
            F.min(F.struct("doc_id", "pos")).alias("first"),
        )
        .select("hash", "docs", "occurrences", "hosts", F.col("first.doc_id").alias("doc_id"), F.col("first.pos").alias("pos"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        texts = spark.read.parquet(f"{out}/documents").filter(F.col("status") == "ok").select("doc_id", "text")
        snippet_chars = 3 * cfg.winnow.k  # a k-gram spans k kept characters, more in the original
        snippets = (
            counted.filter(F.col("docs") >= 2)
            .join(texts, "doc_id")
            .select("hash", F.expr(f"substring(text, pos + 1, {snippet_chars})").alias("snippet"))
        )
        table = counted.join(snippets, "hash", "left").select(*schemas.HASH_FREQ.names)
        write_table(table, out, "hash_freq", cfg, "hash_freq")
        fof = [(r["docs"], r["hashes"]) for r in counted.groupBy("docs").agg(F.count(F.lit(1)).alias("hashes")).collect()]
    finally:
        counted.unpersist()
    runs = rank_frequency(fof)
    fit = fit_power_law(runs)
    shares = frequency_shares(fof)
    rank_df = spark.createDataFrame(runs, schema=spark_schema(schemas.RANK_FREQ))
    stats = {"hashes": sum(n for _, n in fof), "fit": fit, "shares": shares}
    write_table(rank_df.coalesce(1), out, "rank_freq", cfg, "hash_freq", stats)
    return stats
