"""Jobs of Python tasks as RDD jobs (stages._tasks) give what Spark's DataFrame jobs give: the
same tasks, the same rows, blobs moved to the same partitions."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from webwinnow.stages._exchange import BLOBS, exchanged, packed, unpacked
from webwinnow.stages._frames import spark_schema
from webwinnow.stages._tasks import TaskRows, slots

pytestmark = pytest.mark.spark

ROWS = pa.schema([("task", pa.int64()), ("key", pa.int64()), ("value", pa.string())])
SEEN = pa.schema([("part", pa.int64()), ("key", pa.int64()), ("value", pa.string())])


def _rows_of():
    """A task function (made here: the workers cannot import a test module): each task's rows,
    keys task * 10 .. task * 10 + task, a string each (none for task 0)."""

    def rows(batches):
        for batch in batches:
            for task in batch.column("id").to_pylist():
                keys = list(range(task * 10, task * 10 + task))
                yield pa.RecordBatch.from_pydict(
                    {"task": [task] * len(keys), "key": keys, "value": [f"v{k}" for k in keys]}, ROWS
                )

    return rows


@pytest.mark.parametrize("n", [0, 1, 5])
def test_task_rows_are_spark_rows(spark_session, n):
    rdd = slots(spark_session, n)
    frame = slots(spark_session, n, dataframe=True)
    assert isinstance(rdd, TaskRows) and not isinstance(frame, TaskRows)
    assert rdd.rdd.getNumPartitions() == frame.rdd.getNumPartitions() == n  # a task each
    got = rdd.mapInArrow(_rows_of(), spark_schema(ROWS))
    want = frame.mapInArrow(_rows_of(), spark_schema(ROWS))
    assert got.collect() == [r.asDict() for r in want.collect()]
    table = got.toArrow()
    assert table.schema.names == ROWS.names and table.num_rows == n * (n - 1) // 2
    assert table.equals(want.toArrow().cast(table.schema))


def test_blobs_reach_their_partitions_as_through_sparks_shuffle(spark_session):
    parts = 3
    rows = _rows_of()

    def pack(batches):
        yield from packed(rows(batches), lambda b: b.column("key").to_numpy(), parts)

    def seen(batches):
        from pyspark import TaskContext

        part = TaskContext.get().partitionId()
        for batch in unpacked(batches):
            yield pa.RecordBatch.from_arrays(
                [pa.array([part] * batch.num_rows, pa.int64()), batch.column("key"), batch.column("value")], schema=SEEN
            )

    results = []
    for dataframe in (False, True):
        blobs = slots(spark_session, 6, dataframe=dataframe).mapInArrow(pack, spark_schema(BLOBS))
        moved = exchanged(blobs, parts).mapInArrow(seen, spark_schema(SEEN)).toArrow()
        results.append(moved.sort_by([("key", "ascending")]))
    rdd, frame = results
    assert rdd.num_rows == 15
    assert rdd.column("part").to_pylist() == (np.array(rdd.column("key").to_pylist()) % parts).tolist()
    assert rdd.cast(frame.schema).equals(frame)
