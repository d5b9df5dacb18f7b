"""The extract stage: crawl files → `documents` and `ledger`.

One Spark task per group of whole files (never one record per task): the groups are fixed on
the driver from the sorted input list, and task i reads group i, so a retried task redoes
exactly the same files.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..config import RunConfig
from ..crawl.framing import Piece, pieces_join
from ..crawl.inputs import InputFile, group_inputs, is_crawl_file, is_item_file
from ..crawl.items import item_rows
from ..crawl.records import file_rows, rows_to_batches, settle_status
from ..errors import TooManyFailures
from ..outputs.parts import PartWriter, part_name
from ..outputs.tables import drop_staged, finish_table, stage_table
from . import StageContext
from ._beacon import ReadCounters, Sender
from ._faults import injected_stages, maybe_fail
from ._frames import read_table, spark_schema
from ._session import default_parallelism
from ._tasks import task_rows
from .fingerprint import TEXT_KEY_ROWS, TEXT_KEYS

#: What each task tells the driver: its group's counts (the rows themselves it wrote as Parquet).
TASK_COUNTS = ("files", "records", "parsed", "skipped", "failed", "flagged", "failed_files")
FINGERPRINT_COUNTS = ("documents", "fingerprints", "kgrams", "norm_chars")
_TASK_SCHEMA = pa.schema(
    [("group", pa.int64()), *((name, pa.int64()) for name in TASK_COUNTS + FINGERPRINT_COUNTS), ("piece", pa.string())]
)
#: A task list's columns: a group of files, or one piece of one file (stop -1: the whole file).
_TASK_COLUMNS = ("group", "paths", "sizes", "starts", "stops")
_TASK_LIST = pa.schema(
    [("group", pa.int64()), ("paths", pa.list_(pa.string())), *((c, pa.list_(pa.int64())) for c in _TASK_COLUMNS[2:])]
)


@dataclass(frozen=True)
class ExtractResult:
    files: int
    tasks: int
    records: int
    parsed: int
    skipped: int
    failed: int
    flagged: int
    failed_files: int


def read_crawl(
    spark: SparkSession, inputs: list[InputFile], cfg: RunConfig, folders: dict[str, str], progress=None
) -> tuple[dict[str, int], int]:
    """Read the inputs in tasks that write the tables of `folders` (staged: outputs.tables.stage_table)
    themselves: ledger and documents, and fingerprints and doc_stats when those are staged too (the
    command fingerprints next: each text is winnowed where it is read, never written and read back).
    Returns the tasks' counts summed, and the number of tasks.

    A gzipped WARC file larger than a task's share is read in pieces, one task each (a file of
    10^5 records was one task and two thirds of the stage): the pieces' ledger rows of the file
    are joined into one here, and a file whose pieces do not join up (damage at a boundary) is
    read again whole, its pieces' parts removed.

    progress: optional ReadCounters: accumulators that tasks add to as they finish files, and
    the driver's beacon they report to as they read (stages._beacon).
    """
    # Small inputs still spread over every core: aim for two tasks per core, never above task_bytes.
    total = sum(max(f.size, 0) for f in inputs)
    target = max(1, min(cfg.extract.task_bytes, -(-total // (2 * default_parallelism(spark)))))
    split = cfg.extract.split_bytes or max(target, MIN_SPLIT_BYTES)
    whole = [f for f in inputs if not _splits(f, split)]
    groups = [[(f.path, max(f.size, 0), 0, -1) for f in g] for g in group_inputs(whole, target, cfg.extract.max_files_per_task)]
    pieces: dict[int, tuple[str, int, int]] = {}  # group id -> (file, piece index, file size)
    for f in inputs:
        if _splits(f, split):
            n = -(-f.size // split)
            bounds = [f.size * i // n for i in range(n + 1)]
            for i in range(n):
                pieces[len(groups)] = (f.path, i, f.size)
                groups.append([(f.path, bounds[i + 1] - bounds[i], bounds[i], bounds[i + 1])])
    rows = _read(spark, groups, cfg, folders, progress)
    sums = {name: sum(row[name] or 0 for row in rows) for name in TASK_COUNTS + FINGERPRINT_COUNTS}
    tasks = len(groups)
    if pieces:
        joined, again = join_pieces({r["group"]: r["piece"] for r in rows if r["piece"]}, pieces)
        for r in rows:
            if r["piece"] and pieces[r["group"]][0] in again:
                for folder in _part_folders(folders):  # this piece's rows are read again, whole
                    storage.delete_file(storage.child(folder, part_name(r["group"])))
                for name in TASK_COUNTS + FINGERPRINT_COUNTS:
                    sums[name] -= r[name] or 0
        if joined:
            _write_file_rows(folders["ledger"], tasks, joined, sums)
        if again:
            redo = [[(path, size, 0, -1)] for path, size in sorted(again.items())]
            for r in _read(spark, redo, cfg, folders, progress, first_group=tasks + 1):
                for name in TASK_COUNTS + FINGERPRINT_COUNTS:
                    sums[name] += r[name] or 0
            tasks += len(redo)
    return sums, tasks


def _part_folders(folders: dict[str, str]) -> list[str]:
    """Where a task writes its parts: the staged tables' folders, and doc_stats' text keys."""
    return [*folders.values(), *([storage.child(folders["doc_stats"], TEXT_KEYS)] if "doc_stats" in folders else [])]


#: A gzipped WARC file is read in pieces when larger than a task's share of the input, and
#: never in pieces smaller than this (`extract.split_bytes` sets the size itself).
MIN_SPLIT_BYTES = 64 << 20


def _splits(f: InputFile, split: int) -> bool:
    """Whether a file is read in pieces: a gzipped WARC (members start records; an ARC file's
    first record says how the others are laid out) larger than `split`."""
    return f.size > split and f.path.lower().endswith(".warc.gz") and is_crawl_file(f.path)


def _read(spark: SparkSession, groups: list, cfg: RunConfig, folders: dict[str, str], progress, first_group: int = 0) -> list:
    """One task per group of (path, size, start, stop) (stop -1: the whole file); the tasks' rows
    of counts (_TASK_SCHEMA)."""
    extract_cfg, winnow = cfg.extract, cfg.winnow
    code = winnow.unit == "code"  # documents hold their pages' code blocks
    inject = injected_stages(spark)
    progress = progress or ReadCounters(None, None, None)

    def read_groups(batches):
        for batch in batches:
            maybe_fail("extract", inject)
            if "fingerprints" in folders:
                maybe_fail("fingerprint", inject)
            for group, paths, sizes, starts, stops in zip(*(batch.column(c).to_pylist() for c in _TASK_COLUMNS)):
                reading = _Reading(progress, Sender(progress.address, str(group)))
                parts = _Parts(folders, group, winnow)
                try:
                    for path, size, start, stop in zip(paths, sizes, starts, stops):
                        items = is_item_file(path) and not is_crawl_file(path)
                        piece = Piece(start, stop) if stop >= 0 else None
                        rows = (
                            item_rows(path, extract_cfg.text_column, extract_cfg.id_column, extract_cfg.max_decoded_bytes)
                            if items
                            else file_rows(path, extract_cfg, code, piece)
                        )
                        rows = reading.rows(rows, size, offsets=not items, base=start)
                        if piece is not None:
                            rows = parts.piece_rows(rows, piece)
                        for rows_batch in rows_to_batches(rows):
                            parts.write(rows_batch)
                    parts.close()
                except BaseException:
                    parts.abort()
                    raise
                yield parts.counts_batch()

    return task_list(spark, groups, first_group).mapInArrow(read_groups, spark_schema(_TASK_SCHEMA)).collect()


def join_pieces(found: dict[int, str], pieces: dict[int, tuple[str, int, int]]) -> tuple[dict[str, dict], dict[str, int]]:
    """The ledger row of each file read in pieces, from its pieces' rows (found: group -> the
    piece's file row as JSON, with where it began and where it left off); and the files whose
    pieces do not join (path -> size), to be read again whole: a piece that failed, or one
    that did not begin where the one before it left off (damage at the boundary)."""
    by_file: dict[str, list[dict]] = {}
    sizes: dict[str, int] = {}
    for group, (path, _, size) in sorted(pieces.items(), key=lambda kv: kv[1]):
        by_file.setdefault(path, []).append(json.loads(found[group]))
        sizes[path] = size
    joined: dict[str, dict] = {}
    again: dict[str, int] = {}
    for path, rows in by_file.items():
        size = sizes[path]
        read = [Piece(r["start"], r["stop"], r["first"], r["next"]) for r in rows]
        if not pieces_join(read, size) or any(r["status"] != "read_ok" for r in rows):
            again[path] = size
            continue
        row = {k: rows[0][k] for k in ("table", "kind", "file", "status", "reason", "detail")}
        for name in ("records_seen", "parsed", "skipped", "failed", "flagged"):
            row[name] = sum(r[name] for r in rows)
        row["status"], row["reason"] = settle_status(path, "read_ok", None, row["records_seen"], row["failed"])
        joined[path] = row
    return joined, again


def _write_file_rows(ledger: str, task: int, joined: dict[str, dict], sums: dict[str, int]) -> None:
    """The joined files' ledger rows, as one more part of the staged ledger; their counts added."""
    writer = PartWriter(ledger, task, schemas.LEDGER)
    for batch in rows_to_batches(iter([joined[path] for path in sorted(joined)])):
        writer.write(_project(batch, schemas.LEDGER, schemas.LEDGER_FROM_ROWS))
    writer.close()
    for row in joined.values():
        sums["files"] += 1
        sums["failed_files"] += row["status"] == "failed"
        sums["records"] += row["records_seen"]
        for name in ("parsed", "skipped", "failed", "flagged"):
            sums[name] += row[name]


