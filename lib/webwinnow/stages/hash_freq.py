"""Stage: `fingerprints` → `hash_freq` (per hash: documents, occurrences, hosts, a snippet) and
`rank_freq` (the rank–frequency curve) with a power-law fit in `report/stats.json`.

One shuffle: the fingerprints (with their document's host) by hash, as blobs (stages._exchange:
the JVM moves bytes, not a row per fingerprint), to counting tasks that sort their partition by
hash, document and position, and a kernel counts every hash's run (webwinnow.analysis.pairing).
One task per file of the fingerprints reads it with pyarrow and packs it. Where the extract
stage wrote the fingerprints, a file's pages are those of the documents file of the same name,
and the task finds their hosts there (document_parts): no join at any scale. Otherwise, while
the documents are few enough, their hosts are read on the driver and shared with every task;
beyond, Spark joins the hosts and the joined rows are packed. A counting task holds its
partition: the partitions are as many as keep each under _exchange.PARTITION_BYTES.
Snippets are cut only for hashes seen in two or more documents: nobody looks at the long tail of
hashes seen once (82% of them on web pages, by the paper); one task per documents file cuts
them from its own texts, which are read in place, never shuffled: every task has all the
requests when they are few, else Spark moves each request to the task of its file (known when
the hosts were found beside the fingerprints; otherwise the requests are joined to the texts).

The Python tasks write the table themselves (outputs.parts): the counting tasks the hashes seen
in one document (95% of the rows on the docs corpus), the snippet tasks the others. The JVM gets
the shared hashes' requests and, per chunk, how many hashes each document frequency has.

The counting tasks also keep what the shuffle gave them: the fingerprints sorted by hash, whole
hash runs in each part, in the table's hidden folder `_by_hash` (BY_HASH; Spark and pyarrow
readers skip it). The candidates stage seeds its pairs from those parts, one task each, instead
of shuffling and sorting every fingerprint again; they live and go with the table.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..analysis.pairing import hash_counts
from ..analysis.powerlaw import fit_power_law, frequency_shares, rank_frequency
from ..core.distinct import distinct_counts
from ..crawl.hosts import host_of
from ..outputs.parts import PartWriter, drop_unfinished_parts, ensure_part
from ..outputs.tables import (
    drop_staged,
    finish_table,
    folder_parquet_files,
    open_parquet,
    parquet_files,
    read_row_groups,
    row_count,
    stage_table,
    table_meta,
    table_stats,
    write_arrow,
)
from . import StageContext
from ._exchange import BLOBS, exchanged, packed, partitions_for, sorted_partition, spread, unpacked
from ._frames import KERNEL_BATCH_ROWS, arrow_batch_rows, read_table, sorted_chunks, spark_schema, url_host
from ._session import broadcast_rows, shuffle_partitions
from ._shared import share
from ._tasks import slots

#: Broadcast a side of a join below this many rows (16–24 bytes a row): the other side, the
#: fingerprints or the texts, then stays where it is.
BROADCAST_ROWS = 2_000_000

#: What the counting tasks hand the JVM: a row per hash seen in two documents or more, and per
#: chunk and document frequency a row with no hash and the number of hashes (`hashes`).
COUNTED = pa.schema(
    [
        ("hash", pa.int64()),
        pa.field("docs", pa.int64(), nullable=False),
        ("occurrences", pa.int64()),
        pa.field("hosts", pa.int64(), nullable=False),
        ("doc_id", pa.int64()),
        ("pos", pa.int32()),
        ("hashes", pa.int64()),
        # the documents file that holds doc_id, where known (document_parts): its snippet is cut
        # by that file's task
        ("file", pa.int32()),
    ]
)
#: Part numbers of the snippet tasks: after the counting tasks'.
SNIPPET_TASKS = 100_000
#: What a snippet task hands the JVM: how many rows it wrote.
WROTE = pa.schema([("rows", pa.int64())])

#: The hidden folder of the table that holds the fingerprints sorted by hash (see the module).
BY_HASH = "_by_hash"
#: What it holds: (hash, doc_id, pos), sorted, a hash's every row in one part.
BY_HASH_ROWS = pa.schema([("hash", pa.int64()), ("doc_id", pa.int64()), ("pos", pa.int32())])

#: Up to this many documents, their hosts are read on the driver (URLs of a few hundred MB at most).
DRIVER_HOSTS = 2_000_000

#: HASH_FREQ as the stage writes it: the counts are never null.
WRITTEN = pa.schema([f.with_nullable(False) if f.name in ("docs", "hosts") else f for f in schemas.HASH_FREQ])


def doc_hosts(spark: SparkSession, out: str):
    """(doc_id, host) of ok documents; host lower-cased, null when the URL has none."""
    return (
        read_table(spark, out, "documents").filter(F.col("status") == "ok").select("doc_id", url_host(F.col("url")).alias("host"))
    )


def host_ids(spark: SparkSession, out: str):
    """(doc_id, host_id) of ok documents as a DataFrame: a number per host, null when the URL has
    none. Only how many distinct hosts hold a hash is counted, so any number that tells hosts
    apart will do. A larger documents table than DRIVER_HOSTS in Spark, by hash of host; a
    smaller one from driver_host_ids."""
    if row_count(out, "documents") > DRIVER_HOSTS:
        return doc_hosts(spark, out).select("doc_id", F.when(F.col("host").isNotNull(), F.xxhash64("host")).alias("host_id"))
    return spark.createDataFrame(driver_host_ids(out), "doc_id long, host_id long")


def driver_host_ids(out: str) -> pa.Table:
    """host_ids read on the driver: each distinct URL's host looked up once (no Python UDF job,
    no workers started for it)."""
    ok = [t.filter(pc.equal(t.column("status"), "ok")) for t in read_row_groups(out, "documents", ["doc_id", "url", "status"])]
    rows = pa.concat_tables(ok) if ok else schemas.DOCUMENTS.empty_table()
    urls = pc.dictionary_encode(rows.column("url")).combine_chunks()
    numbers: dict[str, int] = {}
    of_url = [None if h is None else numbers.setdefault(h, len(numbers)) for h in map(host_of, urls.dictionary.to_pylist())]
    ids = pa.array(of_url, pa.int64()).take(urls.indices)
    return pa.table({"doc_id": rows.column("doc_id"), "host_id": ids})


#: What the fingerprints' shuffle moves: a fingerprint and its document's host.
HOSTED = pa.schema(
    [("hash", pa.int64()), ("doc_id", pa.int64()), ("pos", pa.int32()), ("host_id", pa.int64()), ("file", pa.int32())]
)
#: Bytes of a HOSTED row in an Arrow batch.
HOSTED_BYTES = 32
#: The order a counting task puts its partition in.
COUNT_ORDER = ("hash", "doc_id", "pos")


def by_hash_spread(batch: pa.RecordBatch) -> np.ndarray:
    """Where a fingerprint goes: with every other fingerprint of its hash."""
    return spread(batch.column("hash").to_numpy())


def hosted_files(spark: SparkSession, out: str, hosts: pa.Table, parts: int):
    """BLOBS of HOSTED rows from one task per file of the fingerprints, read with pyarrow; every
    task has the hosts (doc_id, host_id), sorted by document."""
    shared = share(spark, _host_table(hosts), out)
    files = parquet_files(out, "fingerprints")

    def pack(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                yield from packed(_hosted(files[i], shared.value, None), by_hash_spread, parts)

    return shared, slots(spark, len(files)).mapInArrow(pack, spark_schema(BLOBS))


def document_parts(out: str) -> list[tuple[str, str]] | None:
    """Per file of the fingerprints, the documents file whose ok pages it holds the fingerprints
    of, when the extract stage's tasks wrote both (a part of each, of the same name: the table
    says so) from the documents table there now; else None."""
    meta, documents = table_meta(out, "fingerprints") or {}, table_meta(out, "documents") or {}
    if not meta.get("document_parts") or meta.get("reads", {}).get("documents") != documents.get("recipe"):
        return None
    by_name = {storage.basename(name): name for name in parquet_files(out, "documents")}
    files = parquet_files(out, "fingerprints")
    if any(storage.basename(name) not in by_name for name in files):
        return None
    return [(name, by_name[storage.basename(name)]) for name in files]


def hosted_in_files(spark: SparkSession, paired: list[tuple[str, str]], parts: int | None):
    """HOSTED rows (as BLOBS for `parts` partitions, when given) from one task per file of the
    fingerprints, which finds its documents' hosts in the documents file of the same extract
    task (document_parts): no join, no hosts read on the driver or shared, at any scale. A
    host's number is a hash of its name, the same in every task (only how many hosts hold a
    hash is counted)."""

    def rows_of(i: int):
        fingerprints, documents = paired[i]
        return _hosted(fingerprints, _host_table(file_host_ids(documents)), i)

    def hosted(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                yield from (packed(rows_of(i), by_hash_spread, parts) if parts else rows_of(i))

    schema = spark_schema(BLOBS if parts else HOSTED)
    return slots(spark, len(paired), dataframe=not parts).mapInArrow(hosted, schema)


def file_host_ids(name: str) -> pa.Table:
    """(doc_id, host_id) of the ok pages of one documents file: each distinct URL's host looked
    up once, numbered by a 64-bit hash of its name, null when the URL has none."""
    with storage.open_input(name) as fh:
        rows = open_parquet(name, fh).read(columns=["doc_id", "url", "status"])
    rows = rows.filter(pc.equal(rows.column("status"), "ok"))
    urls = pc.dictionary_encode(rows.column("url").combine_chunks())
    of_url = [None if h is None else _host_number(h) for h in map(host_of, urls.dictionary.to_pylist())]
    ids = pa.array(of_url, pa.int64()).take(urls.indices)
    return pa.table({"doc_id": rows.column("doc_id"), "host_id": ids})


def _host_number(host: str) -> int:
    return int.from_bytes(hashlib.blake2b(host.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big", signed=True)


def _host_table(hosts: pa.Table) -> np.ndarray:
    """(doc_id, host_id, has a host) rows, sorted by document: what _hosted looks up."""
    doc_id = hosts.column("doc_id").to_numpy()
    order = np.argsort(doc_id, kind="stable")
    host = hosts.column("host_id")
    table = np.stack(
        [doc_id[order], host.fill_null(-1).to_numpy()[order], host.is_valid().to_numpy(zero_copy_only=False)[order]], axis=1
    )
    return table.astype(np.int64).reshape(-1, 3)


def _hosted(name: str, known: np.ndarray, file: int | None):
    """HOSTED batches of one file of the fingerprints, each document's host looked up in `known`
    (_host_table); `file`: the number of the documents file that holds its pages, if known."""
    with storage.open_input(name) as fh:
        for batch in open_parquet(name, fh).iter_batches(batch_size=KERNEL_BATCH_ROWS, columns=["hash", "doc_id", "pos"]):
            docs = batch.column("doc_id").to_numpy()
            at = np.minimum(np.searchsorted(known[:, 0], docs), max(len(known) - 1, 0))
            found = (known[at, 0] == docs) & (known[at, 2] == 1) if len(known) else np.zeros(len(docs), bool)
            ids = pa.array(known[at, 1] if len(known) else np.zeros(len(docs), np.int64), pa.int64(), mask=~found)
            where = pa.nulls(len(docs), pa.int32()) if file is None else pa.array(np.full(len(docs), file, np.int32))
            yield pa.RecordBatch.from_arrays([*batch.columns, ids, where], schema=HOSTED)


def counted_arrow(batches, written: PartWriter, by_hash: PartWriter | None = None):
    """COUNTED rows for (hash, doc_id, pos)-sorted batches of (hash, doc_id, pos, host_id); the
    HASH_FREQ rows of the hashes seen in one document go to `written` (no snippet), not to the
    JVM, and the fingerprints themselves, as they came, to `by_hash` (BY_HASH_ROWS)."""
    for chunk in sorted_chunks(batches, ["hash"]):
        if by_hash is not None:
            for batch in chunk.select(BY_HASH_ROWS.names).cast(BY_HASH_ROWS).to_batches():
                by_hash.write(batch)
        host = chunk.column("host_id")
        c = hash_counts(
            chunk.column("hash").to_numpy(),
            chunk.column("doc_id").to_numpy(),
            chunk.column("pos").to_numpy(),
            host.fill_null(0).to_numpy(),
            host.is_valid().to_numpy(zero_copy_only=False),
        )
        shared = c.docs >= 2
        once = np.flatnonzero(~shared)
        columns = (c.hash, c.docs, c.occurrences, c.hosts, c.doc_id)
        written.write(
            pa.RecordBatch.from_arrays([*(pa.array(x[once]) for x in columns), pa.nulls(len(once), pa.string())], schema=WRITTEN)
        )
        docs, hashes = distinct_counts(c.docs)
        keep = np.flatnonzero(shared)
        n = len(docs)
        file = (
            chunk.column("file").take(pa.array(c.row[keep])) if "file" in chunk.column_names else pa.nulls(len(keep), pa.int32())
        )
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(np.r_[c.hash[keep], np.zeros(n, np.int64)], mask=np.r_[np.zeros(len(keep), bool), np.ones(n, bool)]),
                pa.array(np.r_[c.docs[keep], docs].astype(np.int64)),
                pa.array(np.r_[c.occurrences[keep], np.zeros(n, np.int64)]),
                pa.array(np.r_[c.hosts[keep], np.zeros(n, np.int64)]),
                pa.array(np.r_[c.doc_id[keep], np.zeros(n, np.int64)]),
                pa.array(np.r_[c.pos[keep], np.zeros(n, np.int32)].astype(np.int32)),
                pa.array(np.r_[np.zeros(len(keep), np.int64), hashes.astype(np.int64)]),
                pa.concat_arrays([file.combine_chunks().cast(pa.int32()), pa.nulls(n, pa.int32())]),
            ],
            schema=COUNTED,
        )


def snippet_arrow(batches, chars: int):
    """HASH_FREQ rows with snippets for batches of (doc_id, requests, text): each text is decoded
    once per document and sliced per request (Spark's substring walks the UTF-8 from the start
    for every call: quadratic in a document's requests)."""
    for batch in batches:
        texts = batch.column("text").to_pylist()
        requests = batch.column("requests")
        offsets = requests.offsets.to_numpy()
        offsets = offsets - offsets[0]
        values = requests.flatten()
        pos = values.field("pos").to_numpy(zero_copy_only=False)
        snippets = [
            texts[row][p : p + chars] for row in range(batch.num_rows) for p in pos[offsets[row] : offsets[row + 1]].tolist()
        ]
        doc_ids = np.repeat(batch.column("doc_id").to_numpy(zero_copy_only=False), np.diff(offsets))
        yield pa.RecordBatch.from_arrays(
            [
                values.field("hash"),
                values.field("docs"),
                values.field("occurrences"),
                values.field("hosts"),
                pa.array(doc_ids),
                pa.array(snippets, pa.string()),
            ],
            schema=WRITTEN,
        )


#: A snippet request: the hash's HASH_FREQ columns and where in which document it is cut.
REQUEST_COLUMNS = ("hash", "docs", "occurrences", "hosts", "doc_id", "pos")


def _cut_in_files(spark: SparkSession, out: str, folder: str, requests: pa.Table, chars: int) -> None:
    """The snippets of `requests` (REQUEST_COLUMNS), cut by one task per Parquet file of the
    documents, which reads its ok texts with pyarrow and writes its part of the table: the texts
    never pass through the JVM, which gets a row count per task."""
    order = np.lexsort((requests.column("pos").to_numpy(), requests.column("doc_id").to_numpy()))
    table = np.stack([requests.column(c).to_numpy().astype(np.int64)[order] for c in REQUEST_COLUMNS], axis=1)
    held = share(spark, table.reshape(-1, len(REQUEST_COLUMNS)), out)
    files = parquet_files(out, "documents")

    def cut_files(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                writer = PartWriter(folder, SNIPPET_TASKS + i, WRITTEN)
                try:
                    for rows in file_snippets(files[i], held.value, chars):
                        writer.write(rows)
                    writer.close()
                except BaseException:
                    writer.abort()
                    raise
                yield pa.RecordBatch.from_arrays([pa.array([writer.rows], pa.int64())], schema=WROTE)

    try:
        slots(spark, len(files)).mapInArrow(cut_files, spark_schema(WROTE)).collect()
    finally:
        held.unpersist()


def _cut_routed(requests, documents: list[str], folder: str, chars: int) -> None:
    """The snippets of the shared hashes' requests (a frame of COUNTED rows whose `file` is
    known), cut by one task per documents file, to which Spark moves its requests: the texts
    stay where they are, at any scale (joined to the requests, Spark shuffled every text)."""

    def cut(batches):
        held = [b for b in batches if b.num_rows]
        if not held:
            return
        rows = pa.Table.from_batches(held)
        held.clear()
        file = rows.column("file").to_numpy(zero_copy_only=False)
        for i in np.unique(file).tolist():
            mine = rows.filter(pa.array(file == i))
            table = np.stack([mine.column(c).to_numpy().astype(np.int64) for c in REQUEST_COLUMNS], axis=1)
            table = table[np.lexsort((table[:, 5], table[:, 4]))]  # by page, then position
            writer = PartWriter(folder, SNIPPET_TASKS + i, WRITTEN)
            try:
                for got in file_snippets(documents[i], table, chars):
                    writer.write(got)
                writer.close()
            except BaseException:
                writer.abort()
                raise
            yield pa.RecordBatch.from_arrays([pa.array([writer.rows], pa.int64())], schema=WROTE)

    routed = requests.select(*REQUEST_COLUMNS, "file").repartitionById(max(1, len(documents)), "file")
    routed.mapInArrow(cut, spark_schema(WROTE)).agg(F.sum("rows")).collect()


def file_snippets(name: str, requests: np.ndarray, chars: int):
    """HASH_FREQ rows with snippets for the requests (REQUEST_COLUMNS rows, sorted by doc_id) of
    the ok documents in one documents file: each text decoded once, sliced per request."""
    doc_of = requests[:, 4]
    with storage.open_input(name) as fh:
        for batch in open_parquet(name, fh).iter_batches(batch_size=1024, columns=["doc_id", "text", "status"]):
            ids = batch.column("doc_id").to_numpy(zero_copy_only=False)
            # each page's requests, found in the sorted doc_of (np.isin sorted it again per batch)
            lo, hi = np.searchsorted(doc_of, ids, side="left"), np.searchsorted(doc_of, ids, side="right")
            wanted = np.flatnonzero((hi > lo) & pc.equal(batch.column("status"), "ok").to_numpy(zero_copy_only=False))
            if not len(wanted):
                continue
            texts = batch.column("text").take(pa.array(wanted)).to_pylist()
            lo, hi = lo[wanted], hi[wanted]
            rows = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])
            snippets = [text[p : p + chars] for text, a, b in zip(texts, lo, hi, strict=True) for p in requests[a:b, 5].tolist()]
            picked = requests[rows]
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(picked[:, 0]),
                    pa.array(picked[:, 1]),
                    pa.array(picked[:, 2]),
                    pa.array(picked[:, 3]),
                    pa.array(picked[:, 4]),
                    pa.array(snippets, pa.string()),
                ],
                schema=WRITTEN,
            )


