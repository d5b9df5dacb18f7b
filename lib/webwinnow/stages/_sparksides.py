"""The passages stage's window pass when its pairs are too many for the driver: Spark's shuffle.

Every row the grow tasks need goes through one shuffle by doc_a, sorted within its partition:
each pair's b window (its place in the page, its fingerprints and template text, not its text),
the whole text of each page b once for each grow partition that has pairs of it, the whole text
of every page that is some pair's a, and each pair's seeds with its candidate columns. The
seeds are read by Python tasks and packed as bytes (SEED_BYTES), so the JVM moves one binary
value a pair where Spark's reader, join and shuffle handled every seed of a list of structs.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import functions as F

from .. import storage
from ..outputs.tables import parquet_files
from ._frames import spark_schema
from ._sides import CANDIDATE, PAIR_REQUESTS, SEED_BYTES, GrowingPages, _b_bounds, packed_seeds
from ._windows import PAGE_B, WINDOW_LISTS, WINDOW_VALUES, WINDOWS

#: A pair of pair_seeds as this path reads it: where its b window reaches (hi -1: no seeds) and
#: its seeds as bytes.
PACKED = pa.schema([PAIR_REQUESTS.field(name) for name in ("doc_a", "doc_b", "lo", "hi", "seeds")])
#: Pairs a packing task reads at a time.
PACK_ROWS = 16_384


def packed_pairs(spark, out: str):
    """pair_seeds as PACKED rows: one Python task per Parquet file reads it with pyarrow."""
    files = parquet_files(out, "pair_seeds")

    def pack(batches) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column("id").to_pylist():
                with storage.open_input(files[i]) as fh:
                    for got in pq.ParquetFile(fh).iter_batches(batch_size=PACK_ROWS, columns=["doc_a", "doc_b", "seeds"]):
                        yield _packed(got)

    return spark.range(0, len(files), 1, max(1, len(files))).mapInArrow(pack, spark_schema(PACKED))


def _packed(batch: pa.RecordBatch) -> pa.RecordBatch:
    lists = batch.column("seeds")
    lo = np.zeros(len(lists), np.int64)
    hi = np.full(len(lists), -1, np.int64)  # a pair without seeds: no window
    first, last, has = _b_bounds(lists)
    lo[has], hi[has] = first, last
    return pa.RecordBatch.from_arrays(
        [batch.column("doc_a"), batch.column("doc_b"), pa.array(lo), pa.array(hi), packed_seeds(lists)], schema=PACKED
    )


def held_pages(batches, pages: GrowingPages):
    """The batches without their rows of pages b (side PAGE_B), which go to `pages`: each comes
    before the first of its pairs in the sorted rows, so it is there when they are grown."""
    for batch in batches:
        side = batch.column("side").to_numpy(zero_copy_only=False)
        page = side == PAGE_B
        if page.any():
            rows = pa.array(np.flatnonzero(page))
            pages.add(batch.column("doc_b").take(rows).to_numpy(), batch.column("text").take(rows))
            batch = batch.filter(pa.array(~page))
        if batch.num_rows:
            yield batch


def spark_sides(seeds, texts, windows_of, whole: bool, candidate_types, parts: int):
    """GROW_ROWS of the pairs in `seeds` (packed_pairs joined to candidate_pairs), by Spark: the
    b windows (side 1, without their text) cut by tasks that get the pages and their requests
    grouped; the whole text of every page b once for each of the `parts` grow partitions that
    has pairs of it (side PAGE_B, doc_a the least of its pairs' there: Spark's hash partitioning
    of doc_a sends it where they go, and sorts it before them); the whole text (side -1) of
    every page that is some pair's a; and each pair's seeds with its candidate columns in a row
    of their own (side 2). A pair's b window, cut on its own and shuffled with its text, was
    nine times its page's text on the docs corpus."""
    window_types = spark_schema(WINDOWS)
    seed_type = spark_schema(pa.schema([("seeds", SEED_BYTES)]))["seeds"].dataType
    lo_b, hi_b = (F.lit(0).cast("long"), F.lit(2**62).cast("long")) if whole else (F.col("lo"), F.col("hi"))
    requests = seeds.filter(F.col("hi") >= 0).select(  # a pair without seeds asks for no window
        F.col("doc_b").alias("doc_id"), "doc_a", "doc_b", F.lit(1).alias("side"), lo_b.alias("lo"), hi_b.alias("hi")
    )
    grouped = requests.groupBy("doc_id").agg(F.collect_list(F.struct("doc_a", "doc_b", "side", "lo", "hi")).alias("requests"))
    windows = grouped.join(texts, "doc_id").mapInArrow(windows_of, window_types)
    # pmod(hash(doc_a), parts): the partition repartition(parts, "doc_a") gives a row
    firsts = (
        seeds.select("doc_a", "doc_b")
        .groupBy("doc_b", F.expr(f"pmod(hash(doc_a), {int(parts)})").alias("part"))
        .agg(F.min("doc_a").alias("doc_a"))
    )
    pages_b = firsts.join(texts.withColumnRenamed("doc_id", "doc_b"), "doc_b").select(
        "doc_a",
        "doc_b",
        F.lit(PAGE_B).alias("side"),
        *(F.lit(None).cast(window_types[name].dataType).alias(name) for name in WINDOW_VALUES),
        "text",
        *(F.lit(None).cast(window_types[name].dataType).alias(name) for name in WINDOW_LISTS),
    )
    # Side a travels as its whole text, once per document: a page is in 39 pairs on average (docs
    # corpus), and its windows, cut per pair, were 28 times its text. The grow task cuts side a's
    # windows from it (with_a_windows).
    documents = texts.join(seeds.select(F.col("doc_a").alias("doc_id")), "doc_id", "left_semi").select(
        F.col("doc_id").alias("doc_a"),
        F.lit(-1).cast("long").alias("doc_b"),
        F.lit(-1).alias("side"),
        *(F.lit(None).cast(window_types[name].dataType).alias(name) for name in WINDOW_VALUES),
        "text",
        *(F.lit(None).cast(window_types[name].dataType).alias(name) for name in WINDOW_LISTS),
    )
    seed_rows = seeds.select(
        "doc_a",
        "doc_b",
        F.lit(2).alias("side"),
        *(F.lit(None).cast(window_types[name].dataType).alias(name) for name in (*WINDOW_VALUES, "text", *WINDOW_LISTS)),
        "seeds",
        *CANDIDATE,
    )
    return (
        windows.unionByName(documents)
        .unionByName(pages_b)
        .withColumn("seeds", F.lit(None).cast(seed_type))
        .withColumns({name: F.lit(None).cast(candidate_types[name].dataType) for name in CANDIDATE})
        .unionByName(seed_rows)
    )
