"""The report's queries made both ways on one run folder: on the driver with pyarrow (the tables
are small) and in Spark (forced by DRIVER_ROWS = -1), which must give the same rows in the same
order; and the driver's way must start no Spark job."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any


def canonical(x: Any) -> Any:
    """x with NaN made comparable (NaN != NaN) and dicts' key order and Spark Rows left out."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, canonical(dataclasses.asdict(x)))
    if isinstance(x, dict):
        return tuple(sorted((k, canonical(v)) for k, v in x.items()))
    if hasattr(x, "asDict"):
        return canonical(x.asDict())
    if isinstance(x, (list, tuple, set)):
        items = [canonical(v) for v in x]
        return tuple(sorted(items, key=repr)) if isinstance(x, set) else tuple(items)
    return x


GROUP = "report-rows-both-ways"


def _jobs(spark) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(GROUP))


def report_rows_both_ways(spark, out: Path, monkeypatch) -> dict:
    """Every report query on `out` both ways; asserts they agree and returns the driver's."""
    from webwinnow.stages import _reportrows as rows

    def collect() -> dict:
        top, total = rows.top_pairs(spark, str(out), 1000)
        cross, total_cross = rows.top_pairs(spark, str(out), 1000, cross_host=True)
        keys = {(r["doc_a"], r["doc_b"]) for r in top[:200] + cross[:200]}
        return {
            "top": (top, total),
            "cross": (cross, total_cross),
            "details": rows.pair_details(spark, str(out), keys),
            "hashes": rows.top_hashes(spark, str(out), 200),
            "pages": rows.run_pages(spark, str(out)),
        }

    spark.sparkContext.setJobGroup(GROUP, "the report's queries both ways")
    before = _jobs(spark)
    driver = collect()
    assert _jobs(spark) == before, "the driver's way started Spark jobs"
    monkeypatch.setattr(rows, "DRIVER_ROWS", -1)
    in_spark = collect()
    assert _jobs(spark) > before
    for name in driver:
        assert canonical(driver[name]) == canonical(in_spark[name]), name
    return driver
