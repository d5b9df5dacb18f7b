"""Spark-side helpers the stages share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

#: Rows a kernel stage gets per Arrow batch: fingerprint-sized rows (tens of bytes) in batches
#: of this many cost one kernel call each, not one per 2,000 rows (the setting for text rows).
KERNEL_BATCH_ROWS = 262_144
#: Rows gathered before a sorted chunk is cut and handed to a kernel.
CHUNK_ROWS = 1 << 20
#: The column sort_runs sorts on when a run is keyed by several columns: a 64-bit hash of them.
RUN_KEY = "_run"

#: Given a table's key columns as arrays, the permutation that sorts the rows on them (sort_table).
Ranking = Callable[..., np.ndarray]


def url_host(column):
    """The host of a URL column, lower-cased, by webwinnow.crawl.hosts.host_of (null: none)."""
    from pyspark.sql import functions as F

    from ..crawl.hosts import host_of

    return F.udf(host_of, "string", useArrow=True)(column)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark StructType of one of webwinnow.schemas' Arrow schemas."""
    return from_arrow_schema(schema)


#: Bytes of one Arrow batch between the JVM and Python, whatever its rows: a batch of blobs
#: (stages._exchange) is a few rows of many megabytes, and Java's Arrow holds at most 2 GiB of
#: binary values in one batch.
BATCH_BYTES = 256 << 20


@contextmanager
def arrow_batch_rows(spark, rows: int = KERNEL_BATCH_ROWS):
    """Arrow batches of `rows` rows, and at most BATCH_BYTES, for the queries run inside (runtime
    SQL settings)."""
    settings = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(rows),
        "spark.sql.execution.arrow.maxBytesPerBatch": str(BATCH_BYTES),
    }
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def sort_runs(df, run: Sequence[str]):
    """df with each partition sorted so that the rows of equal `run` columns are contiguous, for
    sorted_chunks(batches, run_key(df, run), order=...) to put each chunk in its full order.

    Spark sorts on one 64-bit key, which it radix-sorts on the key's prefix alone: the run's
    column when it is one long, else a hash of the run's columns (RUN_KEY; runs whose hashes
    collide come together, and the chunk's own sort orders them apart). A sort on several
    columns compares row against row in generated code: on the docs corpus that was 40% of the
    JVM's CPU in the candidates stage's pair tasks, where numpy orders a chunk for a fraction."""
    from pyspark.sql import functions as F

    keys = run_key(df, run)
    if keys[0] == RUN_KEY:
        df = df.withColumn(RUN_KEY, F.xxhash64(*run))
    return df.sortWithinPartitions(*keys)


def run_key(df, run: Sequence[str]) -> list[str]:
    """The column sort_runs sorts df on for runs of `run`."""
    from pyspark.sql.types import LongType

    if len(run) == 1 and isinstance(df.schema[run[0]].dataType, LongType):
        return [run[0]]
    return [RUN_KEY]


def sorted_chunks(
    batches: Iterable[pa.RecordBatch], keys: list[str], rows: int = CHUNK_ROWS, order: Sequence[str] | None = None
) -> Iterator[pa.Table]:
    """The rows of batches sorted on `keys`, regrouped into tables of about `rows` rows that never
    split a run of equal keys (a run longer than `rows` is one table), so a kernel sees whole
    groups while memory stays bounded by the chunk, not the partition. With `order`, each table
    is sorted on those columns (batches from sort_runs, sorted on its key only)."""
    for chunk in _chunks(batches, keys, rows):
        yield chunk if order is None else sort_table(chunk, order)


def sort_table(table: pa.Table, order: Sequence[str], ranked: Ranking | None = None) -> pa.Table:
    """The table's rows sorted on the columns of `order`, first column first, stably.

    Arrow's sort compares the later keys only where the earlier ones tie: three times faster
    than numpy's lexsort, which sorts the whole column once for every key (a pair task's seeds
    on four keys, 3 M rows: 0.7 against 1.9 CPU-s). Keys with nulls take lexsort, as before.
    `ranked`, given the key columns as arrays, returns the same permutation a faster way for
    the rows it knows (core.seedorder for a pair task's seeds)."""
    if any(table.column(name).null_count for name in order):
        rank = np.lexsort([table.column(name).to_numpy() for name in reversed(order)])
    elif ranked is not None:
        rank = ranked(*[table.column(name).to_numpy() for name in order])
    else:
        rank = pc.sort_indices(table, sort_keys=[(name, "ascending") for name in order]).to_numpy().astype(np.int64)
    if (np.diff(rank) > 0).all():
        return table  # already in order (one run, say)
    return table.take(pa.array(rank))


def _chunks(batches: Iterable[pa.RecordBatch], keys: list[str], rows: int) -> Iterator[pa.Table]:
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        held += batch.num_rows
        if held < rows:
            continue
        table = pa.Table.from_batches(pending)
        cut = _last_run_start(table, keys)
        if cut == 0:
            continue  # one run so far: keep gathering
        yield table.slice(0, cut)
        rest = table.slice(cut)
        pending, held = rest.to_batches(), rest.num_rows
    if held:
        yield pa.Table.from_batches(pending)


def _last_run_start(table: pa.Table, keys: list[str]) -> int:
    n = table.num_rows
    last = np.zeros(n, dtype=bool)
    for key in keys:
        col = table.column(key).to_numpy()
        last |= col != col[-1]
    hits = np.flatnonzero(last)
    return int(hits[-1]) + 1 if len(hits) else 0


def read_table(spark, out: str, table: str):
    """A table as a DataFrame, read with its known schema: Spark skips the job it otherwise runs
    per read to infer the schema from Parquet footers (about 0.1–1 s each, dozens per run)."""
    from .. import schemas
    from ..outputs.tables import data_location

    return spark.read.schema(spark_schema(schemas.TABLE_SCHEMAS[table])).parquet(data_location(out, table))


def read_documents(spark, out: str, table: str = "documents"):
    """documents (or doc_stats), and in a check's folder also the indexed documents (their stats)
    the new ones are compared with: what pairs name on either side."""
    from ..outputs.tables import table_meta

    frame = read_table(spark, out, table)
    if table_meta(out, f"indexed_{table}") is not None:
        frame = frame.unionByName(read_table(spark, out, f"indexed_{table}"))
    return frame
