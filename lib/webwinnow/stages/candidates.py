"""Stage: `fingerprints` → `candidate_pairs` (documents that share fingerprints) and `pair_seeds`
(where). The passages stage grows the seeds and keeps the pairs that share content.

Boilerplate cap first: a hash in more than max_df documents is never paired (MOSS's -m), so no
hash contributes more than max_df·(max_df−1)/2 pairs and the work stays bounded whatever the
crawl's templates; such hashes are in the boilerplate report instead. Every pair of documents
that shares a fingerprint below the cap is emitted (subject to --min-shared): users rely on that
completeness.

No self-join: the fingerprints sorted by hash, each hash's run whole in one task, and a Numba
kernel pairs the rows of every run (webwinnow.analysis.pairing); then one shuffle of the seeds
by pair, as blobs (stages._exchange: the JVM moves bytes, not rows), to tasks that sort their
partition by pair and positions and count each pair's distinct hashes and list its seeds with
a kernel. A pair task holds its partition's seeds: the partitions are as many as the bound on
the seeds (from hash_freq) needs for each to stay under _exchange.PARTITION_BYTES. The
fingerprints come sorted from the
parts a current hash_freq table keeps (hash_freq.BY_HASH: its counting tasks had them sorted
already), else from a shuffle by hash that Spark sorts (a check, whose fingerprints join the
index's; a run folder of an older webwinnow). The automatic cap reuses the document
frequencies hash_freq counted when that table is current. Memory: a seeding task holds one
sorted chunk of about CHUNK_ROWS fingerprints, their seeds and a gathering of blobs.

The pair tasks write `pair_seeds` themselves (outputs.parts): its lists of seeds never become
Spark rows, which cost the JVM more than pairing them did. They write each pair's count of
shared hashes as parts too, and candidate_pairs is made from those (stages._pairtable): on the
driver when the pairs are few, else by Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..analysis.boilerplate import auto_max_df
from ..analysis.pairing import cross_seeds, first_repeats, hash_runs, kept_hash_counts, pair_runs, partition_seeds
from ..core.distinct import distinct
from ..outputs.parts import PartWriter, ensure_part
from ..outputs.tables import (
    data_location,
    drop_staged,
    finish_table,
    folder_parquet_files,
    open_parquet,
    read_arrow,
    read_row_groups,
    read_table_config,
    row_count,
    stage_table,
    table_meta,
    table_stats,
    write_arrow,
    write_table,
)
from . import StageContext, table_is_current
from ._exchange import BLOBS, exchanged, packed, partitions_for, sorted_partition, spread, unpacked
from ._exclusions import exclusion_hashes
from ._frames import RUN_KEY, arrow_batch_rows, read_table, sort_runs, sorted_chunks, spark_schema
from ._pairtable import COUNTS, DRIVER_PAIRS, ROW_BYTES, blob_candidates, driver_candidates, read_counts, spark_candidates
from ._pairtable import WRITTEN as CANDIDATES_WRITTEN
from ._session import shuffle_partitions
from ._tasks import slots

#: What the hash-run kernel emits: seeds (doc_b >= 0), and per document its count of distinct
#: hashes below the cap in this partition (doc_b = -1, the count in `hash`).
SEED_ROWS = pa.schema(
    [("doc_a", pa.int64()), ("doc_b", pa.int64()), ("hash", pa.int64()), ("pos_a", pa.int32()), ("pos_b", pa.int32())]
)
#: Bytes of a SEED_ROWS row in an Arrow batch.
SEED_ROWS_BYTES = 32
#: A check's boilerplate hashes up to this many are broadcast to the fingerprints they leave out.
BROADCAST_HASHES = 2_000_000
#: Up to this many rows of hash_freq, the automatic cap's seed bounds are summed on the driver
#: (three columns of numbers, a row group at a time): no Spark job.
DRIVER_HASHES = 20_000_000
#: What the pair-run kernel emits: one row per pair with its distinct shared hashes and seeds.
PAIR_ROWS = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("doc_b", pa.int64()),
        pa.field("shared", pa.int64(), nullable=False),
        pa.field("seeds", schemas.PAIR_SEEDS.field("seeds").type, nullable=False),
    ]
)
#: What the pair tasks hand the JVM: each pair and its count (its seeds they write themselves).
PAIR_COUNTS = pa.schema([f for f in PAIR_ROWS if f.name != "seeds"])
#: What a pair task hands the JVM: how many pairs it found (their counts and seeds it wrote).
TASK_PAIRS = pa.schema([("pairs", pa.int64())])
#: pair_seeds as the pair tasks write it: a pair always has seeds (as Spark wrote it before).
SEEDS_WRITTEN = pa.schema([PAIR_ROWS.field(name) for name in schemas.PAIR_SEEDS.names])


def fingerprints_without(spark: SparkSession, out: str, excluded) -> DataFrame:
    """The fingerprints table less the excluded (template) hashes."""
    fp = read_table(spark, out, "fingerprints")
    if excluded is not None and len(excluded):
        drop = spark.createDataFrame([(int(h),) for h in excluded], "hash long")
        fp = fp.join(F.broadcast(drop), "hash", "left_anti")
    return fp


def seed_arrow(batches, max_df: int, max_repeats: int = 0):
    """SEED_ROWS for (hash, doc_id, pos)-sorted fingerprint batches of one hash partition; a
    hash's first max_repeats occurrences in a document seed (0: all)."""
    for chunk in sorted_chunks(batches, ["hash"]):
        hashes = chunk.column("hash").to_numpy()
        docs = chunk.column("doc_id").to_numpy()
        pos = chunk.column("pos").to_numpy()
        runs = hash_runs(hashes, docs)
        seeding = first_repeats(hashes, docs, max_repeats)
        if not seeding.all():
            hashes, docs, pos = hashes[seeding], docs[seeding], pos[seeding]
        for s in partition_seeds(hashes, docs, pos, max_df, None if len(hashes) < len(seeding) else runs):
            yield pa.RecordBatch.from_arrays(
                [pa.array(s.doc_a), pa.array(s.doc_b), pa.array(s.hash), pa.array(s.pos_a), pa.array(s.pos_b)], schema=SEED_ROWS
            )
        doc, count = kept_hash_counts(hashes, docs, max_df, None if len(hashes) < len(seeding) else runs)
        n = len(doc)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(doc),
                pa.array(np.full(n, -1, np.int64)),
                pa.array(count),
                pa.array(np.zeros(n, np.int32)),
                pa.array(np.zeros(n, np.int32)),
            ],
            schema=SEED_ROWS,
        )


