"""The passages stage's window pass when its pairs are few enough for the driver to hold.

The driver reads the pairs (pair_seeds and candidate_pairs, with pyarrow) and splits them by
the documents file that holds their page b. One task per documents file then reads its pages
with pyarrow and hands the grow shuffle one row per pair whose b it holds: b's window, with the
pair's seeds and candidate columns, and the whole text of every page that is some pair's a. A
pair whose b is in no file as an ok page goes on as its seeds alone (it grows no passage).

A pair is one row of the shuffle, not two (its window, then its seeds joined by Spark to its
candidate columns): the JVM's cost there is per row (docs/performance.md).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from .. import schemas, storage
from ..config import RunConfig
from ..core.distinct import distinct
from ..outputs.tables import parquet_files, read_arrow, stage_table, table_meta
from ._frames import spark_schema
from ._session import default_parallelism
from ._shared import share
from ._windows import WINDOW_LISTS, WINDOW_VALUES, WINDOWS, window_arrow

#: A pair's columns of candidate_pairs, carried with its seeds to the grow task, which writes
#: the pair's row of `pairs` or `template_pairs` and its passages itself.
CANDIDATE = tuple(name for name in schemas.CANDIDATE_PAIRS.names if name not in ("doc_a", "doc_b"))
SEEDS = schemas.PAIR_SEEDS.field("seeds").type
#: A pair's seeds as this path ships them: its (pos_a, pos_b) as int32 pairs, one binary value
#: a pair, where a list of structs cost the JVM per seed to convert (2.7 M on the docs corpus).
SEED_BYTES = pa.binary()
#: What the grow shuffle carries here: WINDOWS, and a pair's seeds and candidate columns (null
#: in a page's row).
GROW_ROWS = pa.schema(
    [*WINDOWS, pa.field("seeds", SEED_BYTES), *(pa.field(name, schemas.CANDIDATE_PAIRS.field(name).type) for name in CANDIDATE)]
)
#: A pair as the window pass gets it: its page b, where its b window reaches, its seeds and
#: candidate columns.
PAIR_REQUESTS = pa.schema(
    [
        *((name, pa.int64()) for name in ("doc_a", "doc_b", "lo", "hi")),
        GROW_ROWS.field("seeds"),
        *(GROW_ROWS.field(name) for name in CANDIDATE),
    ]
)
#: The staged folder of the pairs split by file (one Arrow IPC file a documents file).
REQUESTS = "passage_requests"


def _b_bounds(seeds: pa.ListArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, last) of each list's pos_b, for the lists that hold seeds, and which those are."""
    offsets = seeds.offsets.to_numpy()
    offsets = offsets - offsets[0]
    # struct_field, not StructArray.field: a row group's list values may be a slice of their child
    pos_b = pc.struct_field(seeds.flatten(), "pos_b").to_numpy(zero_copy_only=False).astype(np.int64)
    has = np.flatnonzero(np.diff(offsets) > 0)  # a pair always has seeds; one without asks for no window
    starts = offsets[:-1][has]  # the lists without seeds hold none: each start's run is its list's
    if not len(starts):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), has
    return np.minimum.reduceat(pos_b, starts), np.maximum.reduceat(pos_b, starts), has


