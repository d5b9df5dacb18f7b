"""The passages stage's window pass when its pairs are few enough for the driver to hold.

The driver reads the pairs (pair_seeds and candidate_pairs, with pyarrow) and splits them by
the documents file that holds their page b. One task per documents file then reads its pages
with pyarrow and hands the grow tasks one row per pair whose b it holds: b's window (where it
lies in the page, its fingerprints and template text, not its text), with the pair's seeds and
candidate columns; the whole text of every page that is some pair's a; and the whole text of
every page b, once for each grow task that has pairs of it. A pair whose b is in no file as an
ok page goes on as its seeds alone (it grows no passage).

The b windows' texts, cut each on its own, were 680 MB on the docs corpus (full set), nine
times its pages' text; its pages b, once per grow task, are 194 MB.

A pair is one row of the shuffle, not two (its window, then its seeds joined by Spark to its
candidate columns): the JVM's cost there is per row (docs/performance.md).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import NamedTuple

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
from ._shared import share
from ._tasks import slots
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
    s, c = _matched(seeds, candidates)
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
        **{name: candidates.column(name) if c is None else candidates.column(name).take(c) for name in CANDIDATE},
    }
    return pa.table(columns).cast(PAIR_REQUESTS)


def _matched(seeds: pa.Table, candidates: pa.Table) -> tuple[pa.Array, pa.Array | None]:
    """The rows of seeds and of candidates (None: all of them, in order) holding the same pairs,
    in the candidates' order. The candidates stage writes the two tables with the same pairs, the
    candidates sorted by (doc_a, doc_b): the seeds sorted so, the two line up, and the candidates'
    columns (their URLs among them) are taken as they are, not in the random order of a join
    (0.3 CPU-s of the driver's on the docs corpus). Anything else (an older run's tables, a
    check's) is joined, as Spark's inner join of them did."""
    keys = ["doc_a", "doc_b"]
    seed_a, seed_b = (seeds.column(k).to_numpy() for k in keys)
    cand_a, cand_b = (candidates.column(k).to_numpy() for k in keys)
    if len(seed_a) == len(cand_a):
        order = np.lexsort((seed_b, seed_a))
        if np.array_equal(seed_a[order], cand_a) and np.array_equal(seed_b[order], cand_b):
            return pa.array(order), None
    left = pa.table({**{k: seeds.column(k) for k in keys}, "s": pa.array(np.arange(seeds.num_rows))})
    right = pa.table({**{k: candidates.column(k) for k in keys}, "c": pa.array(np.arange(candidates.num_rows))})
    joined = left.join(right, keys, join_type="inner", use_threads=False)
    s, c = (pa.array(joined.column(name).to_numpy()) for name in ("s", "c"))
    return s, c


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


class SidesPlan(NamedTuple):
    """What file_sides' job needs made on the driver first (plan_sides): the documents' files,
    the staged folder, per file the name of its part of the pairs (and one more for the pairs
    whose b no file holds), the pages a (sorted ids), and the number of grow tasks."""

    files: list[str]
    staged: str
    names: list[str]
    firsts: np.ndarray
    buckets: int


def plan_sides(out: str, pairs: pa.Table, folder: str, cores: int) -> SidesPlan:
    """The SidesPlan of the PAIR_REQUESTS `pairs`, with `folder` the staged folder of their parts
    (the caller drops it when the stage is done). Reads the documents' metadata and writes the
    pairs' parts, no Spark: the passages stage makes it while a Spark job runs."""
    files = [f for name in ("documents", "indexed_documents") if table_meta(out, name) for f in parquet_files(out, name)]
    staged = stage_table(out, folder)
    pages = ok_pages(files)
    names = _split(pairs, pages, len(files), staged)
    seeded = pc.greater(pc.binary_length(pairs.column("seeds")), 0)
    firsts = distinct(pairs.column("doc_a").filter(seeded).to_numpy())
    return SidesPlan(files, staged, names, firsts, grow_tasks(pairs, pages, cores))


def file_sides(spark: SparkSession, out: str, plan: SidesPlan, cfg: RunConfig, shared, template, held: list) -> list[GrowFiles]:
    """GROW_ROWS from one task per Parquet file of the documents (the indexed ones too, in a
    check), for the pairs of `plan` (plan_sides): per pair whose page b the file holds, b's
    window (cut as the window pass cuts it, without its text) with the pair's seeds and
    candidate columns; the whole text of every page that is some pair's a (side -1); and in
    files of their own (PAGE_ROWS), the whole text of every page b, once for each grow task that
    has pairs of it. One more task hands on the pairs whose b no file holds as an ok page: their
    seeds alone (side 2).

    The rows go to the grow tasks through files, not a Spark shuffle: each task writes its rows
    for grow task g (by doc_a) to an Arrow IPC file of the plan's staged folder, and the grow
    task reads and sorts them (bucket_rows). Spark's shuffle converted, sorted and converted
    back every row, about 6 of the stage's JVM CPU-seconds on the docs corpus. Returns, per grow
    task, the files it reads. The a pages' ids travel to every task, shared, appended to `held`
    to be unpersisted."""
    files, staged, names, buckets = plan.files, plan.staged, plan.names, plan.buckets
    firsts = share(spark, plan.firsts, out)
    held.append(firsts)

    def sides_of(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                if i < len(files):
                    rows = _file_sides(files[i], names[i], firsts.value, cfg, shared.value, template.value, buckets)
                else:
                    rows = _seed_only(_read_requests(names[i]))
                yield _write_buckets(rows, staged, i, buckets)

    tasks = len(names)
    wrote = slots(spark, tasks).mapInArrow(sides_of, spark_schema(WROTE)).collect()
    per_task: list[GrowFiles] = [GrowFiles([], []) for _ in range(buckets)]
    for task, bucket, pages in sorted((r["task"], r["bucket"], r["pages"]) for r in wrote):
        (per_task[bucket].pages if pages else per_task[bucket].rows).append(_bucket_name(staged, task, bucket, pages))
    return per_task


class GrowFiles(NamedTuple):
    """A grow task's files from the window pass: its rows, and its pages b."""

    rows: list[str]
    pages: list[str]


#: What a window-pass task tells the driver: the grow tasks it wrote rows (or pages b) for.
WROTE = pa.schema([("task", pa.int64()), ("bucket", pa.int64()), ("pages", pa.bool_())])
#: A page b's row, for the grow task `task`: its text, once there however many pairs it is in.
PAGE_ROWS = pa.schema([("task", pa.int64()), ("doc_id", pa.int64()), ("text", pa.string())])
#: Bytes of rows a grow task is given at most, by the estimate below: held whole where the run
#: folder is not on local disk (locally its files are mapped, not read).
TASK_BYTES = 256 << 20
#: Rows a grow task takes at a time from its sorted rows (pair_chunks regroups them).
TAKE_ROWS = 4000


#: Bytes a grow task holds per character of its pages, by the estimate below (UTF-8 and the
#: windows' template intervals).
BYTES_PER_CHAR = 2
#: Grow tasks at most per core: past it, more tasks would hold the same pages b again.
MOST_TASKS_PER_CORE = 64


class OkPages(NamedTuple):
    """The ok pages of the documents files: their ids (sorted), the file that holds each, its
    text's characters."""

    ids: np.ndarray
    file: np.ndarray
    chars: np.ndarray

    def find(self, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each id's place in ids, and whether it is there."""
        at = np.minimum(np.searchsorted(self.ids, doc), max(len(self.ids) - 1, 0))
        return at, (self.ids[at] == doc) if len(self.ids) else np.zeros(len(doc), bool)


def ok_pages(files: list[str]) -> OkPages:
    """OkPages of these Parquet files of documents (their metadata columns only)."""
    ids, where, chars = [], [], []
    for i, name in enumerate(files):
        with storage.open_input(name) as fh:
            got = pq.ParquetFile(fh).read(columns=["doc_id", "status", "text_chars"])
        ok = pc.equal(got.column("status"), "ok")
        ids.append(got.column("doc_id").filter(ok).to_numpy())
        chars.append(got.column("text_chars").filter(ok).fill_null(0).to_numpy())
        where.append(np.full(len(ids[-1]), i, np.int64))
    cat = lambda parts: np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    held, in_file, size = cat(ids), cat(where), cat(chars)
    order = np.argsort(held, kind="stable")
    return OkPages(held[order], in_file[order], size[order])


def grow_tasks(pairs: pa.Table, pages: OkPages, cores: int) -> int:
    """How many grow tasks: two per core, more (doubling) while one would hold more than
    TASK_BYTES of pages: its pages b, each once, and its share of the pages a."""
    from ._exchange import spread

    doc_a, doc_b = pairs.column("doc_a").to_numpy(), pairs.column("doc_b").to_numpy()
    at, found = pages.find(doc_b)
    b_chars = np.where(found & (pairs.column("hi").to_numpy() >= 0), pages.chars[at] if len(pages.ids) else 0, 0)
    firsts = distinct(doc_a)
    at, found = pages.find(firsts)
    a_chars = int(np.where(found, pages.chars[at] if len(pages.ids) else 0, 0).sum())
    mixed = spread(doc_a)
    tasks = max(2 * cores, 1)
    while tasks < MOST_TASKS_PER_CORE * max(cores, 1):
        bucket = (mixed % np.uint64(tasks)).astype(np.int64)
        # each (task, page b) once: a stable sort keeps its first pair first (np.unique over
        # stacked columns sorts rows as opaque records, ten times slower)
        order = np.lexsort((doc_b, bucket))
        new = np.r_[True, (bucket[order][1:] != bucket[order][:-1]) | (doc_b[order][1:] != doc_b[order][:-1])]
        first = order[new] if len(doc_b) else np.zeros(0, np.int64)
        held = np.bincount(bucket[first], weights=b_chars[first], minlength=tasks).max() if len(first) else 0
        if BYTES_PER_CHAR * (held + a_chars / tasks) <= TASK_BYTES:
            break
        tasks *= 2
    return tasks


def _bucket_name(folder: str, task: int, bucket: int, pages: bool = False) -> str:
    return storage.child(folder, f"{'pages' if pages else 'rows'}-{task:05d}-{bucket:05d}.arrow")


def _write_buckets(rows: Iterator[pa.RecordBatch], folder: str, task: int, buckets: int) -> pa.RecordBatch:
    """Writes the GROW_ROWS for grow task g (spread(doc_a) mod buckets), and the PAGE_ROWS for
    it, to an Arrow IPC file each; WROTE rows of the files written."""
    from ._exchange import spread

    sinks: dict[tuple[int, bool], _Sink] = {}
    try:
        for batch in rows:
            pages = batch.schema.equals(PAGE_ROWS)
            if pages:
                bucket = batch.column("task").to_numpy()
                batch = batch.select(["doc_id", "text"])
            else:
                bucket = (spread(batch.column("doc_a").to_numpy()) % np.uint64(buckets)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
            for g in np.flatnonzero(np.diff(bounds)).tolist():
                if (g, pages) not in sinks:
                    sinks[(g, pages)] = _Sink(_bucket_name(folder, task, g, pages), batch.schema)
                sinks[(g, pages)].writer.write_batch(batch.take(pa.array(order[bounds[g] : bounds[g + 1]])))
        for sink in sinks.values():
            sink.close()
    except BaseException:
        for sink in sinks.values():
            sink.abort()
        raise
    written = sorted(sinks)
    columns = [[task] * len(written), [g for g, _ in written], [pages for _, pages in written]]
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, WROTE, strict=True)], schema=WROTE)


class _Sink:
    """An Arrow IPC file being written: on local disk straight to a temporary file renamed at
    the end (a gigabyte of rows on the docs corpus: a copy in memory first cost as much as the
    rest of the window pass), elsewhere in memory, then uploaded whole."""

    def __init__(self, name: str, schema: pa.Schema = GROW_ROWS) -> None:
        self.name = name
        if storage.is_local(name):
            self.tmp = f"{storage.locate(name)[1]}.tmp-{os.getpid()}"
            self.stream = pa.OSFile(self.tmp, "wb")
        else:
            self.tmp = ""
            self.stream = pa.BufferOutputStream()
        self.writer = pa.ipc.new_file(self.stream, schema)

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


class PagesB(NamedTuple):
    """A grow task's pages b, each once: their ids, texts, and the ids' sorted order."""

    ids: np.ndarray
    texts: pa.StringArray
    order: np.ndarray

    @classmethod
    def of(cls, ids: np.ndarray, texts: pa.StringArray) -> PagesB:
        return cls(ids, texts, np.argsort(ids, kind="stable"))

    def windows(
        self, doc_b: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> tuple[pa.StringArray, np.ndarray, np.ndarray, np.ndarray]:
        """batch_passages' pages_b for windows [lo, hi) (bytes) of these pages."""
        at = self.order[np.minimum(np.searchsorted(self.ids, doc_b, sorter=self.order), max(len(self.ids) - 1, 0))]
        if len(doc_b) and (not len(self.ids) or (self.ids[at] != doc_b).any()):
            raise ValueError("a pair's page b is not among its grow task's pages")
        return self.texts, at, lo, hi


class GrowingPages:
    """A Spark grow task's pages b as they come in its sorted rows (each before the first of its
    pairs there): one buffer, grown by doubling, so a window's page is found without copying
    the pages again for each chunk of pairs."""

    def __init__(self) -> None:
        self.data = np.zeros(1 << 16, np.uint8)
        self.bounds = np.zeros(1, np.int64)
        self.ids = np.zeros(0, np.int64)
        self.order = np.zeros(0, np.int64)

    def add(self, ids: np.ndarray, texts: pa.StringArray) -> None:
        """These pages b, their texts (UTF-8, none null)."""
        if not len(ids):
            return
        texts = texts.cast(pa.large_string())
        offsets = np.frombuffer(texts.buffers()[1], np.int64)[texts.offset : texts.offset + len(texts) + 1]
        values = np.frombuffer(texts.buffers()[2], np.uint8) if texts.buffers()[2] is not None else np.zeros(0, np.uint8)
        added = values[offsets[0] : offsets[-1]]
        end = int(self.bounds[-1])
        if end + len(added) > len(self.data):
            grown = np.zeros(max(2 * len(self.data), end + len(added)), np.uint8)
            grown[:end] = self.data[:end]
            self.data = grown
        self.data[end : end + len(added)] = added
        self.bounds = np.concatenate([self.bounds, end + offsets[1:] - offsets[0]])
        self.ids = np.concatenate([self.ids, np.asarray(ids, np.int64)])
        self.order = np.argsort(self.ids, kind="stable")

    def windows(self, doc_b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
        """batch_passages' pages_b for windows [lo, hi) (bytes) of these pages."""
        n = len(self.ids)
        at = (
            self.order[np.minimum(np.searchsorted(self.ids, doc_b, sorter=self.order), max(n - 1, 0))]
            if n
            else np.zeros(0, np.int64)
        )
        if len(doc_b) and (not n or (self.ids[at] != doc_b).any()):
            raise ValueError("a pair's page b is not among its grow task's pages")
        end = int(self.bounds[-1])
        pages = pa.LargeStringArray.from_buffers(n, pa.py_buffer(self.bounds), pa.py_buffer(self.data[:end]))
        return pages, at, lo, hi


def bucket_rows(files: GrowFiles) -> tuple[PagesB, Iterator[pa.RecordBatch]]:
    """A grow task's pages b, and its rows from the window pass's files, each document a's rows
    together and sorted by (doc_b, side), the documents a in order of their largest doc_b, then
    doc_a (by_partner). Local files are mapped; the pages are copied once, as they come."""
    pages = [t for t in (_read_ipc(name) for name in files.pages) if t.num_rows]
    held = pa.concat_tables(pages).combine_chunks() if pages else PAGE_ROWS.empty_table()
    found = PagesB.of(held.column("doc_id").to_numpy(), held.column("text").combine_chunks())
    tables = [t for t in (_read_ipc(name) for name in files.rows) if t.num_rows]
    if not tables:
        return found, iter(())
    # one copy into contiguous arrays: taking rows from many chunks cost 5 times as much
    table = pa.concat_tables(tables).combine_chunks()
    return found, _taken(table, by_partner(*(table.column(name).to_numpy() for name in ("doc_a", "doc_b", "side"))))


def by_partner(doc_a: np.ndarray, doc_b: np.ndarray, side: np.ndarray) -> np.ndarray:
    """The order of a grow task's rows: each document a's rows together, sorted by (doc_b, side),
    and the documents a in order of the largest doc_b among their rows, then of doc_a.

    Documents that copy one another pair up in cliques (a site's pages, a mirror's), and all
    members of one but its largest id have that id for their largest doc_b: their pairs come one
    after the other, and so do the same pages b, which the passages kernel then cuts into units
    once for them (analysis.batchspans, B_CACHE_UNITS) where it cut every pair's window of b on its own.
    On the docs corpus, the pages b cut: 679 MB of windows before, 378 MB of pages after."""
    if not len(doc_a):
        return np.zeros(0, np.int64)
    order = np.lexsort((doc_b, doc_a))
    a, b = doc_a[order], doc_b[order]
    starts = np.flatnonzero(np.r_[True, a[1:] != a[:-1]])
    largest = np.maximum.reduceat(b, starts)  # rows are sorted by doc_b within a document
    partner = np.repeat(largest, np.diff(np.r_[starts, len(a)]))
    return order[np.lexsort((side[order], b, a, partner))]


def _taken(table: pa.Table, order: np.ndarray) -> Iterator[pa.RecordBatch]:
    for first in range(0, len(order), TAKE_ROWS):
        yield from table.take(pa.array(order[first : first + TAKE_ROWS])).to_batches()


def _read_ipc(name: str) -> pa.Table:
    if storage.is_local(name):
        return pa.ipc.open_file(pa.memory_map(storage.locate(name)[1])).read_all()
    return _read_requests(name)


def _split(pairs: pa.Table, pages: OkPages, files: int, folder: str) -> list[str]:
    """Writes the pairs whose page b file i holds (as an ok page) to part i of `folder`, sorted
    by (doc_b, doc_a), and the others (no such page, or no seeds) to part `files`; the parts'
    names."""
    doc_b = pairs.column("doc_b").to_numpy()
    at, found = pages.find(doc_b)
    found &= pairs.column("hi").to_numpy() >= 0
    part = np.where(found, pages.file[at] if len(pages.ids) else 0, files)
    order = np.lexsort((pairs.column("doc_a").to_numpy(), doc_b, part))
    bounds = np.searchsorted(part[order], np.arange(files + 2))
    names = []
    for i in range(files + 1):
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
    name: str,
    requests_name: str,
    firsts: np.ndarray,
    cfg: RunConfig,
    boilerplate: np.ndarray,
    template: np.ndarray,
    buckets: int,
) -> Iterator[pa.RecordBatch]:
    from ._exchange import spread

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
            # each page b once for each grow task that has pairs of it
            page = np.repeat(rows, hi[rows] - lo[rows])
            bucket = (spread(fields["doc_a"][index]) % np.uint64(buckets)).astype(np.int64)
            pair = np.unique(page * buckets + bucket)  # each (page, task) once, by page then task
            page, bucket = pair // buckets, pair % buckets
            yield pa.RecordBatch.from_arrays(
                [pa.array(bucket), ok.column("doc_id").take(pa.array(page)), ok.column("text").take(pa.array(page))],
                schema=PAGE_ROWS,
            )
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
                texts=False,
            ):
                mine = index[done : done + windows.num_rows]
                done += windows.num_rows
                yield pa.RecordBatch.from_arrays([*windows.columns, *_carried(requests, mine)], schema=GROW_ROWS)