def cross_seed_arrow(batches, with_self: bool, max_repeats: int = 0):
    """SEED_ROWS for (hash, new, doc_id, pos)-sorted batches of a check's fingerprints, the
    boilerplate removed: indexed × new seeds (with_self: new × new too), and per document its
    distinct hashes."""
    for chunk in sorted_chunks(batches, ["hash"]):
        hashes = chunk.column("hash").to_numpy()
        docs = chunk.column("doc_id").to_numpy()
        pos = chunk.column("pos").to_numpy()
        new = chunk.column("new").to_numpy(zero_copy_only=False)
        seeding = first_repeats(hashes, docs, max_repeats)
        if not seeding.all():
            hashes, docs, pos, new = hashes[seeding], docs[seeding], pos[seeding], new[seeding]
        for s in cross_seeds(hashes, docs, pos, new, with_self):
            yield pa.RecordBatch.from_arrays(
                [pa.array(s.doc_a), pa.array(s.doc_b), pa.array(s.hash), pa.array(s.pos_a), pa.array(s.pos_b)], schema=SEED_ROWS
            )
        doc, count = kept_hash_counts(hashes, docs, 2**62)
        n = len(doc)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(doc),
                pa.array(np.full(n, -1, np.int64)),
                pa.array(count),
                pa.array(np.zeros(n, np.int32)),
                pa.array(np.zeros(n, np.int32)),
            ],
            schema=SEED_ROWS,
        )


