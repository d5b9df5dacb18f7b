"""candidate_pairs from the pair tasks' counts: on the driver with pyarrow when they are few,
else by Spark's joins.

The pair tasks write each pair's count of shared hashes, and each document's count of hashes
below the cap (doc_b = -1), as parts of a staged folder (PAIR_COUNTS). A pair's row adds both
documents' counts, URLs and times, its resemblance and containments, and which side is the
likely source (source_columns). Spark's version of this (two joins, an aggregation, a Parquet
write of every pair) cost the JVM more than the pairing did on the docs corpus; on the driver
it is a few sorted lookups. The documents' times are Spark's try_cast to timestamp (whose
rules for malformed WARC-Dates the tables have always followed): converted on the driver where
every one is an ISO 8601 second in UTC (stages._doctimes), else cast by Spark in one job over
the documents' metadata columns.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..outputs.tables import folder_parquet_files, open_parquet
from ._frames import read_documents

#: What says which of two pages is the original, strongest first: when the content last changed
#: (HTTP Last-Modified), when the crawler fetched it (WARC-Date), the server's clock then (Date).
SOURCE_BASES = (("last_modified", "last_modified"), ("warc_date", "fetch_time"), ("http_date", "http_date"))
#: The staged folder of the pair tasks' counts.
COUNTS = "pair_counts"
#: candidate_pairs as Spark wrote it: its counts and source are never null.
WRITTEN = pa.schema([f.with_nullable(f.name not in ("shared", "fp_a", "fp_b", "source")) for f in schemas.CANDIDATE_PAIRS])
#: Up to this many pairs (and as many documents), candidate_pairs is built on the driver.
DRIVER_PAIRS = 2_000_000


def source_columns() -> dict:
    """`source` and `source_basis` from the pair's <column>_a/_b timestamps: the first basis on
    which both pages have a time and the times differ decides (the earlier page is the source);
    equal times on every basis both have are a "tie"; no basis both have, "unknown"."""
    source = F.when(F.lit(False), F.lit(None))
    basis = F.when(F.lit(False), F.lit(None))
    for name, column in SOURCE_BASES:
        a, b = F.col(f"{column}_a"), F.col(f"{column}_b")
        decided = a.isNotNull() & b.isNotNull() & (a != b)
        source = source.when(decided, F.when(a < b, F.lit("a")).otherwise(F.lit("b")))
        basis = basis.when(decided, F.lit(name))
    for name, column in SOURCE_BASES:
        both = F.col(f"{column}_a").isNotNull() & F.col(f"{column}_b").isNotNull()
        source = source.when(both, F.lit("tie"))
        basis = basis.when(both, F.lit(name))
    return {"source": source.otherwise(F.lit("unknown")), "source_basis": basis.otherwise(F.lit(None).cast("string"))}


def _times(spark: SparkSession, out: str, micros: bool = False) -> DataFrame:
    """The documents' ids, URLs and times (Spark's try_cast: a malformed date is no time), as
    timestamps or microseconds."""
    # crawls hold malformed WARC-Dates ("2008-10-294T05:21:46-0700" among the real files): no time
    cast = [F.col(c).try_cast("timestamp") for _, c in SOURCE_BASES]
    times = [(F.unix_micros(t) if micros else t).alias(c) for t, (_, c) in zip(cast, SOURCE_BASES, strict=True)]
    return read_documents(spark, out).select("doc_id", "url", *times)


def driver_times(spark: SparkSession, out: str) -> pa.Table:
    """_times(micros=True)'s rows, read on the driver with pyarrow: converted there when every
    time is an ISO 8601 second in UTC (stages._doctimes), else cast by Spark as before."""
    from ..outputs.tables import read_arrow, table_meta
    from ._doctimes import time_columns

    columns = tuple(c for _, c in SOURCE_BASES)
    names = ["documents", *(["indexed_documents"] if table_meta(out, "indexed_documents") is not None else [])]
    table = pa.concat_tables([read_arrow(out, name, ["doc_id", "url", *columns]) for name in names])
    micros = time_columns(table, columns)
    if micros is None:
        return _times(spark, out, micros=True).toArrow()
    return pa.table({"doc_id": table.column("doc_id"), "url": table.column("url"), **micros})


def spark_candidates(spark: SparkSession, out: str, grouped: DataFrame) -> DataFrame:
    """CANDIDATE_PAIRS by Spark, from the counts (doc_a, doc_b, shared)."""
    fp_counts = (
        grouped.filter(F.col("doc_b") < 0)
        .groupBy(F.col("doc_a").alias("doc_id"))
        .agg(F.coalesce(F.sum("shared"), F.lit(0)).alias("fp"))
    )
    info = fp_counts.join(_times(spark, out), "doc_id", "left")

    def side(x: str):
        return info.select(
            F.col("doc_id").alias(f"doc_{x}"),
            F.col("fp").alias(f"fp_{x}"),
            F.col("url").alias(f"url_{x}"),
            *(F.col(c).alias(f"{c}_{x}") for _, c in SOURCE_BASES),
        )

    return (
        grouped.filter(F.col("doc_b") >= 0)
        .select("doc_a", "doc_b", "shared")
        .join(side("a"), "doc_a")
        .join(side("b"), "doc_b")
        .withColumn("resemblance", F.col("shared") / (F.col("fp_a") + F.col("fp_b") - F.col("shared")))
        .withColumn("containment_a", F.col("shared") / F.col("fp_a"))
        .withColumn("containment_b", F.col("shared") / F.col("fp_b"))
        .withColumns(source_columns())
        .select(*schemas.CANDIDATE_PAIRS.names)
    )


def read_counts(folder: str) -> pa.Table:
    """The pair tasks' counts (doc_a, doc_b, shared), read with pyarrow."""
    tables = []
    for name in folder_parquet_files(folder):
        with storage.open_input(name) as fh:
            tables.append(open_parquet(name, fh).read(columns=["doc_a", "doc_b", "shared"]))
    fields = [("doc_a", pa.int64()), ("doc_b", pa.int64()), ("shared", pa.int64())]
    return pa.concat_tables(tables).cast(pa.schema(fields)) if tables else pa.schema(fields).empty_table()