class _Parts:
    """A task's part of each staged table, and its counts: the rows of EXTRACT_ROWS batches split
    into ledger and documents, and the ok documents' texts fingerprinted (when fingerprints are staged)."""

    def __init__(self, folders: dict[str, str], group: int, winnow) -> None:
        self.writers = {t: PartWriter(folder, group, schemas.TABLE_SCHEMAS[t]) for t, folder in folders.items()}
        if "doc_stats" in folders:
            self.writers[TEXT_KEYS] = PartWriter(storage.child(folders["doc_stats"], TEXT_KEYS), group, TEXT_KEY_ROWS)
        self.group, self.winnow = group, winnow
        self.counts = dict.fromkeys(TASK_COUNTS + FINGERPRINT_COUNTS, 0)
        self.piece: str | None = None

    def write(self, rows: pa.RecordBatch) -> None:
        table = rows.column("table")
        ledger = _project(rows.filter(pc.equal(table, "ledger")), schemas.LEDGER, schemas.LEDGER_FROM_ROWS)
        documents = _project(rows.filter(pc.equal(table, "documents")), schemas.DOCUMENTS, schemas.DOCUMENTS_FROM_ROWS)
        self.writers["ledger"].write(ledger)
        self.writers["documents"].write(documents)
        files = ledger.filter(pc.equal(ledger.column("kind"), "file"))
        self.counts["files"] += files.num_rows
        self.counts["failed_files"] += pc.sum(pc.equal(files.column("status"), "failed")).as_py() or 0
        for name, column in (("records", "records_seen"), *((n, n) for n in ("parsed", "skipped", "failed", "flagged"))):
            self.counts[name] += pc.sum(files.column(column)).as_py() or 0
        if "fingerprints" in self.writers:
            self._fingerprint(documents.filter(pc.equal(documents.column("status"), "ok")))

    def _fingerprint(self, ok: pa.RecordBatch) -> None:
        from ..core.winnowing import text_keys
        from .fingerprint import fingerprint_arrow

        if not ok.num_rows:
            return
        w = self.winnow
        texts = pa.RecordBatch.from_arrays([ok.column("doc_id"), ok.column("text")], names=["doc_id", "text"])
        rows = fingerprint_arrow(texts, w.k, w.w, w.robust, w.mod_p, w.unit, w.lexer)
        selected = pc.greater_equal(rows.column("pos"), 0)
        fps = rows.filter(selected)
        stats = rows.filter(pc.invert(selected))
        self.writers["fingerprints"].write(_project(fps, schemas.FINGERPRINTS, [(n, n) for n in schemas.FINGERPRINTS.names]))
        self.writers["doc_stats"].write(_project(stats, schemas.DOC_STATS, [(n, n) for n in schemas.DOC_STATS.names]))
        keys, lengths = text_keys(ok.column("text"))
        kept = np.flatnonzero(lengths > 0)
        ids = ok.column("doc_id").to_numpy(zero_copy_only=False)
        self.writers[TEXT_KEYS].write(
            pa.RecordBatch.from_arrays([pa.array(ids[kept]), pa.array(keys[kept])], schema=TEXT_KEY_ROWS)
        )
        self.counts["documents"] += stats.num_rows
        self.counts["fingerprints"] += fps.num_rows
        self.counts["kgrams"] += pc.sum(stats.column("kgrams")).as_py() or 0
        self.counts["norm_chars"] += pc.sum(stats.column("norm_chars")).as_py() or 0

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()

    def piece_rows(self, rows, piece: Piece):
        """The rows of a piece of a file, less its file row: kept for the driver, which joins
        the pieces' rows into the file's (join_pieces), with where the piece began and left off."""
        for row in rows:
            if row.get("kind") == "file":
                self.piece = json.dumps(
                    {**row, "start": piece.start, "stop": piece.stop, "first": piece.first, "next": piece.next}
                )
                continue
            yield row

    def counts_batch(self) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist([{"group": self.group, **self.counts, "piece": self.piece}], schema=_TASK_SCHEMA)