def stored_pairs(out: str) -> pa.Table:
    """PAIR_REQUESTS of every pair of pair_seeds that candidate_pairs holds (Spark's inner join
    of the two did this before): read with pyarrow, b's window around all of its seeds."""
    seeds = read_arrow(out, "pair_seeds")
    candidates = read_arrow(out, "candidate_pairs", ["doc_a", "doc_b", *CANDIDATE])
    keys = ["doc_a", "doc_b"]
    left = pa.table({**{k: seeds.column(k) for k in keys}, "s": pa.array(np.arange(seeds.num_rows))})
    right = pa.table({**{k: candidates.column(k) for k in keys}, "c": pa.array(np.arange(candidates.num_rows))})
    joined = left.join(right, keys, join_type="inner", use_threads=False)
    s, c = (pa.array(joined.column(name).to_numpy()) for name in ("s", "c"))
    lists = seeds.column("seeds").combine_chunks()
    lo = np.zeros(len(lists), np.int64)
    hi = np.full(len(lists), -1, np.int64)  # a pair without seeds: no window
    first, last, has = _b_bounds(lists)
    lo[has], hi[has] = first, last
    columns = {
        "doc_a": seeds.column("doc_a").take(s),
        "doc_b": seeds.column("doc_b").take(s),
        "lo": pa.array(lo).take(s),
        "hi": pa.array(hi).take(s),
        "seeds": packed_seeds(lists).take(s),  # bytes: taken faster than lists of structs
        **{name: candidates.column(name).take(c) for name in CANDIDATE},
    }
    return pa.table(columns).cast(PAIR_REQUESTS)


def whole_requests(pairs: pa.Table, redo: pa.Table) -> pa.Table:
    """The PAIR_REQUESTS of `pairs` whose (doc_a, doc_b) `redo` holds, b's window its whole page."""
    again = pairs.join(redo.select(["doc_a", "doc_b"]), ["doc_a", "doc_b"], join_type="left semi", use_threads=False)
    n = again.num_rows
    again = again.set_column(2, "lo", pa.array(np.zeros(n, np.int64)))
    return again.set_column(3, "hi", pa.array(np.full(n, 2**62, np.int64))).cast(PAIR_REQUESTS)


def packed_seeds(seeds: pa.ListArray) -> pa.BinaryArray:
    """Lists of seeds (none null) as SEED_BYTES."""
    offsets = seeds.offsets.to_numpy()
    flat = seeds.flatten()  # the lists' values only, even where the array is a slice
    pos = np.empty((len(flat), 2), np.int32)
    for i, name in enumerate(("pos_a", "pos_b")):
        pos[:, i] = pc.struct_field(flat, name).to_numpy(zero_copy_only=False)
    bounds = ((offsets - offsets[0]) * 8).astype(np.int32)
    return pa.BinaryArray.from_buffers(SEED_BYTES, len(seeds), [None, pa.py_buffer(bounds), pa.py_buffer(pos)])


def listed_seeds(table: pa.Table) -> pa.Table:
    """The table with its seeds as lists of structs (PAIR_SEEDS') where they came as SEED_BYTES,
    chunked as the other columns are (grow_arrow slices rows of one chunk)."""
    at = table.schema.get_field_index("seeds")
    if at < 0 or table.schema.field(at).type != SEED_BYTES:
        return table
    chunks = [_listed(chunk) for chunk in table.column(at).chunks]
    return table.set_column(at, pa.field("seeds", SEEDS), pa.chunked_array(chunks, SEEDS))


