"""Shuffles whose rows never become Spark rows.

A Python task packs its rows for each target partition into Arrow IPC blobs; Spark moves the
blobs, a row each, to their partition (`repartitionById`); the receiving Python task unpacks
them. In a local run, a job of Python tasks (stages._tasks.TaskRows) moves them through files
instead: each task writes its blobs into one file of the folder Spark gives its workers, and
each receiving task maps its blobs from those files, so the JVM moves no byte of them. The JVM copies bytes instead of converting every row from Arrow and back and sorting it:
on the docs corpus the seeds' shuffle by pair (2.8 M rows) cost the JVM 5.6 CPU-seconds, most
of the candidates stage. The receiving task gets its partition's rows in no particular order
and sorts them itself, so a partition must fit in a worker's memory: the stage chooses the
number of partitions from a bound on the rows it moves (`partitions_for`), and takes Spark's
sorted shuffle when that number is past what Spark tracks well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from ._frames import Ranking, sort_table

#: A blob row: the partition it goes to and an Arrow IPC stream of rows.
BLOBS = pa.schema([pa.field("part", pa.int32(), nullable=False), pa.field("blob", pa.binary(), nullable=False)])
#: A producing task gathers about this many bytes of rows before it cuts them into blobs: one
#: sort by partition and one blob per partition for each gathering.
GATHER_BYTES = 32 << 20
#: A batch of blob rows is cut past this many bytes (a blob of one batch of rows may be larger).
BATCH_BYTES = 256 << 20
#: One thread: a task is one of a core's tasks.
_WRITE = pa.ipc.IpcWriteOptions(use_threads=False)
#: Bytes of rows a partition is sized for: the receiving task holds them all.
PARTITION_BYTES = 256 << 20
#: ... and at most this many partitions (as for Spark's own shuffles: _session.size_shuffles).
MAX_PARTITIONS = 20_000


def partitions_for(row_bytes: int, rows: int, least: int) -> int | None:
    """Partitions for a blob shuffle of about `rows` rows of `row_bytes` each: at least `least`
    (the session's shuffle partitions), and enough that none holds more than PARTITION_BYTES
    when the rows spread evenly; None when that takes more than MAX_PARTITIONS. The stage then
    takes Spark's sorted shuffle, whose sort spills to disk and whose Python tasks hold a chunk
    at a time (a snapshot's fingerprints: 25 TB)."""
    needed = max(1, least, -(-row_bytes * rows // PARTITION_BYTES))
    return needed if needed <= MAX_PARTITIONS else None


def spread(*keys: np.ndarray) -> np.ndarray:
    """A well-mixed 64-bit value of int64 key columns (splitmix64's finalizer over their
    combination): partitions taken modulo it are even whatever the keys' own distribution."""
    mixed = np.zeros(len(keys[0]), np.uint64)
    with np.errstate(over="ignore"):
        for key in keys:
            mixed = (mixed ^ key.astype(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
            mixed ^= mixed >> np.uint64(31)
        mixed ^= mixed >> np.uint64(30)
        mixed *= np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(27)
        mixed *= np.uint64(0x94D049BB133111EB)
        mixed ^= mixed >> np.uint64(31)
    return mixed


def packed(
    batches: Iterable[pa.RecordBatch], part_of: Callable[[pa.RecordBatch], np.ndarray], parts: int
) -> Iterator[pa.RecordBatch]:
    """BLOBS rows holding every row of `batches`: each row in a blob for partition
    part_of(batch)[row] % parts."""
    held: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        held.append(batch)
        size += batch.nbytes
        if size >= GATHER_BYTES:
            yield from _cut(held, part_of, parts)
            held, size = [], 0
    if held:
        yield from _cut(held, part_of, parts)


def _cut(held: list[pa.RecordBatch], part_of, parts: int) -> Iterator[pa.RecordBatch]:
    batch = pa.Table.from_batches(held).combine_chunks().to_batches()[0]
    part = (np.asarray(part_of(batch)).astype(np.uint64) % np.uint64(parts)).astype(np.int64)
    # NumPy's stable sort is a radix sort for 16-bit keys, a merge sort for wider ones: 15 against
    # 100 ms for a million rows over 200 partitions (MAX_PARTITIONS fits in 16 bits)
    order = np.argsort(part.astype(np.uint16) if parts <= 1 << 16 else part, kind="stable")
    part = part[order]
    starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
    ends = np.r_[starts[1:], len(part)]
    ordered = batch.take(pa.array(order))
    slices = list(zip(starts.tolist(), ends.tolist(), strict=True))
    # Each blob's size first, counted without writing, then the blobs written into one buffer
    # of their size: a growing output stream reallocated and faulted in fresh memory as it grew,
    # 0.3-0.5 CPU-s per million seed rows, ten times the writing itself.
    sizes = np.diff([0, *_streams(pa.MockOutputStream(), ordered, slices)]).tolist()
    first = 0
    while first < len(slices):
        last, total = first + 1, sizes[first]
        while last < len(slices) and total < BATCH_BYTES:  # binary offsets are 32-bit: a batch stays small
            total += sizes[last]
            last += 1
        data = pa.allocate_buffer(total)
        sink = pa.FixedSizeBufferWriter(data)
        offsets = [0, *_streams(sink, ordered, slices[first:last])]
        sink.close()
        blobs = pa.Array.from_buffers(pa.binary(), last - first, [None, pa.py_buffer(np.asarray(offsets, np.int32)), data])
        ids = pa.array(part[starts[first:last]].astype(np.int32), pa.int32())
        yield pa.RecordBatch.from_arrays([ids, blobs], schema=BLOBS)
        first = last


def _streams(sink, batch: pa.RecordBatch, slices: list[tuple[int, int]]) -> list[int]:
    """An Arrow IPC stream of each slice [lo, hi) of batch's rows, one after the other into sink;
    where each ends."""
    ends = []
    for lo, hi in slices:
        with pa.ipc.new_stream(sink, batch.schema, options=_WRITE) as writer:
            writer.write_batch(batch.slice(lo, hi - lo))
        ends.append(sink.tell())
    return ends


def unpacked(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The rows of BLOBS batches, as the batches packed into them."""
    for batch in batches:
        for blob in batch.column("blob"):
            yield from pa.ipc.open_stream(blob.as_buffer())


def sorted_partition(batches: Iterable[pa.RecordBatch], order, ranked: Ranking | None = None) -> list[pa.RecordBatch]:
    """A receiving task's rows, which come in any order, sorted on the columns of `order`. The
    partition is held whole; the unpacked batches are let go once copied into one table, so the
    peak is about twice the partition, not three times."""
    held = [b for b in batches if b.num_rows]
    if not held:
        return []
    table = pa.Table.from_batches(held).combine_chunks()
    held.clear()
    return sort_table(table, order, ranked).to_batches()


def exchanged(frame, parts: int):
    """A frame of BLOBS rows moved to their partitions: Spark's `repartitionById`, or for the
    rows of an RDD job (stages._tasks.TaskRows) a shuffle of its records, a blob each."""
    from ._tasks import TaskRows

    if isinstance(frame, TaskRows):
        return frame.exchanged(parts)
    return frame.repartitionById(parts, "part")
