"""Jobs of Python tasks over Arrow batches, as RDD jobs where the session has RDDs.

Most of a local run's Spark jobs only schedule Python tasks: n tasks that each read their files
and write their parts, and blob shuffles between them (stages._exchange). Run as Spark SQL
(`spark.range(n).mapInArrow(f)`), each job goes through the analyzer, the optimizer and code
generation, and a JVM's first such job costs it 4.3-5.0 CPU-seconds (the engine's classes
loaded and compiled), the next ones 0.5-0.8; the same tasks as an RDD job cost the JVM 1.1,
then 0.3-0.5 (docs/performance.md). `TaskRows` is that RDD job with the few DataFrame methods
the stages call on such jobs (mapInArrow, collect, toArrow), so a stage's code is the same on
both; `slots` and `task_rows` give one where the session has RDDs, and Spark's own DataFrame
under Spark Connect (which has none) or where the rows go on through Spark's operators.

The tasks' Arrow batches travel pickled: the JVM moves bytes and converts no row.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from ._session import is_connect

#: A partition's blobs are handed on in batches of at most this many bytes (binary offsets are
#: 32-bit), as Spark's Arrow batches of blob rows are (stages._frames.BATCH_BYTES).
BLOB_BATCH_BYTES = 256 << 20


class TaskRows:
    """The Arrow batches a job of Python tasks yields, partition by partition: an RDD of
    pa.RecordBatch of `schema`."""

    def __init__(self, rdd, schema: pa.Schema) -> None:
        self.rdd, self.schema = rdd, schema

    def mapInArrow(self, fn: Callable[[Iterator[pa.RecordBatch]], Iterable[pa.RecordBatch]], schema) -> TaskRows:
        """fn over each partition's batches, as DataFrame.mapInArrow (schema: Spark's or Arrow's)."""
        arrow = to_arrow_schema(schema) if isinstance(schema, StructType) else schema

        def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in fn(iter(batches)):
                if batch.num_rows:
                    yield batch

        return TaskRows(self.rdd.mapPartitions(run, preservesPartitioning=True), arrow)

    def toArrow(self) -> pa.Table:
        batches = [b if b.schema.equals(self.schema) else _conformed(b, self.schema) for b in self.rdd.collect()]
        return pa.Table.from_batches(batches, schema=self.schema)

    def collect(self) -> list[dict[str, Any]]:
        """The rows, as dicts (a Row's r["name"] reads the same)."""
        return self.toArrow().to_pylist()

    def exchanged(self, parts: int) -> TaskRows:
        """Rows of blobs (stages._exchange.BLOBS) moved to the partition their `part` says, one
        of `parts`: through files in a local run (exchange_folder), else each blob one record of
        Spark's shuffle."""
        folder = exchange_folder(self.rdd.context)
        if folder is not None:
            return self._exchanged_in_files(parts, folder)

        def keyed(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[int, bytes]]:
            for batch in batches:
                yield from zip(batch.column("part").to_pylist(), batch.column("blob").to_pylist(), strict=True)

        schema = self.schema

        def rows(pairs: Iterable[tuple[int, bytes]]) -> Iterator[pa.RecordBatch]:
            parts_: list[int] = []
            blobs: list[bytes] = []
            size = 0
            for part, blob in pairs:
                if blobs and size + len(blob) > BLOB_BATCH_BYTES:
                    yield _blob_batch(parts_, blobs, schema)
                    parts_, blobs, size = [], [], 0
                parts_.append(part)
                blobs.append(blob)
                size += len(blob)
            if blobs:
                yield _blob_batch(parts_, blobs, schema)

        moved = self.rdd.mapPartitions(keyed).partitionBy(parts, _identity).mapPartitions(rows, preservesPartitioning=True)
        return TaskRows(moved, schema)

    def _exchanged_in_files(self, parts: int, folder: str) -> TaskRows:
        """exchanged() through files: a job whose tasks each write their blobs into one file of
        `folder` and tell the driver where each lies; then, lazily, one task per partition
        that maps those files and hands on its partition's blobs without a copy."""
        schema = self.schema

        def write(task: int, batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[str, np.ndarray]]:
            os.makedirs(os.path.join(_local_dir(), folder), exist_ok=True)
            name = os.path.join(_local_dir(), folder, f"{task:05d}.blobs")
            at: list[np.ndarray] = []  # rows of (part, offset, length)
            with open(name + ".tmp", "wb") as fh:
                for batch in batches:
                    if not batch.num_rows:
                        continue
                    blobs = batch.column("blob")
                    bounds = np.frombuffer(blobs.buffers()[1], np.int32)[blobs.offset : blobs.offset + len(blobs) + 1].astype(
                        np.int64
                    )
                    start = fh.tell()
                    fh.write(memoryview(blobs.buffers()[2])[bounds[0] : bounds[-1]])
                    at.append(
                        np.stack(
                            [batch.column("part").to_numpy().astype(np.int64), start + bounds[:-1] - bounds[0], np.diff(bounds)],
                            1,
                        )
                    )
            os.replace(name + ".tmp", name)  # a task run again writes the same file whole
            yield name, np.concatenate(at) if at else np.zeros((0, 3), np.int64)

        written = self.rdd.mapPartitionsWithIndex(write).collect()
        _MADE.update(os.path.dirname(name) for name, _ in written)
        files = np.concatenate(
            [np.full(len(rows), i, np.int64) for i, (_, rows) in enumerate(written)] or [np.zeros(0, np.int64)]
        )
        rows = np.concatenate([rows for _, rows in written] or [np.zeros((0, 3), np.int64)])
        order = np.lexsort((rows[:, 1], files, rows[:, 0]))  # by partition, then as written
        files, rows = files[order], rows[order]
        bounds = np.searchsorted(rows[:, 0], np.arange(parts + 1))
        # each reading task gets only where its own blobs are: (partition, files, offsets, lengths)
        found = []
        for part in range(parts):
            at = slice(bounds[part], bounds[part + 1])
            used = sorted(set(files[at].tolist()))
            found.append((part, [written[i][0] for i in used], np.searchsorted(used, files[at]), rows[at, 1], rows[at, 2]))

        def read(got: Iterable[tuple]) -> Iterator[pa.RecordBatch]:
            for part, names, file, offset, length in got:
                mapped = [pa.memory_map(name) for name in names]
                for i, at, n in zip(file.tolist(), offset.tolist(), length.tolist(), strict=True):
                    mapped[i].seek(at)
                    ends = pa.py_buffer(np.array([0, n], np.int32))
                    blob = pa.Array.from_buffers(schema.field(1).type, 1, [None, ends, mapped[i].read_buffer(n)])
                    yield pa.RecordBatch.from_arrays([pa.array([part], schema.field(0).type), blob], schema=schema)

        moved = self.rdd.context.parallelize(found, max(1, parts)).mapPartitions(read, preservesPartitioning=True)
        return TaskRows(moved, schema)