def driver_candidates(spark: SparkSession, out: str, counts: pa.Table) -> pa.Table:
    """CANDIDATE_PAIRS from the counts, what spark_candidates gives, built on the driver."""
    doc_a, doc_b, shared = (counts.column(c).to_numpy() for c in ("doc_a", "doc_b", "shared"))
    own = doc_b < 0
    # a document's hashes below the cap: its count rows summed (one per seeding task that saw it)
    ids, at = np.unique(doc_a[own], return_inverse=True)
    fp = np.zeros(len(ids), np.int64)
    np.add.at(fp, at, shared[own])
    pair_a, pair_b, pair_shared = doc_a[~own], doc_b[~own], shared[~own]
    # an inner join on both sides: a pair whose document has no count row is no candidate
    where_a, where_b = (_lookup(ids, d) for d in (pair_a, pair_b))
    keep = (where_a >= 0) & (where_b >= 0)
    order = np.lexsort((pair_b[keep], pair_a[keep]))
    pair_a, pair_b, pair_shared = pair_a[keep][order], pair_b[keep][order], pair_shared[keep][order]
    fp_a, fp_b = fp[where_a[keep][order]], fp[where_b[keep][order]]

    info = driver_times(spark, out)
    info_ids = info.column("doc_id").to_numpy()
    sort = np.argsort(info_ids, kind="stable")
    info_ids = info_ids[sort]
    urls: dict[str, pa.Array] = {}
    sides: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for x, docs in (("a", pair_a), ("b", pair_b)):
        at_info = _lookup(info_ids, docs)
        rows = pa.array(
            np.where(at_info >= 0, sort[np.maximum(at_info, 0)], 0) if len(info_ids) else np.zeros(len(docs), np.int64)
        )
        missing = pa.array(at_info < 0)
        urls[x] = (
            pc.if_else(missing, pa.scalar(None, pa.string()), info.column("url").take(rows))
            if len(info_ids)
            else pa.nulls(len(docs), pa.string())
        )
        sides[x] = {}
        for _, c in SOURCE_BASES:
            values = info.column(c).combine_chunks().cast(pa.int64()) if len(info_ids) else pa.nulls(0, pa.int64())
            taken = values.take(rows) if len(info_ids) else pa.nulls(len(docs), pa.int64())
            known = pc.and_(pc.is_valid(taken), pc.invert(missing)).to_numpy(zero_copy_only=False)
            sides[x][c] = (taken.fill_null(0).to_numpy(), known)
    return _candidate_rows(pair_a, pair_b, pair_shared, fp_a, fp_b, urls, sides)


