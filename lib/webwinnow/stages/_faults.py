"""Fault injection for retry tests: fail the first attempt of some tasks of chosen stages.

Enabled only by the Spark setting ``spark.webwinnow.injectTaskFailure`` (a comma-separated list
of stage names, e.g. ``extract,fingerprint``), read on the driver. Used with a master that
retries tasks, such as ``local[2,3]``, it shows that a retried task produces exactly what a
clean run does. Never set it in production.
"""

from __future__ import annotations

SETTING = "spark.webwinnow.injectTaskFailure"


class InjectedTaskFailure(RuntimeError):
    pass


def injected_stages(spark) -> frozenset[str]:
    from ._session import setting

    value = setting(spark, SETTING)
    return frozenset(s.strip() for s in value.split(",") if s.strip())


def maybe_fail(stage: str, stages: frozenset[str]) -> None:
    """Raise in the first attempt of every even-numbered partition, when stage is enabled."""
    if stage not in stages:
        return
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None and ctx.attemptNumber() == 0 and ctx.partitionId() % 2 == 0:
        raise InjectedTaskFailure(f"injected failure: {stage} partition {ctx.partitionId()} attempt 0")


#: A stage named here (comma-separated) begins with a task that allocates a 2 GB string in the
#: JVM: with a heap under that, the JVM runs out of memory as a stage whose data outgrew the heap
#: does (tests of the out-of-memory message). Never set it in production.
EXHAUST_SETTING = "spark.webwinnow.injectOutOfMemory"


def maybe_exhaust_heap(spark, stage: str) -> None:
    from ._session import setting

    if stage in {s.strip() for s in setting(spark, EXHAUST_SETTING).split(",")}:
        spark.range(1).selectExpr("length(repeat('x', cast(id as int) + 2000000000)) AS n").collect()