#: The folders of the exchanges made through files since the last drop_exchanges().
_MADE: set[str] = set()


def drop_exchanges() -> None:
    """Delete the files of the exchanges made so far (the runner calls it as each stage ends:
    no exchange outlives the stage whose jobs read it). Spark deletes its folder when it stops;
    a long local run over a large crawl would otherwise keep every exchange's bytes there until
    then."""
    import shutil

    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def exchange_folder(sc) -> str | None:
    """The name of a new exchange's folder, made by its first task inside the folder Spark gives
    its Python workers (SPARK_LOCAL_DIRS: the block manager's, which Spark deletes when it stops,
    at the JVM's exit too, as it does its own shuffle files), in a local run (master local or
    local[...]): every task sees the same folder. None elsewhere: the executors of a cluster share
    no folder with each other.

    Spark's own shuffle of the blobs cost the JVM 0.6-0.8 CPU-s on the docs corpus for 100 MB
    (the fingerprints by hash, the seeds by pair): each record serialized, written, read and
    handed to Python again by the JVM's one core, the workers waiting on it."""
    master = getattr(sc, "master", "") or ""
    if master != "local" and not master.startswith("local["):
        return None
    return f"webwinnow-exchange-{uuid.uuid4().hex}"


def _local_dir() -> str:
    """The first of the folders Spark gives this Python worker for its files."""
    given = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0]
    if not given:
        raise RuntimeError("Spark gave this Python worker no SPARK_LOCAL_DIRS: set spark.local.dir")
    return given


def _identity(part: int) -> int:
    return part


def _blob_batch(parts: list[int], blobs: list[bytes], schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(parts, schema.field(0).type), pa.array(blobs, schema.field(1).type)], schema=schema
    )


def _conformed(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch of a task's rows with the job's schema (the same columns; nullability and types
    as the schema says, as Spark's mapInArrow takes them)."""
    return pa.RecordBatch.from_arrays([batch.column(f.name).cast(f.type) for f in schema], schema=schema)


def has_rdds(spark) -> bool:
    """Whether the session runs RDD jobs (a classic session, not Spark Connect)."""
    return not is_connect(spark)


def slots(spark, n: int, *, dataframe: bool = False):
    """n tasks, task i given a batch of one row {"id": i}: the jobs' starting point, as
    `spark.range(0, n, 1, max(1, n))` is (no task for n = 0). A DataFrame under
    Spark Connect, or when `dataframe` (its rows go on through Spark's own operators)."""
    if dataframe or not has_rdds(spark):
        return spark.range(0, n, 1, max(1, n))
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])

    def ids(got: Iterable[int]) -> list[pa.RecordBatch]:
        return [pa.RecordBatch.from_arrays([pa.array(list(got), pa.int64())], schema=schema)]

    sc = spark.sparkContext
    rdd = sc.parallelize(range(n), n).mapPartitions(ids, preservesPartitioning=True) if n else sc.emptyRDD()
    return TaskRows(rdd, schema)


def task_rows(spark, table: pa.Table):
    """One task per row of `table`, task i given a batch of row i; None where the session has no
    RDDs (the caller builds Spark's rows instead)."""
    if not has_rdds(spark):
        return None
    batches = [table.slice(i, 1).combine_chunks().to_batches()[0] for i in range(table.num_rows)]
    return TaskRows(spark.sparkContext.parallelize(batches, max(1, len(batches))), table.schema)