def _candidate_rows(pair_a, pair_b, pair_shared, fp_a, fp_b, urls: dict, sides: dict) -> pa.Table:
    """WRITTEN rows of pairs with both pages' counts, URLs and (time, known) per basis."""
    source, basis = _sources(sides, len(pair_a))
    total = (fp_a + fp_b - pair_shared).astype(np.float64)
    columns = {
        "doc_a": pa.array(pair_a),
        "doc_b": pa.array(pair_b),
        "shared": pa.array(pair_shared),
        "fp_a": pa.array(fp_a),
        "fp_b": pa.array(fp_b),
        "url_a": urls["a"],
        "url_b": urls["b"],
        "resemblance": pa.array(pair_shared / total),
        "containment_a": pa.array(pair_shared / fp_a.astype(np.float64)),
        "containment_b": pa.array(pair_shared / fp_b.astype(np.float64)),
        "source": pa.array(source, pa.string()),
        "source_basis": pa.array(basis, pa.string()),
    }
    return pa.table({f.name: columns[f.name] for f in WRITTEN}).cast(WRITTEN)


#: A page as the blob path's tasks know it: its id, URL and times (microseconds, null: none).
INFO = pa.schema([("doc_id", pa.int64()), ("url", pa.string()), *((c, pa.int64()) for _, c in SOURCE_BASES)])
#: A page with its count of hashes below the cap, sent on to the pages b.
SIDE = pa.schema([INFO.field("doc_id"), pa.field("fp", pa.int64()), *list(INFO)[1:]])
#: A pair with its page a's count, URL and times, on its way to its page b.
A_SIDE = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("doc_b", pa.int64()),
        ("shared", pa.int64()),
        ("fp_a", pa.int64()),
        ("url_a", pa.string()),
        *((f"{c}_a", pa.int64()) for _, c in SOURCE_BASES),
    ]
)
#: Bytes a pair or page row takes in the blob path's exchanges, about (a URL of 60 bytes).
ROW_BYTES = 112
#: What a task of the blob path's second exchange hands the JVM: the rows it wrote.
WROTE = pa.schema([("rows", pa.int64())])