def _project(rows: pa.RecordBatch, schema: pa.Schema, mapping: list[tuple[str, str]]) -> pa.RecordBatch:
    """A table's columns of a batch, by (output column, batch column)."""
    return pa.RecordBatch.from_arrays([rows.column(src) for _, src in mapping], schema=schema)


def task_list(spark: SparkSession, groups: list[list[tuple]], first_group: int = 0, dataframe: bool = False):
    """The extract stage's tasks as data: one row and one partition per group of input files
    (group, paths, sizes, starts, stops), so the plan, the UI and `.show()` say which task reads
    what. A group is of (path, size) or (path, size, start, stop): a piece of a file. An RDD
    job's rows (stages._tasks) where the session has RDDs, else (or when `dataframe`) Spark's."""
    whole = (0, -1)  # start, stop of a file read whole
    full = [[(*x, *whole[len(x) - 2 :]) for x in g] for g in groups]
    rows = [(first_group + gid, *([x[i] for x in g] for i in range(4))) for gid, g in enumerate(full)]
    table = pa.Table.from_pylist([dict(zip(_TASK_COLUMNS, r)) for r in rows], schema=_TASK_LIST)
    tasks = None if dataframe else task_rows(spark, table)
    if tasks is not None:
        return tasks
    # from Arrow: a classic session then builds the rows in the JVM, where a list of tuples starts
    # Python workers for a job of its own
    listed = spark.createDataFrame(table)
    # Without RDDs (Spark Connect has none): a range of n ids in n partitions holds one id in each,
    # and the groups, joined to it by broadcast, keep its partitioning: one task per group.
    slots = spark.range(first_group, first_group + len(rows), 1, max(1, len(rows))).select(F.col("id").alias("group"))
    return slots.join(F.broadcast(listed), "group")


