"""Spark jobs on a fingerprint index (webwinnow.index.layout): write a segment from a run folder's
tables, compact the segments, and read the rows of given keys.

Writing: each table is shuffled once by bucket and sorted within each partition by (bucket,
key); a task writes one file per bucket it holds (pyarrow, small row groups) and returns the
directory rows of what it wrote, which the driver saves beside. No existing file is touched: a
segment is new files, named by the segment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..core.distinct import distinct
from ..index import layout
from ..index.layout import Manifest, Settings
from ..index.sortedfiles import DIRECTORY, BucketWriter, bucket_of, plan_reads, read_directory, read_matching
from ._frames import read_table, spark_schema
from ._session import cache_level, default_parallelism, is_connect
from ._shared import Held, plan_bytes

#: The documents as the index keeps them: every DOCUMENTS column of an ok document, with its stats.
INDEX_DOCUMENTS = pa.schema([*(f for f in schemas.DOCUMENTS), *(f for f in schemas.DOC_STATS if f.name != "doc_id")])
HASH_DF = pa.schema([("hash", pa.int64()), ("docs", pa.int64())])
#: The index's tables (index.layout.KEYS), not a run's (schemas.TABLE_SCHEMAS).
INDEX_SCHEMAS = {"fingerprints": schemas.FINGERPRINTS, "hash_df": HASH_DF, "documents": INDEX_DOCUMENTS}
#: Keys a lookup takes to the driver and broadcasts (8 bytes each); more are joined instead.
BROADCAST_KEYS = 20_000_000


def _bucket_column(key: str, bits: int):
    if bits == 0:
        return F.lit(0)
    return F.shiftrightunsigned(F.col(key), (64 if key == "hash" else 63) - bits).cast("int")


def write_bucketed(spark: SparkSession, frame: DataFrame, idx: str, table: str, bits: int, segment: str) -> pa.Table:
    """frame (INDEX_SCHEMAS[table] columns) written as this segment's bucket files; returns their
    directory rows."""
    key = layout.KEYS[table]
    schema = INDEX_SCHEMAS[table]
    sort = [key, *(["doc_id", "pos"] if table == "fingerprints" else [])]
    parts = max(1, min(1 << bits, 4 * default_parallelism(spark)))
    text = "text" if table == "documents" else None

    def write(batches):
        writer = BucketWriter(table, schema, key, idx, lambda b: layout.bucket_file(table, b, segment), text_column=text)
        for batch in batches:
            rows = pa.Table.from_batches([batch]).select(schema.names).cast(schema)
            writer.write(rows, bucket_of(rows.column(key).to_numpy(), bits, 64 if key == "hash" else 63))
        yield from writer.finish().to_batches()

    written = (
        frame.select(*schema.names)
        .withColumn("_bucket", _bucket_column(key, bits))
        .repartition(parts, "_bucket")
        .sortWithinPartitions("_bucket", *sort)
        .drop("_bucket")
        .mapInArrow(write, spark_schema(DIRECTORY))
    )
    return pa.Table.from_pylist([r.asDict() for r in written.collect()], schema=DIRECTORY)


def save_directory(idx: str, segment: str, parts: list[pa.Table]) -> None:
    import pyarrow.parquet as pq

    directory = pa.concat_tables(parts).sort_by([("table", "ascending"), ("file", "ascending"), ("row_group", "ascending")])
    fs, path = storage.locate(layout.directory_file(idx, segment))
    if storage.is_local(idx):
        fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    pq.write_table(directory, path, filesystem=fs, compression="zstd")


def run_tables(spark: SparkSession, run: str) -> tuple[DataFrame, DataFrame, DataFrame]:
    """(fingerprints, this segment's hash_df, documents with stats) of a run folder."""
    fp = read_table(spark, run, "fingerprints")
    docs = read_table(spark, run, "documents").filter(F.col("status") == "ok").join(read_table(spark, run, "doc_stats"), "doc_id")
    df = fp.groupBy("hash").agg(F.countDistinct("doc_id").alias("docs"))
    return fp, df, docs


def write_segment(
    spark: SparkSession,
    idx: str,
    run: str,
    settings: Settings,
    before: Manifest | None,
    segment: str,
    source: str,
    bits: dict[str, int] | None = None,
) -> Manifest:
    """The run folder's documents as a new segment of the index (a new index when before is
    None); returns the manifest naming it, not yet written (the caller commits it)."""
    fp, df, docs = run_tables(spark, run)
    df = df.persist(cache_level(spark))
    try:
        fingerprints = fp.count()
        hashes = df.count()
        documents = docs.count()
        if before is None:
            text_bytes = docs.agg(F.sum(F.length("text")).alias("n")).collect()[0]["n"] or 0
            fp_bits = layout.choose_bits(fingerprints, layout.BUCKET_ROWS)
            bits = bits or {
                "fingerprints": fp_bits,
                "hash_df": fp_bits,
                "documents": layout.choose_bits(int(text_bytes), layout.BUCKET_TEXT_BYTES),
            }
        else:
            bits = before.bits
        parts = [
            write_bucketed(spark, fp, idx, "fingerprints", bits["fingerprints"], segment),
            write_bucketed(spark, df, idx, "hash_df", bits["hash_df"], segment),
            write_bucketed(spark, docs, idx, "documents", bits["documents"], segment),
        ]
        save_directory(idx, segment, parts)
        moves = histogram_moves(spark, idx, before, df)
    finally:
        df.unpersist()
    seg = layout.new_segment(segment, documents, fingerprints, hashes, source)
    if before is None:
        return Manifest(settings=settings, bits=bits, segments=(seg,), df_histogram=layout.merged_histogram((), moves))
    return Manifest(
        settings=settings,
        bits=bits,
        segments=(*before.segments, seg),
        df_histogram=layout.merged_histogram(before.df_histogram, moves),
    )


def histogram_moves(spark: SparkSession, idx: str, before: Manifest | None, new_df: DataFrame) -> list[tuple[int, int, int]]:
    """(df before, df after, hashes) for the new segment's hashes: what the append does to the
    DF histogram. Reads the index's hash_df (the smallest of its tables), never its documents."""
    if before is None or not before.segments:
        moves = new_df.groupBy("docs").count().collect()
        return [(0, r["docs"], r["count"]) for r in moves]
    old = index_frame(spark, idx, before, "hash_df").groupBy("hash").agg(F.sum("docs").alias("old"))
    joined = new_df.join(old, "hash", "left").fillna(0, subset=["old"])
    rows = joined.groupBy("old", (F.col("old") + F.col("docs")).alias("new")).count().collect()
    return [(r["old"], r["new"], r["count"]) for r in rows]


def segment_files(idx: str, manifest: Manifest, table: str) -> list[str]:
    directory = read_directory([layout.directory_file(idx, s) for s in manifest.segment_ids])
    chosen = directory.filter(pa.compute.equal(directory.column("table"), table))
    return sorted({storage.child(idx, name) for name in chosen.column("file").to_pylist()})


def index_frame(spark: SparkSession, idx: str, manifest: Manifest, table: str) -> DataFrame:
    """A whole table of the index as a DataFrame (for the jobs that read most of it anyway)."""
    files = segment_files(idx, manifest, table)
    schema = spark_schema(INDEX_SCHEMAS[table])
    if not files:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*files)