def pair_spread(batch: pa.RecordBatch) -> np.ndarray:
    """Where a seed row goes: by its pair (a count row, doc_b = -1: anywhere by its document)."""
    return spread(batch.column("doc_a").to_numpy(), batch.column("doc_b").to_numpy())


def pair_partitions(spark: SparkSession, out: str, bounds: dict[int, int] | None, max_df: int, documents: int, hash_parts: int):
    """Partitions of the blob shuffle of the seeds to the pair tasks, each of which holds its
    partition: as many as a bound on the rows allows (the seeds' bound from hash_freq, and a
    count row per document and hash partition, at most one per fingerprint); None, for Spark's
    sorted shuffle, with no bound (a check, whose index's fingerprints join in; a max_df set by
    hand over a hash_freq too large to sum on the driver) or more rows than blobs hold."""
    if bounds is None:
        return None
    fingerprints = int((table_stats(out, "doc_stats") or {}).get("fingerprints") or row_count(out, "fingerprints"))
    least = shuffle_partitions(spark)
    rows = sum(n for d, n in bounds.items() if d <= max_df) + min(fingerprints, documents * (hash_parts or least))
    return partitions_for(SEED_ROWS_BYTES, rows, least)


def is_check(out: str) -> bool:
    """Whether out is a check's folder (its lookup stage wrote the indexed documents' tables)."""
    return table_meta(out, "indexed_fingerprints") is not None


#: The order a pair task puts its seeds in: a pair's seeds together, in order of position.
SEED_ORDER = ("doc_a", "doc_b", "pos_a", "pos_b")


def in_seed_order(batches) -> list[pa.RecordBatch]:
    """A pair task's partition of seeds, which came in any order (a blob shuffle), in SEED_ORDER."""
    from ..core.seedorder import seed_order

    return sorted_partition(batches, SEED_ORDER, seed_order)


def pair_arrow(batches, min_shared: int, sorted_on: str = ""):
    """PAIR_ROWS for seed batches of one pair partition in SEED_ORDER or, with `sorted_on`, sorted
    by sort_runs on that key; a document's count rows (doc_b = -1, the count in `hash`) pass as
    rows with doc_b = -1, their count in `shared` and no seeds."""
    keys, order = ([sorted_on], SEED_ORDER) if sorted_on else (["doc_a", "doc_b"], None)
    for chunk in sorted_chunks(batches, keys, order=order):
        counted = pc.less(chunk.column("doc_b"), 0)
        if pc.any(counted).as_py():
            counts = chunk.filter(counted)
            yield pa.RecordBatch.from_arrays(
                [
                    counts.column("doc_a").combine_chunks(),
                    counts.column("doc_b").combine_chunks(),
                    counts.column("hash").combine_chunks(),
                    pa.array([[]] * counts.num_rows, PAIR_ROWS.field("seeds").type),
                ],
                schema=PAIR_ROWS,
            )
            chunk = chunk.filter(pc.invert(counted))
            if not chunk.num_rows:
                continue
        runs = pair_runs(
            chunk.column("doc_a").to_numpy(), chunk.column("doc_b").to_numpy(), chunk.column("hash").to_numpy(), min_shared
        )
        rows = pa.array(runs.rows)
        seeds = pa.StructArray.from_arrays(
            [chunk.column("pos_a").combine_chunks().take(rows), chunk.column("pos_b").combine_chunks().take(rows)],
            ["pos_a", "pos_b"],
        )
        lists = pa.ListArray.from_arrays(pa.array(runs.starts.astype(np.int32)), seeds, type=PAIR_ROWS.field("seeds").type)
        yield pa.RecordBatch.from_arrays(
            [pa.array(runs.doc_a), pa.array(runs.doc_b), pa.array(runs.shared), lists], schema=PAIR_ROWS
        )


