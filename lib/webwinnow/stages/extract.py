"""The extract stage: crawl files → `documents` and `ledger`.

One Spark task per group of whole files (never one record per task): the groups are fixed on
the driver from the sorted input list, and task i reads group i, so a retried task redoes
exactly the same files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..config import RunConfig
from ..crawl.inputs import InputFile, group_inputs, is_crawl_file, is_item_file
from ..crawl.items import item_rows
from ..crawl.records import file_rows, rows_to_batches
from ..errors import TooManyFailures
from ..outputs.tables import write_table
from . import StageContext
from ._beacon import ReadCounters, Sender
from ._faults import injected_stages, maybe_fail
from ._frames import read_table, spark_schema


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


def extract_rows(spark: SparkSession, inputs: list[InputFile], cfg: RunConfig, progress=None) -> tuple[DataFrame, int]:
    """The EXTRACT_ROWS DataFrame for the inputs, and the number of tasks it runs in.

    progress: optional ReadCounters: accumulators that tasks add to as they finish files, and
    the driver's beacon they report to as they read (stages._beacon).
    """
    # Small inputs still spread over every core: aim for two tasks per core, never above task_bytes.
    total = sum(max(f.size, 0) for f in inputs)
    target = max(1, min(cfg.extract.task_bytes, -(-total // (2 * spark.sparkContext.defaultParallelism))))
    groups = [[(f.path, max(f.size, 0)) for f in g] for g in group_inputs(inputs, target, cfg.extract.max_files_per_task)]
    extract_cfg = cfg.extract
    code = cfg.winnow.unit == "code"  # documents hold their pages' code blocks
    inject = injected_stages(spark)
    progress = progress or ReadCounters(None, None, None)

    def read_groups(batches):
        for batch in batches:
            maybe_fail("extract", inject)
            for group, paths, sizes in zip(
                batch.column("group").to_pylist(), batch.column("paths").to_pylist(), batch.column("sizes").to_pylist()
            ):
                reading = _Reading(progress, Sender(progress.address, str(group)))
                for path, size in zip(paths, sizes):
                    items = is_item_file(path) and not is_crawl_file(path)
                    rows = (
                        item_rows(path, extract_cfg.text_column, extract_cfg.id_column, extract_cfg.max_decoded_bytes)
                        if items
                        else file_rows(path, extract_cfg, code)
                    )
                    yield from rows_to_batches(reading.rows(rows, size, offsets=not items))

    return task_list(spark, groups).mapInArrow(read_groups, spark_schema(schemas.EXTRACT_ROWS)), len(groups)


def task_list(spark: SparkSession, groups: list[list[tuple[str, int]]]) -> DataFrame:
    """The extract stage's tasks as data: one row and one partition per group of input files
    (group, paths, sizes), so the plan, the UI and `.show()` say which task reads what."""
    rows = [(gid, [p for p, _ in g], [size for _, size in g]) for gid, g in enumerate(groups)]
    # parallelize(n rows, n slices) puts exactly one row in each partition: one task per group
    rdd = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    return spark.createDataFrame(rdd, "group long, paths array<string>, sizes array<long>")


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


def _project(rows: DataFrame, table: str, mapping: list[tuple[str, str]]) -> DataFrame:
    return rows.filter(F.col("table") == table).select(*[F.col(src).alias(dst) for dst, src in mapping])


def run(ctx: StageContext) -> dict:
    spark, inputs, cfg, out, progress = ctx.spark, list(ctx.inputs), ctx.cfg, ctx.out, ctx.progress
    rows, tasks = extract_rows(spark, inputs, cfg, progress)
    # Both tables come from one read of the crawl; the rows are kept until both are written.
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        inputs_meta = {"inputs": [f.path for f in inputs], "tasks": tasks}
        # The ledger first: it decides whether the documents may be published at all.
        write_table(_project(rows, "ledger", schemas.LEDGER_FROM_ROWS), out, "ledger", cfg, "extract", inputs_meta)
        result = summarize_ledger(spark, out, tasks)
        if result.files and result.failed_files / result.files > cfg.extract.max_failed_ratio:
            raise TooManyFailures(_failure_message(spark, out, result, cfg.extract.max_failed_ratio))
        write_table(_project(rows, "documents", schemas.DOCUMENTS_FROM_ROWS), out, "documents", cfg, "extract", inputs_meta)
    finally:
        rows.unpersist()
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


def summarize_ledger(spark: SparkSession, out: str, tasks: int = 0) -> ExtractResult:
    files = read_table(spark, out, "ledger").filter(F.col("kind") == "file")
    row = files.agg(
        F.count("*").alias("files"),
        F.sum("records_seen").alias("records"),
        F.sum("parsed").alias("parsed"),
        F.sum("skipped").alias("skipped"),
        F.sum("failed").alias("failed"),
        F.sum("flagged").alias("flagged"),
        F.sum(F.when(F.col("status") == "failed", 1).otherwise(0)).alias("failed_files"),
    ).first()
    assert row is not None  # an aggregation has one row
    return ExtractResult(
        files=row["files"],
        tasks=tasks,
        records=row["records"] or 0,
        parsed=row["parsed"] or 0,
        skipped=row["skipped"] or 0,
        failed=row["failed"] or 0,
        flagged=row["flagged"] or 0,
        failed_files=row["failed_files"] or 0,
    )