def lookup(
    spark: SparkSession,
    idx: str,
    manifest: Manifest,
    table: str,
    keys: np.ndarray,
    columns: list[str] | None = None,
    reads: dict | None = None,
) -> DataFrame:
    """The rows of the index's `table` whose key is one of `keys` (sorted, distinct): only the row
    groups whose key range holds one of them are read. reads: gets what is read, per table
    (row groups and their uncompressed bytes, of how many)."""
    from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType

    key = layout.KEYS[table]
    schema = INDEX_SCHEMAS[table]
    columns = columns or schema.names
    out_schema = pa.schema([schema.field(c) for c in columns])
    directory = read_directory([layout.directory_file(idx, s) for s in manifest.segment_ids])
    directory = directory.filter(pa.compute.equal(directory.column("table"), table))
    plan = plan_reads(directory, keys)
    if reads is not None:  # what the lookup reads of the table, against all of it
        chosen = {(name, g) for name, groups in plan for g in groups}
        hit = [
            (n, g) in chosen
            for n, g in zip(directory.column("file").to_pylist(), directory.column("row_group").to_pylist(), strict=True)
        ]
        size = directory.column("bytes").to_numpy()
        reads[table] = {
            "keys": int(len(keys)),
            "row_groups": int(sum(hit)),
            "row_groups_total": directory.num_rows,
            "bytes": int(size[np.array(hit, bool)].sum()) if hit else 0,
            "bytes_total": int(size.sum()),
        }
    if not plan:
        return spark.createDataFrame([], spark_schema(out_schema))
    # under Spark Connect the keys travel in the plan: lookup_keys keeps them within what it carries
    shared: Any = Held(keys) if is_connect(spark) else spark.sparkContext.broadcast(keys)

    def read(batches):
        for batch in batches:
            for name, groups in zip(batch.column("file").to_pylist(), batch.column("groups").to_pylist(), strict=True):
                found = read_matching(storage.child(idx, name), groups, shared.value, key, columns)
                yield from found.cast(out_schema).to_batches()

    tasks = spark.createDataFrame(
        plan, StructType([StructField("file", StringType()), StructField("groups", ArrayType(IntegerType()))])
    )
    parts = max(1, min(len(plan), 4 * default_parallelism(spark)))
    return tasks.repartition(parts).mapInArrow(read, spark_schema(out_schema))


