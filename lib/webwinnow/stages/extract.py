"""The extract stage: crawl files → `documents` and `ledger`.

One Spark task per group of whole files (never one record per task): the groups are fixed on
the driver from the sorted input list, and task i reads group i, so a retried task redoes
exactly the same files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..config import RunConfig
from ..crawl.inputs import InputFile, group_inputs, is_crawl_file, is_item_file
from ..crawl.items import item_rows
from ..crawl.records import file_rows, rows_to_batches
from ..errors import TooManyFailures
from ..outputs.parts import PartWriter
from ..outputs.tables import drop_staged, finish_table, stage_table
from . import StageContext
from ._beacon import ReadCounters, Sender
from ._faults import injected_stages, maybe_fail
from ._frames import read_table, spark_schema
from ._session import default_parallelism

#: What each task tells the driver: its group's counts (the rows themselves it wrote as Parquet).
TASK_COUNTS = ("files", "records", "parsed", "skipped", "failed", "flagged", "failed_files")
FINGERPRINT_COUNTS = ("documents", "fingerprints", "kgrams", "norm_chars")
_TASK_SCHEMA = pa.schema([("group", pa.int64()), *((name, pa.int64()) for name in TASK_COUNTS + FINGERPRINT_COUNTS)])


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

    progress: optional ReadCounters: accumulators that tasks add to as they finish files, and
    the driver's beacon they report to as they read (stages._beacon).
    """
    # Small inputs still spread over every core: aim for two tasks per core, never above task_bytes.
    total = sum(max(f.size, 0) for f in inputs)
    target = max(1, min(cfg.extract.task_bytes, -(-total // (2 * default_parallelism(spark)))))
    groups = [[(f.path, max(f.size, 0)) for f in g] for g in group_inputs(inputs, target, cfg.extract.max_files_per_task)]
    extract_cfg, winnow = cfg.extract, cfg.winnow
    code = winnow.unit == "code"  # documents hold their pages' code blocks
    inject = injected_stages(spark)
    progress = progress or ReadCounters(None, None, None)

    def read_groups(batches):
        for batch in batches:
            maybe_fail("extract", inject)
            if "fingerprints" in folders:
                maybe_fail("fingerprint", inject)
            for group, paths, sizes in zip(
                batch.column("group").to_pylist(), batch.column("paths").to_pylist(), batch.column("sizes").to_pylist()
            ):
                reading = _Reading(progress, Sender(progress.address, str(group)))
                parts = _Parts(folders, group, winnow)
                try:
                    for path, size in zip(paths, sizes):
                        items = is_item_file(path) and not is_crawl_file(path)
                        rows = (
                            item_rows(path, extract_cfg.text_column, extract_cfg.id_column, extract_cfg.max_decoded_bytes)
                            if items
                            else file_rows(path, extract_cfg, code)
                        )
                        for rows_batch in rows_to_batches(reading.rows(rows, size, offsets=not items)):
                            parts.write(rows_batch)
                    parts.close()
                except BaseException:
                    parts.abort()
                    raise
                yield parts.counts_batch()

    counts = task_list(spark, groups).mapInArrow(read_groups, spark_schema(_TASK_SCHEMA)).collect()
    sums = {name: sum(row[name] or 0 for row in counts) for name in TASK_COUNTS + FINGERPRINT_COUNTS}
    return sums, len(groups)


class _Parts:
    """A task's part of each staged table, and its counts: the rows of EXTRACT_ROWS batches split
    into ledger and documents, and the ok documents' texts fingerprinted (when fingerprints are staged)."""

    def __init__(self, folders: dict[str, str], group: int, winnow) -> None:
        self.writers = {t: PartWriter(folder, group, schemas.TABLE_SCHEMAS[t]) for t, folder in folders.items()}
        self.group, self.winnow = group, winnow
        self.counts = dict.fromkeys(TASK_COUNTS + FINGERPRINT_COUNTS, 0)

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

    def counts_batch(self) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist([{"group": self.group, **self.counts}], schema=_TASK_SCHEMA)


def _project(rows: pa.RecordBatch, schema: pa.Schema, mapping: list[tuple[str, str]]) -> pa.RecordBatch:
    """A table's columns of a batch, by (output column, batch column)."""
    return pa.RecordBatch.from_arrays([rows.column(src) for _, src in mapping], schema=schema)


def task_list(spark: SparkSession, groups: list[list[tuple[str, int]]]) -> DataFrame:
    """The extract stage's tasks as data: one row and one partition per group of input files
    (group, paths, sizes), so the plan, the UI and `.show()` say which task reads what."""
    rows = [(gid, [p for p, _ in g], [size for _, size in g]) for gid, g in enumerate(groups)]
    listed = spark.createDataFrame(rows, "group long, paths array<string>, sizes array<long>")
    # Without RDDs (Spark Connect has none): a range of n ids in n partitions holds one id in each,
    # and the groups, joined to it by broadcast, keep its partitioning: one task per group.
    slots = spark.range(0, len(rows), 1, max(1, len(rows))).select(F.col("id").alias("group"))
    return slots.join(F.broadcast(listed), "group")


class _Reading:
    """A task's reading of its files, told as it goes: each file's bytes and records to the
    accumulators at its end; the task's bytes so far (files done, and the current one up to its
    latest record's offset) and records to the driver's beacon while it reads."""

    def __init__(self, counters: ReadCounters, sender: Sender) -> None:
        self.counters, self.sender = counters, sender
        self.done_bytes = self.records = 0

    def rows(self, rows, size: int, offsets: bool):
        for row in rows:
            if row.get("kind") == "file":
                if self.counters.bytes is not None:
                    self.counters.bytes.add(size)
                    self.counters.records.add(row["records_seen"])
                self.done_bytes += size
                self.sender.send(self.done_bytes, self.records, force=True)
            else:
                self.records += 1
                at = min(row.get("offset") or 0, size) if offsets else 0  # an item's offset is its line
                self.sender.send(self.done_bytes + at, self.records)
            yield row


def run(ctx: StageContext) -> dict:
    spark, inputs, cfg, out = ctx.spark, list(ctx.inputs), ctx.cfg, ctx.out
    # The command fingerprints next: the texts are winnowed as they are read, and the fingerprint
    # stage publishes what the tasks wrote (ctx.handoff) instead of reading every text back.
    fuse = "fingerprint" in ctx.later
    tables = ("ledger", "documents", *(("fingerprints", "doc_stats") if fuse else ()))
    folders = {t: stage_table(out, t) for t in tables}
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