class _Reading:
    """A task's reading of its files, told as it goes: each file's bytes and records to the
    accumulators at its end; the task's bytes so far (files done, and the current one up to its
    latest record's offset) and records to the driver's beacon while it reads."""

    def __init__(self, counters: ReadCounters, sender: Sender) -> None:
        self.counters, self.sender = counters, sender
        self.done_bytes = self.records = 0

    def rows(self, rows, size: int, offsets: bool, base: int = 0):
        for row in rows:
            if row.get("kind") == "file":
                if self.counters.bytes is not None:
                    self.counters.bytes.add(size)
                    self.counters.records.add(row["records_seen"])
                self.done_bytes += size
                self.sender.send(self.done_bytes, self.records, force=True)
            else:
                self.records += 1
                at = min(max((row.get("offset") or 0) - base, 0), size) if offsets else 0  # an item's offset is its line
                self.sender.send(self.done_bytes + at, self.records)
            yield row


def run(ctx: StageContext) -> dict:
    spark, inputs, cfg, out = ctx.spark, list(ctx.inputs), ctx.cfg, ctx.out
    # The command fingerprints next: the texts are winnowed as they are read, and the fingerprint
    # stage publishes what the tasks wrote (ctx.handoff) instead of reading every text back.
    fuse = "fingerprint" in ctx.later
    tables = ("ledger", "documents", *(("fingerprints", "doc_stats") if fuse else ()))
    folders = {t: stage_table(out, t) for t in tables}
    for folder in _part_folders(folders)[len(folders) :]:
        fs, path = storage.locate(folder)
        fs.create_dir(path, recursive=True)
    try:
        sums, tasks = read_crawl(spark, inputs, cfg, folders, ctx.progress)
    except BaseException:
        for t in tables:
            drop_staged(out, t)
        raise
    result = ExtractResult(tasks=tasks, **{name: sums[name] for name in TASK_COUNTS})
    inputs_meta = {"inputs": [f.path for f in inputs], "tasks": tasks}
    # The ledger first: it decides whether the documents may be published at all.
    finish_table(out, "ledger", cfg, "extract", inputs_meta)
    if result.files and result.failed_files / result.files > cfg.extract.max_failed_ratio:
        for t in tables[2:] + ("documents",):
            drop_staged(out, t)
        raise TooManyFailures(_failure_message(spark, out, result, cfg.extract.max_failed_ratio))
    finish_table(out, "documents", cfg, "extract", inputs_meta)
    if fuse:
        ctx.handoff["fingerprints"] = {
            "tables": ["fingerprints", "doc_stats"],
            "text_keys": storage.child(folders["doc_stats"], TEXT_KEYS),
            "winnow": cfg.winnow.identity(),
            "stats": {name: sums[name] for name in FINGERPRINT_COUNTS},
        }
    return asdict(result)


def _failure_message(spark: SparkSession, out: str, result: ExtractResult, ratio: float, shown: int = 20) -> str:
    failed = (
        read_table(spark, out, "ledger")
        .filter((F.col("kind") == "file") & (F.col("status") == "failed"))
        .orderBy("file")
        .select("file", "reason", "detail")
        .limit(shown)
        .collect()
    )
    lines = [
        f"{result.failed_files} of {result.files} input files failed ({result.failed_files / result.files:.0%}, "
        f"more than extract.max_failed_ratio = {ratio:.0%}); documents were not written. Failed files:"
    ]
    lines += [f"  {r['file']}: {r['reason']}" + (f" ({r['detail']})" if r["detail"] else "") for r in failed]
    if result.failed_files > shown:
        lines.append(f"  ... and {result.failed_files - shown} more: see {out}/ledger (kind = 'file', status = 'failed')")
    lines.append("Check the paths and file formats, or raise --max-failed-ratio to accept the losses.")
    return "\n".join(lines)