def lookup_keys(
    spark: SparkSession,
    idx: str,
    manifest: Manifest,
    table: str,
    keys: DataFrame,
    columns: list[str] | None = None,
    reads: dict | None = None,
) -> DataFrame:
    """lookup() for keys given as a one-column DataFrame: broadcast when they are few, else a join
    with the whole table (a query as large as the index reads most of it anyway)."""
    name = keys.columns[0]
    count = keys.count()
    # under Spark Connect the keys travel in the plan (stages._shared), which the server caps
    if count <= (plan_bytes(spark) // 8 if is_connect(spark) else BROADCAST_KEYS):
        values = distinct(np.array([r[0] for r in keys.collect()], dtype=np.int64))
        return lookup(spark, idx, manifest, table, values, columns, reads)
    key = layout.KEYS[table]
    frame = index_frame(spark, idx, manifest, table)
    if columns:
        frame = frame.select(*columns)
    return frame.join(keys.withColumnRenamed(name, key).distinct(), key, "left_semi")


def compact(spark: SparkSession, idx: str, manifest: Manifest, segment: str) -> Manifest:
    """Every table's files merged into one file per bucket (hash_df counts summed): a new segment
    replacing all the others. Returns its manifest; the caller commits it, then removes the old files."""
    directory = read_directory([layout.directory_file(idx, s) for s in manifest.segment_ids])
    jobs = sorted(
        {(t, b) for t, b in zip(directory.column("table").to_pylist(), directory.column("bucket").to_pylist(), strict=True)}
    )
    files: dict[tuple[str, int], list[str]] = {}
    for t, b, name in zip(
        directory.column("table").to_pylist(),
        directory.column("bucket").to_pylist(),
        directory.column("file").to_pylist(),
        strict=True,
    ):
        files.setdefault((t, b), [])
        if name not in files[(t, b)]:
            files[(t, b)].append(name)

    def merge(batches):
        import pyarrow.parquet as pq

        for batch in batches:
            for table, bucket in zip(batch.column("table").to_pylist(), batch.column("bucket").to_pylist(), strict=True):
                parts = []
                for name in files[(table, bucket)]:
                    fs, path = storage.locate(storage.child(idx, name))
                    parts.append(pq.read_table(path, filesystem=fs, schema=INDEX_SCHEMAS[table]))
                rows = pa.concat_tables(parts)
                if table == "hash_df":
                    rows = rows.group_by("hash").aggregate([("docs", "sum")]).rename_columns(["hash", "docs"])
                sort = [layout.KEYS[table], *(["doc_id", "pos"] if table == "fingerprints" else [])]
                rows = rows.sort_by([(c, "ascending") for c in sort]).select(INDEX_SCHEMAS[table].names)
                writer = BucketWriter(
                    table,
                    INDEX_SCHEMAS[table],
                    layout.KEYS[table],
                    idx,
                    lambda b, t=table: layout.bucket_file(t, b, segment),
                    text_column="text" if table == "documents" else None,
                )
                writer.write(rows.cast(INDEX_SCHEMAS[table]), np.full(rows.num_rows, bucket, np.int32))
                yield from writer.finish().to_batches()

    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    tasks = spark.createDataFrame(jobs, StructType([StructField("table", StringType()), StructField("bucket", IntegerType())]))
    parts = max(1, min(len(jobs), 4 * default_parallelism(spark)))
    written = tasks.repartition(parts).mapInArrow(merge, spark_schema(DIRECTORY)).collect()
    save_directory(idx, segment, [pa.Table.from_pylist([r.asDict() for r in written], schema=DIRECTORY)])
    seg = layout.new_segment(
        segment, manifest.documents, manifest.fingerprints, manifest.hashes, f"compaction of {len(manifest.segments)} segments"
    )
    return Manifest(settings=manifest.settings, bits=manifest.bits, segments=(seg,), df_histogram=manifest.df_histogram)