def sorted_by_hash(out: str) -> list[str]:
    """The parts of the fingerprints sorted by hash that a current hash_freq table keeps beside
    itself (hash_freq.BY_HASH), in order; none when it keeps none (made by an older webwinnow) or
    is not current (the fingerprints were made again since)."""
    from .hash_freq import BY_HASH

    if not table_is_current(out, "hash_freq") or (table_meta(out, "hash_freq") or {}).get("by_hash") != BY_HASH:
        return []
    return folder_parquet_files(storage.child(data_location(out, "hash_freq"), BY_HASH))


def seeds_from_parts(spark: SparkSession, parts: list[str], excluded, seeds_of, schema, dataframe: bool = False):
    """seeds_of's rows (of Spark `schema`) from the sorted parts, one task each: a part holds every
    row of its hashes, as a partition of the fingerprints shuffled by hash does; the excluded
    hashes are left out as it is read. An RDD job's rows (stages._tasks) unless `dataframe` (the
    rows go on through Spark's own shuffle) or the session has no RDDs."""
    drop = pa.array(distinct(np.asarray(excluded, np.int64))) if excluded is not None and len(excluded) else None

    def read(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                yield from seeds_of(_part_batches(parts[i], drop))

    return slots(spark, len(parts), dataframe=dataframe).mapInArrow(read, schema)  # one part a task


def _part_batches(name: str, drop) -> Iterator[pa.RecordBatch]:
    with storage.open_input(name) as fh:
        for batch in open_parquet(name, fh).iter_batches(columns=["hash", "doc_id", "pos"]):
            yield batch if drop is None else batch.filter(pc.invert(pc.is_in(batch.column("hash"), drop)))


def seed_bounds(spark: SparkSession, out: str, fp: Callable[[], DataFrame], excluded, max_repeats: int = 0) -> dict[int, int]:
    """Per document frequency, a bound on the seed rows its hashes make in the self-join: the sum
    of occurrences·(occurrences − 1)/2 (every two occurrences, within a document too); from
    hash_freq when it is current, else counted from the fingerprints (fp() gives them)."""
    if table_is_current(out, "hash_freq") and row_count(out, "hash_freq") <= DRIVER_HASHES:
        return _seed_bounds_on_driver(out, excluded, max_repeats)
    if table_is_current(out, "hash_freq"):
        freq = read_table(spark, out, "hash_freq").select("hash", "docs", "occurrences")
        if excluded is not None and len(excluded):
            drop = spark.createDataFrame([(int(h),) for h in excluded], "hash long")
            freq = freq.join(F.broadcast(drop), "hash", "left_anti")
    else:
        freq = fp().groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"), F.count(F.lit(1)).alias("occurrences"))
    seeding = F.least(F.col("occurrences"), F.col("docs") * (max_repeats or 2**31))  # first_repeats' cap
    pairs = seeding * (seeding - 1) / 2
    return {
        r["docs"]: int(r["seeds"])
        for r in freq.filter(F.col("docs") >= 2).groupBy("docs").agg(F.sum(pairs.cast("long")).alias("seeds")).collect()
    }


def _seed_bounds_on_driver(out: str, excluded, max_repeats: int) -> dict[int, int]:
    """seed_bounds from hash_freq read with pyarrow a row group at a time, in Spark's arithmetic
    (the halving in double precision, as Spark's `/` does it)."""
    cap = max_repeats or 2**31
    sums: dict[int, int] = {}
    for group in read_row_groups(out, "hash_freq", ["hash", "docs", "occurrences"]):
        docs = group.column("docs").to_numpy(zero_copy_only=False).astype(np.int64)
        keep = docs >= 2
        if excluded is not None and len(excluded):
            keep &= ~np.isin(group.column("hash").to_numpy(zero_copy_only=False), excluded)
        docs = docs[keep]
        occurrences = pc.fill_null(group.column("occurrences"), 2**62).to_numpy().astype(np.int64)[keep]  # least() skips a null
        seeding = np.minimum(occurrences, docs * cap)
        seeds = ((seeding * (seeding - 1)).astype(np.float64) / 2).astype(np.int64)
        levels, at = np.unique(docs, return_inverse=True)
        summed = np.zeros(len(levels), np.int64)
        np.add.at(summed, at, seeds)
        for level, total in zip(levels.tolist(), summed.tolist(), strict=True):
            sums[level] = sums.get(level, 0) + total
    return sums


def df_counts(spark: SparkSession, out: str, fp: Callable[[], DataFrame], excluded) -> list[tuple[int, int]]:
    """(document frequency, hashes) over the fingerprints less the excluded hashes: from hash_freq's
    rank–frequency table when it is current (no pass over the fingerprints), else counted from
    the fingerprints fp() gives."""
    if table_is_current(out, "hash_freq") and table_is_current(out, "rank_freq"):
        runs = read_arrow(out, "rank_freq", ["docs", "hashes"])
        counts: dict[int, int] = {}
        for docs, hashes in zip(runs.column("docs").to_pylist(), runs.column("hashes").to_pylist(), strict=True):
            counts[docs] = counts.get(docs, 0) + hashes
        if excluded is not None and len(excluded):
            drop = spark.createDataFrame([(int(h),) for h in excluded], "hash long")
            for r in read_table(spark, out, "hash_freq").join(F.broadcast(drop), "hash").groupBy("docs").count().collect():
                counts[r["docs"]] -= r["count"]
        return sorted((d, n) for d, n in counts.items() if n)
    df = fp().groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"))
    return [(r["docs"], r["n"]) for r in df.groupBy("docs").agg(F.count(F.lit(1)).alias("n")).collect()]


def ok_documents(spark: SparkSession, out: str) -> int:
    stats = table_stats(out, "doc_stats")
    if stats and "documents" in stats:
        return int(stats["documents"])
    return read_table(spark, out, "documents").filter(F.col("status") == "ok").count()


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    excluded = (
        exclusion_hashes(list(ctx.exclude), cfg.winnow.k, cfg.extract, cfg.winnow.unit, cfg.winnow.lexer) if ctx.exclude else None
    )
    pcfg = cfg.pairing

    documents = ok_documents(spark, out)
    counts = None
    check = is_check(out)
    if check:
        # a check: the lookup stage decided the cap over the index and the new input together
        looked = read_table_config(out, "indexed_fingerprints")
        max_df, with_self = int(looked["max_df"]), bool(looked["self_pairs"])
        indexed = read_table(spark, out, "indexed_fingerprints")
        if excluded is not None and len(excluded):
            drop = spark.createDataFrame([(int(h),) for h in excluded], "hash long")
            indexed = indexed.join(F.broadcast(drop), "hash", "left_anti")
        boiler = read_table(spark, out, "index_boilerplate").select("hash")
        if row_count(out, "index_boilerplate") <= BROADCAST_HASHES:
            boiler = F.broadcast(boiler)
        joined = (
            fingerprints_without(spark, out, excluded)
            .withColumn("new", F.lit(True))
            .unionByName(indexed.withColumn("new", F.lit(False)))
            .join(boiler, "hash", "left_anti")
        )

        def fp() -> DataFrame:
            return joined

        order: tuple[str, ...] = ("hash", "new", "doc_id", "pos")
        bounds = None  # no bound on a check's seeds: the index's fingerprints join in

        def seeds_of(batches):
            yield from cross_seed_arrow(batches, with_self, pcfg.max_repeats)
    else:

        def fp() -> DataFrame:
            # a DataFrame only where Spark reads the fingerprints: making one costs a local run
            # the Spark SQL session it otherwise never makes (stages._lazysession)
            return fingerprints_without(spark, out, excluded)

        bounds = None
        if pcfg.max_df:
            max_df = pcfg.max_df
            if table_is_current(out, "hash_freq") and row_count(out, "hash_freq") <= DRIVER_HASHES:
                bounds = _seed_bounds_on_driver(out, excluded, pcfg.max_repeats)
        else:
            counts = df_counts(spark, out, fp, excluded)
            bounds = seed_bounds(spark, out, fp, excluded, pcfg.max_repeats)
            max_df = auto_max_df(documents, counts, pcfg.pair_budget, bounds)
        order = ("hash", "doc_id", "pos")

        def seeds_of(batches):
            yield from seed_arrow(batches, max_df, pcfg.max_repeats)

    seeds_folder = stage_table(out, "pair_seeds")
    parts = [] if check else sorted_by_hash(out)
    pair_parts = pair_partitions(spark, out, bounds, max_df, documents, len(parts))

    counts_folder = stage_table(out, COUNTS)

    def pairs_of(batches):
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context else 0
        seeds = PartWriter(seeds_folder, task, SEEDS_WRITTEN)
        counted = PartWriter(counts_folder, task, PAIR_COUNTS)
        try:
            seeds_in = (
                pair_arrow(in_seed_order(unpacked(batches)), pcfg.min_shared)
                if pair_parts
                else pair_arrow(batches, pcfg.min_shared, RUN_KEY)
            )
            pairs = 0
            for rows in seeds_in:
                found = rows.filter(pc.greater_equal(rows.column("doc_b"), 0))
                seeds.write(pa.RecordBatch.from_arrays([found.column(n) for n in SEEDS_WRITTEN.names], schema=SEEDS_WRITTEN))
                counted.write(pa.RecordBatch.from_arrays([rows.column(n) for n in PAIR_COUNTS.names], schema=PAIR_COUNTS))
                pairs += found.num_rows
            seeds.close()
            counted.close()
        except BaseException:
            seeds.abort()
            counted.abort()
            raise
        yield pa.RecordBatch.from_arrays([pa.array([pairs], pa.int64())], schema=TASK_PAIRS)

    with arrow_batch_rows(spark):
        # The seeds and each document's count of hashes below the cap (doc_b = -1) take one
        # shuffle, as blobs, to the pair tasks, which pass the counts on: the seed rows are never
        # Spark rows. Spark's sort of the fingerprints by hash (no hash_freq parts) settles nearly
        # every comparison on the first key's prefix: hashes rarely tie.
        def emit(batches):
            yield from (packed(seeds_of(batches), pair_spread, pair_parts) if pair_parts else seeds_of(batches))

        emitted_schema = spark_schema(BLOBS if pair_parts else SEED_ROWS)
        if parts:
            # hash_freq kept the fingerprints sorted by hash: no shuffle of them again
            emitted = seeds_from_parts(spark, parts, excluded, emit, emitted_schema, not pair_parts)
        else:
            emitted = fp().repartition("hash").sortWithinPartitions(*order).mapInArrow(emit, emitted_schema)
        if pair_parts:
            by_pair = exchanged(emitted, pair_parts)
        else:  # more seeds than blob partitions hold: Spark's sort, which spills
            by_pair = sort_runs(emitted.repartition("doc_a", "doc_b"), ["doc_a", "doc_b"])
        pairs_folder = ""
        try:
            tasks = by_pair.mapInArrow(pairs_of, spark_schema(TASK_PAIRS)).collect()
            ensure_part(counts_folder, PAIR_COUNTS)  # no pair task ran: no counts
            # the driver reads every document's URL and times: a check's index's too
            known = documents + (row_count(out, "indexed_documents") if table_meta(out, "indexed_documents") else 0)
            found = sum(r["pairs"] for r in tasks)
            blob_parts = partitions_for(ROW_BYTES, found + known, shuffle_partitions(spark))
            if found <= DRIVER_PAIRS and known <= DRIVER_PAIRS:
                pairs = driver_candidates(spark, out, read_counts(counts_folder))
            elif blob_parts:
                # the pages' counts and times meet their pairs in two exchanges of blobs, whose
                # tasks write the table
                pairs = None
                pairs_folder = stage_table(out, "candidate_pairs")
                blob_candidates(spark, out, counts_folder, pairs_folder, blob_parts)
            else:
                grouped = spark.read.schema(spark_schema(PAIR_COUNTS)).parquet(counts_folder)
                pairs = spark_candidates(spark, out, grouped)
            meta = {
                "max_df": max_df,
                "max_df_auto": not pcfg.max_df,
                "excluded_hashes": int(len(excluded) if excluded is not None else 0),
                **({"check": True, "self_pairs": with_self} if check else {}),
            }
            if pairs is None:
                ensure_part(pairs_folder, CANDIDATES_WRITTEN)
                finish_table(out, "candidate_pairs", cfg, "candidates", meta)
            elif isinstance(pairs, pa.Table):
                write_arrow(pairs, out, "candidate_pairs", cfg, "candidates", meta)
            else:
                write_table(pairs, out, "candidate_pairs", cfg, "candidates", meta)
            ensure_part(seeds_folder, SEEDS_WRITTEN)  # no pair task ran: an empty table
            finish_table(out, "pair_seeds", cfg, "candidates", meta)
        except BaseException:
            drop_staged(out, "pair_seeds")
            if pairs_folder:
                drop_staged(out, "candidate_pairs")
            raise
        finally:
            drop_staged(out, COUNTS)
    unexcluded = counts if excluded is None or not len(excluded) else None
    boilerplate = row_count(out, "index_boilerplate") if check else boilerplate_count(spark, out, max_df, unexcluded)
    return {
        **meta,
        "documents": documents,
        "candidate_pairs": row_count(out, "candidate_pairs"),
        "boilerplate_hashes": boilerplate,
    }


def boilerplate_count(spark: SparkSession, out: str, max_df: int, counts: list[tuple[int, int]] | None) -> int:
    """How many hashes of the fingerprints (exclusions or not) are in more than max_df documents,
    given their (document frequency, hashes) counts when known."""
    if counts is None and table_is_current(out, "rank_freq"):
        runs = read_arrow(out, "rank_freq", ["docs", "hashes"])
        counts = list(zip(runs.column("docs").to_pylist(), runs.column("hashes").to_pylist(), strict=True))
    if counts is not None:
        return sum(n for d, n in counts if d > max_df)
    return boilerplate_hashes(spark, out, max_df).count()


#: Up to this many rows of hash_freq (two columns read: 16 bytes a row), the boilerplate hashes
#: are read on the driver with pyarrow rather than collected from a Spark job.
DRIVER_FREQ_ROWS = 20_000_000


def boilerplate_array(spark: SparkSession, out: str, max_df: int) -> np.ndarray:
    """boilerplate_hashes' hashes, sorted: read on the driver where hash_freq is current and
    small enough (a check's folder: its index_boilerplate, as small as the boilerplate itself)."""
    if is_check(out):
        hashes = read_arrow(out, "index_boilerplate", ["hash"]).column("hash")
    elif table_is_current(out, "hash_freq") and row_count(out, "hash_freq") <= DRIVER_FREQ_ROWS:
        hashes = read_arrow(out, "hash_freq", ["hash"], filters=[("docs", ">", max_df)]).column("hash")
    else:
        return np.sort(np.array([r["hash"] for r in boilerplate_hashes(spark, out, max_df).collect()], dtype=np.int64))
    return np.sort(hashes.to_numpy().astype(np.int64))


def boilerplate_hashes(spark: SparkSession, out: str, max_df: int) -> DataFrame:
    """Hashes in more than max_df documents: in a check's folder, its index_boilerplate (counted
    over the index and the new input); from hash_freq when it is current (made from these
    fingerprints), else counted from the fingerprints."""
    if is_check(out):
        return read_table(spark, out, "index_boilerplate").select("hash")
    if table_is_current(out, "hash_freq"):
        freq = read_table(spark, out, "hash_freq").select("hash", "docs")
    else:
        freq = read_table(spark, out, "fingerprints").groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"))
    return freq.filter(F.col("docs") > max_df).select("hash")