def blob_candidates(spark: SparkSession, out: str, counts: str, folder: str, parts: int) -> int:
    """candidate_pairs written as parts of `folder` from the counts (COUNTS folder `counts`),
    for more pairs than the driver holds: two exchanges of blobs (stages._exchange), no Spark
    join. The first brings each page's count rows and times to the pairs it is page a of, the
    second brings the pages' counts and times to the pairs they are page b of, whose task
    writes them: what driver_candidates gives, in `parts` parts. Returns the rows written."""
    from pyspark import TaskContext

    from ..outputs.parts import PartWriter
    from ._exchange import BLOBS, exchanged, packed, spread, unpacked
    from ._frames import spark_schema

    files = folder_parquet_files(counts)

    def read_counts_of(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                with storage.open_input(files[i]) as fh:
                    rows = open_parquet(files[i], fh).iter_batches(columns=["doc_a", "doc_b", "shared"])
                    yield from packed((_counts_batch(b) for b in rows), lambda b: spread(b.column("doc_a").to_numpy()), parts)

    def pack_info(batches):
        yield from packed((_info_batch(b) for b in batches), lambda b: spread(b.column("doc_id").to_numpy()), parts)

    counted = spark.range(0, len(files), 1, max(1, len(files))).mapInArrow(read_counts_of, spark_schema(BLOBS))
    info = _times(spark, out, micros=True).mapInArrow(pack_info, spark_schema(BLOBS))

    def a_sides(batches):
        by_schema = _by_schema(unpacked(batches))
        side, pairs = _a_side(by_schema.get("counts"), by_schema.get("info"))
        yield from packed([side], lambda b: spread(b.column("doc_id").to_numpy()), parts)
        yield from packed([pairs], lambda b: spread(b.column("doc_b").to_numpy()), parts)

    def written(batches):
        by_schema = _by_schema(unpacked(batches))
        rows = _b_side(by_schema.get("side"), by_schema.get("a_side"))
        context = TaskContext.get()
        writer = PartWriter(folder, context.partitionId() if context else 0, WRITTEN)
        try:
            for batch in rows.to_batches():
                writer.write(batch)
            writer.close()
        except BaseException:
            writer.abort()
            raise
        yield pa.RecordBatch.from_arrays([pa.array([rows.num_rows], pa.int64())], schema=WROTE)

    first = exchanged(counted.unionByName(info), parts).mapInArrow(a_sides, spark_schema(BLOBS))
    return sum(r["rows"] for r in exchanged(first, parts).mapInArrow(written, spark_schema(WROTE)).collect())


_COUNT_ROWS = pa.schema([("doc_a", pa.int64()), ("doc_b", pa.int64()), ("shared", pa.int64())])
_KINDS = {"counts": _COUNT_ROWS, "info": INFO, "side": SIDE, "a_side": A_SIDE}


def _counts_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(n).cast(pa.int64()) for n in _COUNT_ROWS.names], schema=_COUNT_ROWS)


def _info_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(f.name).cast(f.type) for f in INFO], schema=INFO)


def _by_schema(batches) -> dict[str, pa.Table]:
    """A receiving task's rows, one table per kind (told apart by their columns)."""
    held: dict[str, list[pa.RecordBatch]] = {}
    for batch in batches:
        kind = next(k for k, schema in _KINDS.items() if batch.schema.names == schema.names)
        held.setdefault(kind, []).append(batch)
    return {k: pa.Table.from_batches(v, schema=_KINDS[k]).combine_chunks() for k, v in held.items()}


def _info_lookup(info: pa.Table | None, docs: np.ndarray) -> tuple[pa.Array, list[pa.Array]]:
    """Each page's URL and times from INFO rows, null where the page has none."""
    info = info if info is not None else INFO.empty_table()
    ids = info.column("doc_id").to_numpy()
    if not len(ids):
        return pa.nulls(len(docs), pa.string()), [pa.nulls(len(docs), pa.int64()) for _ in SOURCE_BASES]
    order = np.argsort(ids, kind="stable")
    at = _lookup(ids[order], docs)
    rows = pa.array(np.where(at >= 0, order[np.maximum(at, 0)], 0), pa.int64())
    missing = pa.array(at < 0)
    taken = [
        pc.if_else(missing, pa.scalar(None, f.type), info.column(f.name).combine_chunks().take(rows)) for f in list(INFO)[1:]
    ]
    return taken[0], taken[1:]