def in_hash_order(batches) -> list[pa.RecordBatch]:
    """A counting task's partition, which comes in any order (a blob shuffle), in COUNT_ORDER."""
    return sorted_partition(batches, COUNT_ORDER)


#: The staged folder of the counting tasks' rows (COUNTED), read on the driver when few.
COUNTS = "hash_counts"


def _read_counted(folder: str) -> pa.Table:
    tables = []
    for name in folder_parquet_files(folder):
        with storage.open_input(name) as fh:
            tables.append(open_parquet(name, fh).read())
    return pa.concat_tables(tables).cast(COUNTED) if tables else COUNTED.empty_table()


def _summed_by_docs(rows: pa.Table) -> list[tuple[int, int]]:
    """(docs, hashes) with each docs once, its hashes summed: what Spark's groupBy gave."""
    docs = rows.column("docs").to_numpy()
    hashes = rows.column("hashes").fill_null(0).to_numpy()
    unique, at = np.unique(docs, return_inverse=True)
    summed = np.zeros(len(unique), np.int64)
    np.add.at(summed, at, hashes)
    return list(zip(unique.tolist(), summed.tolist(), strict=True))


def _task(first: int) -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return first + (context.partitionId() if context else 0)


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    stats = table_stats(out, "doc_stats") or {}
    documents = int(stats.get("documents", BROADCAST_ROWS + 1))
    fingerprints = int(stats.get("fingerprints") or row_count(out, "fingerprints"))
    parts = partitions_for(HOSTED_BYTES, fingerprints, shuffle_partitions(spark))
    shared_hosts = None
    few = documents <= broadcast_rows(spark, 16, BROADCAST_ROWS)
    paired = document_parts(out)
    if paired is not None:
        # each task finds its documents' hosts in the documents file written beside its file
        rows = hosted_in_files(spark, paired, parts)
        by_hash_rows = exchanged(rows, parts) if parts else rows.repartition("hash").sortWithinPartitions(*COUNT_ORDER)
    elif parts and few and row_count(out, "documents") <= DRIVER_HOSTS:
        shared_hosts, blobs = hosted_files(spark, out, driver_host_ids(out), parts)
        by_hash_rows = exchanged(blobs, parts)
    else:
        hosts = host_ids(spark, out)
        fp = read_table(spark, out, "fingerprints").join(F.broadcast(hosts) if few else hosts, "doc_id", "left")
        fp = fp.select(*HOSTED.names[:-1], F.lit(None).cast("int").alias("file"))
        if parts:
            blob_parts = parts

            def pack(batches):
                yield from packed(batches, by_hash_spread, blob_parts)

            by_hash_rows = exchanged(fp.mapInArrow(pack, spark_schema(BLOBS)), parts)
        else:  # more fingerprints than blob partitions hold: Spark's sort, which spills
            by_hash_rows = fp.repartition("hash").sortWithinPartitions(*COUNT_ORDER)
    folder = stage_table(out, "hash_freq")
    by_hash = storage.child(folder, BY_HASH)
    fs, path = storage.locate(by_hash)
    fs.create_dir(path, recursive=True)

    counts_folder = stage_table(out, COUNTS)

    def count(batches):
        task = _task(0)
        writers = [
            PartWriter(folder, task, WRITTEN),
            PartWriter(by_hash, task, BY_HASH_ROWS),
            PartWriter(counts_folder, task, COUNTED),
        ]
        try:
            rows = 0
            for batch in counted_arrow(in_hash_order(unpacked(batches)) if parts else batches, *writers[:2]):
                writers[2].write(batch)
                rows += batch.num_rows
            for writer in writers:
                writer.close()
        except BaseException:
            for writer in writers:
                writer.abort()
            raise
        yield pa.RecordBatch.from_arrays([pa.array([rows], pa.int64())], schema=WROTE)

    # a k-gram spans k kept characters, more in the original; a word about 7, a code token 5
    chars = {"word": 12, "code": 8}.get(cfg.winnow.unit, 3) * cfg.winnow.k

    def cut(batches):
        writer = PartWriter(folder, _task(SNIPPET_TASKS), WRITTEN)
        try:
            for batch in snippet_arrow(batches, chars):
                writer.write(batch)
                yield pa.RecordBatch.from_arrays([pa.array([batch.num_rows], pa.int64())], schema=WROTE)
            writer.close()
        except BaseException:
            writer.abort()
            raise

    try:
        with arrow_batch_rows(spark):  # fingerprint-sized rows; the texts below keep the default
            rows = sum(r["rows"] for r in by_hash_rows.mapInArrow(count, spark_schema(WROTE)).collect())
        ensure_part(counts_folder, COUNTED)  # no counting task ran: no rows
        if rows <= broadcast_rows(spark, 48, BROADCAST_ROWS):
            # few: the counting tasks' rows read on the driver, no Spark job over them
            got = _read_counted(counts_folder)
            own = pc.is_null(got.column("hash"))
            fof = _summed_by_docs(got.filter(own))
            requests = got.filter(pc.invert(own)).select(list(REQUEST_COLUMNS))
            counted = None
        else:
            counted = spark.read.schema(spark_schema(COUNTED)).parquet(counts_folder)
            with arrow_batch_rows(spark):
                fof = [
                    (r["docs"], r["hashes"])
                    for r in counted.filter(F.col("hash").isNull()).groupBy("docs").agg(F.sum("hashes").alias("hashes")).collect()
                ]
            requests = None
        if sum(n for d, n in fof if d >= 2) <= broadcast_rows(spark, 48, BROADCAST_ROWS):  # a request per shared hash
            # few: every task has them all, and one task per documents file reads its texts itself
            if requests is None:
                assert counted is not None
                requests = counted.filter(F.col("hash").isNotNull()).select(*REQUEST_COLUMNS).toArrow()
            _cut_in_files(spark, out, folder, requests, chars)
        else:
            shared = (counted if counted is not None else spark.read.schema(spark_schema(COUNTED)).parquet(counts_folder)).filter(
                F.col("hash").isNotNull()
            )
            if paired is not None:  # each request goes to the task of the file that holds its page
                _cut_routed(shared, [documents for _, documents in paired], folder, chars)
            else:
                grouped = shared.groupBy("doc_id").agg(
                    F.collect_list(F.struct("hash", "docs", "occurrences", "hosts", "pos")).alias("requests")
                )
                texts = read_table(spark, out, "documents").filter(F.col("status") == "ok").select("doc_id", "text")
                grouped.join(texts, "doc_id").mapInArrow(cut, spark_schema(WROTE)).agg(F.sum("rows")).collect()
        ensure_part(folder, WRITTEN)
        ensure_part(by_hash, BY_HASH_ROWS)
        drop_unfinished_parts(by_hash)
        finish_table(out, "hash_freq", cfg, "hash_freq", {"by_hash": BY_HASH})
    except BaseException:
        drop_staged(out, "hash_freq")
        raise
    finally:
        drop_staged(out, COUNTS)
        if shared_hosts is not None:
            shared_hosts.unpersist()
    runs = rank_frequency(fof)
    fit = fit_power_law(runs)
    shares = frequency_shares(fof)
    columns = np.array(runs, np.int64).reshape(-1, len(schemas.RANK_FREQ))
    rank = pa.table(list(columns.T), schema=schemas.RANK_FREQ)
    stats = {"hashes": sum(n for _, n in fof), "fit": fit, "shares": shares}
    write_arrow(rank, out, "rank_freq", cfg, "hash_freq", stats)
    return stats