def _listed(packed: pa.BinaryArray) -> pa.ListArray:
    n = len(packed)
    bounds = np.frombuffer(packed.buffers()[1], np.int32, count=n + 1, offset=packed.offset * 4) if n else np.zeros(1, np.int32)
    data = packed.buffers()[2]
    values = np.frombuffer(data, np.int32) if data is not None and data.size else np.zeros(0, np.int32)
    pos = values[bounds[0] // 4 : bounds[-1] // 4].reshape(-1, 2)
    fields = list(SEEDS.value_type)
    struct = pa.StructArray.from_arrays([pa.array(np.ascontiguousarray(pos[:, i])) for i in range(2)], fields=fields)
    return pa.ListArray.from_arrays(pa.array((bounds - bounds[0]) // 8, pa.int32()), struct, type=SEEDS, mask=packed.is_null())


def file_sides(
    spark: SparkSession, out: str, pairs: pa.Table, cfg: RunConfig, shared, template, held: list, folder: str
) -> list[list[str]]:
    """GROW_ROWS from one task per Parquet file of the documents (the indexed ones too, in a
    check), for the PAIR_REQUESTS `pairs`: per pair whose page b the file holds, b's window (cut
    as the window pass cuts it) with the pair's seeds and candidate columns; the whole text
    (side -1) of every page that is some pair's a. One more task hands on the pairs whose b no
    file holds as an ok page: their seeds alone (side 2).

    The rows go to the grow tasks through files, not a Spark shuffle: each task writes its rows
    for grow task g (by doc_a) to an Arrow IPC file of the staged folder `folder` (the caller
    drops it when the stage is done), and the grow task reads and sorts them (bucket_batches).
    Spark's shuffle converted, sorted and converted back every row, about 6 of the stage's
    JVM CPU-seconds on the docs corpus. Returns, per grow task, the files it reads. The a
    pages' ids travel to every task, shared, appended to `held` to be unpersisted."""
    files = [f for name in ("documents", "indexed_documents") if table_meta(out, name) for f in parquet_files(out, name)]
    staged = stage_table(out, folder)
    names = _split(pairs, files, staged)
    seeded = pc.greater(pc.binary_length(pairs.column("seeds")), 0)
    firsts = share(spark, distinct(pairs.column("doc_a").filter(seeded).to_numpy()), out)
    held.append(firsts)
    buckets = grow_tasks(pairs, cfg, default_parallelism(spark))

    def sides_of(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                if i < len(files):
                    rows = _file_sides(files[i], names[i], firsts.value, cfg, shared.value, template.value)
                else:
                    rows = _seed_only(_read_requests(names[i]))
                yield _write_buckets(rows, staged, i, buckets)

    tasks = len(names)
    wrote = spark.range(0, tasks, 1, max(1, tasks)).mapInArrow(sides_of, spark_schema(WROTE)).collect()
    per_task: list[list[str]] = [[] for _ in range(buckets)]
    for task, bucket in sorted((r["task"], r["bucket"]) for r in wrote):
        per_task[bucket].append(_bucket_name(staged, task, bucket))
    return per_task


#: What a window-pass task tells the driver: the grow tasks it wrote rows for.
WROTE = pa.schema([("task", pa.int64()), ("bucket", pa.int64())])
#: Bytes of rows a grow task is given at most, by the estimate below: held whole where the run
#: folder is not on local disk (locally its files are mapped, not read).
TASK_BYTES = 256 << 20
#: Rows a grow task takes at a time from its sorted rows (pair_chunks regroups them).
TAKE_ROWS = 4000


def grow_tasks(pairs: pa.Table, cfg: RunConfig, cores: int) -> int:
    """How many grow tasks: two per core, and more when the b windows (each its seeds' stretch
    and a margin either side, about two bytes a character with its template intervals) would
    give one more than TASK_BYTES."""
    from ._windows import margin

    hi, lo = pairs.column("hi").to_numpy(), pairs.column("lo").to_numpy()
    stretch = np.where(hi >= 0, np.minimum(hi - lo, 1 << 24), 0) + 2 * margin(cfg)
    return max(2 * cores, -(-int(2 * stretch.sum()) // TASK_BYTES), 1)


def _bucket_name(folder: str, task: int, bucket: int) -> str:
    return storage.child(folder, f"rows-{task:05d}-{bucket:05d}.arrow")


def _write_buckets(rows: Iterator[pa.RecordBatch], folder: str, task: int, buckets: int) -> pa.RecordBatch:
    """Writes the rows for grow task g (spread(doc_a) mod buckets) to one Arrow IPC file each;
    WROTE rows of the files written."""
    from ._exchange import spread

    sinks: dict[int, _Sink] = {}
    try:
        for batch in rows:
            bucket = (spread(batch.column("doc_a").to_numpy()) % np.uint64(buckets)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
            for g in np.flatnonzero(np.diff(bounds)).tolist():
                if g not in sinks:
                    sinks[g] = _Sink(_bucket_name(folder, task, g))
                sinks[g].writer.write_batch(batch.take(pa.array(order[bounds[g] : bounds[g + 1]])))
        for sink in sinks.values():
            sink.close()
    except BaseException:
        for sink in sinks.values():
            sink.abort()
        raise
    written = sorted(sinks)
    return pa.RecordBatch.from_arrays([pa.array([task] * len(written), pa.int64()), pa.array(written, pa.int64())], schema=WROTE)


class _Sink:
    """An Arrow IPC file being written: on local disk straight to a temporary file renamed at
    the end (a gigabyte of rows on the docs corpus: a copy in memory first cost as much as the
    rest of the window pass), elsewhere in memory, then uploaded whole."""

    def __init__(self, name: str) -> None:
        self.name = name
        if storage.is_local(name):
            self.tmp = f"{storage.locate(name)[1]}.tmp-{os.getpid()}"
            self.stream = pa.OSFile(self.tmp, "wb")
        else:
            self.tmp = ""
            self.stream = pa.BufferOutputStream()
        self.writer = pa.ipc.new_file(self.stream, GROW_ROWS)

    def close(self) -> None:
        self.writer.close()
        if self.tmp:
            self.stream.close()
            os.replace(self.tmp, storage.locate(self.name)[1])
        else:
            storage.write_bytes(self.name, self.stream.getvalue().to_pybytes())

    def abort(self) -> None:
        try:
            self.stream.close()
        finally:
            if self.tmp and os.path.exists(self.tmp):
                os.remove(self.tmp)


def bucket_batches(names: list[str]) -> Iterator[pa.RecordBatch]:
    """A grow task's rows from the window pass's files, sorted by (doc_a, doc_b, side) as Spark's
    shuffle sorted them. Local files are mapped: only the rows being taken are read."""
    tables = [_read_ipc(name) for name in names]
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return
    # one copy into contiguous arrays: taking rows from many chunks cost 5 times as much
    table = pa.concat_tables(tables).combine_chunks()
    order = np.lexsort([table.column(name).to_numpy() for name in ("side", "doc_b", "doc_a")])
    for first in range(0, len(order), TAKE_ROWS):
        yield from table.take(pa.array(order[first : first + TAKE_ROWS])).to_batches()


def _read_ipc(name: str) -> pa.Table:
    if storage.is_local(name):
        return pa.ipc.open_file(pa.memory_map(storage.locate(name)[1])).read_all()
    return _read_requests(name)


def _split(pairs: pa.Table, files: list[str], folder: str) -> list[str]:
    """Writes the pairs whose page b file i holds (as an ok page) to part i of `folder`, sorted
    by (doc_b, doc_a), and the others (no such page, or no seeds) to part len(files); the parts'
    names."""
    ids, where = [], []
    for i, name in enumerate(files):
        with storage.open_input(name) as fh:
            got = pq.ParquetFile(fh).read(columns=["doc_id", "status"])
        ok = got.column("doc_id").filter(pc.equal(got.column("status"), "ok")).to_numpy()
        ids.append(ok)
        where.append(np.full(len(ok), i, np.int64))
    held = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    in_file = np.concatenate(where) if where else np.zeros(0, np.int64)
    order = np.argsort(held, kind="stable")
    held, in_file = held[order], in_file[order]
    doc_b = pairs.column("doc_b").to_numpy()
    at = np.minimum(np.searchsorted(held, doc_b), max(len(held) - 1, 0))
    found = (held[at] == doc_b) if len(held) else np.zeros(len(doc_b), bool)
    found &= pairs.column("hi").to_numpy() >= 0
    part = np.where(found, in_file[at] if len(held) else 0, len(files))
    order = np.lexsort((pairs.column("doc_a").to_numpy(), doc_b, part))
    bounds = np.searchsorted(part[order], np.arange(len(files) + 2))
    names = []
    for i in range(len(files) + 1):
        rows = pairs.take(pa.array(order[bounds[i] : bounds[i + 1]]))
        sink = io.BytesIO()
        with pa.ipc.new_file(sink, PAIR_REQUESTS) as writer:
            writer.write_table(rows)
        names.append(storage.child(folder, f"part-{i:05d}.arrow"))
        storage.write_bytes(names[-1], sink.getvalue())
    return names


def _read_requests(name: str) -> pa.Table:
    data = storage.read_bytes(name)
    if data is None:
        raise FileNotFoundError(f"{name}: the passages stage's pairs are gone (was the run folder cleaned?)")
    return pa.ipc.open_file(pa.BufferReader(data)).read_all()


def _nulls(n: int, names) -> list[pa.Array]:
    return [pa.nulls(n, GROW_ROWS.field(name).type) for name in names]


def _carried(requests: pa.Table, rows: np.ndarray) -> list[pa.Array]:
    """The seeds and candidate columns of these requests."""
    taken = requests.select(["seeds", *CANDIDATE]).take(pa.array(rows, pa.int64()))
    return [column.combine_chunks() for column in taken.columns]


def _seed_only(requests: pa.Table) -> Iterator[pa.RecordBatch]:
    n = requests.num_rows
    if n:
        yield pa.RecordBatch.from_arrays(
            [
                requests.column("doc_a").combine_chunks(),
                requests.column("doc_b").combine_chunks(),
                pa.array(np.full(n, 2, np.int32)),
                *_nulls(n, (*WINDOW_VALUES, "text", *WINDOW_LISTS)),
                *_carried(requests, np.arange(n)),
            ],
            schema=GROW_ROWS,
        )


def _file_sides(
    name: str, requests_name: str, firsts: np.ndarray, cfg: RunConfig, boilerplate: np.ndarray, template: np.ndarray
) -> Iterator[pa.RecordBatch]:
    requests = _read_requests(requests_name)
    keys = requests.column("doc_b").to_numpy()
    fields = {c: requests.column(c).to_numpy() for c in ("doc_a", "doc_b", "lo", "hi")}
    fs, path = storage.locate(name)
    with fs.open_input_file(path) as fh:
        for batch in pq.ParquetFile(fh).iter_batches(batch_size=1024, columns=["doc_id", "text", "status"]):
            ok = batch.filter(pc.equal(batch.column("status"), "ok"))
            ids = ok.column("doc_id").to_numpy()
            whole = np.flatnonzero(np.isin(ids, firsts))
            if len(whole):
                at = pa.array(whole)
                n = len(whole)
                yield pa.RecordBatch.from_arrays(
                    [
                        ok.column("doc_id").take(at),
                        pa.array(np.full(n, -1, np.int64)),
                        pa.array(np.full(n, -1, np.int32)),
                        *_nulls(n, WINDOW_VALUES),
                        ok.column("text").take(at),
                        *_nulls(n, (*WINDOW_LISTS, "seeds", *CANDIDATE)),
                    ],
                    schema=GROW_ROWS,
                )
            lo = np.searchsorted(keys, ids, "left")
            hi = np.searchsorted(keys, ids, "right")
            rows = np.flatnonzero(hi > lo)
            if not len(rows):
                continue
            index = np.concatenate([np.arange(a, b) for a, b in zip(lo[rows], hi[rows], strict=True)])
            values = pa.StructArray.from_arrays(
                [
                    pa.array(fields["doc_a"][index]),
                    pa.array(fields["doc_b"][index]),
                    pa.array(np.ones(len(index), np.int32)),
                    pa.array(fields["lo"][index]),
                    pa.array(fields["hi"][index]),
                ],
                names=["doc_a", "doc_b", "side", "lo", "hi"],
            )
            offsets = pa.array(np.r_[0, np.cumsum(hi[rows] - lo[rows])].astype(np.int32))
            at = pa.array(rows)
            done = 0
            # the windows come in the requests' order
            for windows in window_arrow(
                pa.RecordBatch.from_arrays(
                    [ok.column("doc_id").take(at), pa.ListArray.from_arrays(offsets, values), ok.column("text").take(at)],
                    names=["doc_id", "requests", "text"],
                ),
                cfg,
                boilerplate,
                template,
            ):
                mine = index[done : done + windows.num_rows]
                done += windows.num_rows
                yield pa.RecordBatch.from_arrays([*windows.columns, *_carried(requests, mine)], schema=GROW_ROWS)