def _a_side(counts: pa.Table | None, info: pa.Table | None) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """(SIDE rows of the pages with count rows here, A_SIDE rows of their pairs as page a)."""
    counts = counts if counts is not None else _COUNT_ROWS.empty_table()
    doc_a, doc_b, shared = (counts.column(c).to_numpy() for c in ("doc_a", "doc_b", "shared"))
    own = doc_b < 0
    ids, at = np.unique(doc_a[own], return_inverse=True)
    fp = np.zeros(len(ids), np.int64)
    np.add.at(fp, at, shared[own])
    url, times = _info_lookup(info, ids)
    side = pa.RecordBatch.from_arrays([pa.array(ids), pa.array(fp), url, *times], schema=SIDE)
    where = _lookup(ids, doc_a[~own])
    keep = where >= 0  # an inner join: a pair whose page a has no count row is no candidate
    a_side = pa.RecordBatch.from_arrays(
        [
            pa.array(doc_a[~own][keep]),
            pa.array(doc_b[~own][keep]),
            pa.array(shared[~own][keep]),
            pa.array(fp[where[keep]]),
            *(column.take(pa.array(where[keep])) for column in side.columns[2:]),
        ],
        schema=A_SIDE,
    )
    return side, a_side


def _b_side(side: pa.Table | None, pairs: pa.Table | None) -> pa.Table:
    """WRITTEN rows of the pairs whose page b is here, sorted by (doc_a, doc_b)."""
    side = side if side is not None else SIDE.empty_table()
    pairs = pairs if pairs is not None else A_SIDE.empty_table()
    ids = side.column("doc_id").to_numpy()
    order = np.argsort(ids, kind="stable")
    at = _lookup(ids[order], pairs.column("doc_b").to_numpy())
    keep = np.flatnonzero(at >= 0)  # an inner join, as for page a
    b_rows = pa.array(order[at[keep]] if len(ids) else np.zeros(0, np.int64), pa.int64())
    pairs = pairs.take(pa.array(keep))
    sort = pa.array(np.lexsort((pairs.column("doc_b").to_numpy(), pairs.column("doc_a").to_numpy())))
    pairs, b_rows = pairs.take(sort), b_rows.take(sort)
    b = side.take(b_rows)
    sides: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {"a": {}, "b": {}}
    for _, c in SOURCE_BASES:
        for x, column in (("a", pairs.column(f"{c}_a")), ("b", b.column(c))):
            values = column.combine_chunks()
            sides[x][c] = (values.fill_null(0).to_numpy(), values.is_valid().to_numpy(zero_copy_only=False))
    return _candidate_rows(
        pairs.column("doc_a").to_numpy(),
        pairs.column("doc_b").to_numpy(),
        pairs.column("shared").to_numpy(),
        pairs.column("fp_a").to_numpy(),
        b.column("fp").to_numpy(),
        {"a": pairs.column("url_a").combine_chunks(), "b": b.column("url").combine_chunks()},
        sides,
    )


def _lookup(sorted_ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Each wanted id's index in sorted_ids, -1 where it is not there."""
    if not len(sorted_ids):
        return np.full(len(wanted), -1, np.int64)
    at = np.minimum(np.searchsorted(sorted_ids, wanted), len(sorted_ids) - 1)
    return np.where(sorted_ids[at] == wanted, at, -1)


def _sources(sides: dict, n: int) -> tuple[list, list]:
    """source_columns' values, from each side's (times, known) per basis."""
    source = np.full(n, None, object)
    basis = np.full(n, None, object)
    open_ = np.ones(n, bool)
    for name, c in SOURCE_BASES:
        (ta, ka), (tb, kb) = sides["a"][c], sides["b"][c]
        decided = open_ & ka & kb & (ta != tb)
        source[decided] = np.where(ta[decided] < tb[decided], "a", "b")
        basis[decided] = name
        open_ &= ~decided
    for name, c in SOURCE_BASES:
        both = open_ & sides["a"][c][1] & sides["b"][c][1]
        source[both] = "tie"
        basis[both] = name
        open_ &= ~both
    source[open_] = "unknown"
    return source.tolist(), basis.tolist()
