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


def test_blobs_reach_their_partitions_as_through_sparks_shuffle(spark_session, monkeypatch):
    """Through files (a local run), through the RDD shuffle (a cluster's), through Spark SQL's
    repartitionById: each row reaches partition key % parts, every row once. Each task packs its
    rows twice (two gatherings: a partition gets two blobs from it, the second batch's a slice
    of a larger array)."""
    from webwinnow.stages import _tasks

    parts = 3
    rows = _rows_of()

    def pack(batches):
        held = list(rows(batches))
        for half in (slice(0, 1), slice(1, None)):
            for batch in held:
                got = list(
                    packed([batch.slice(half.start, 1 if half.stop else None)], lambda b: b.column("key").to_numpy(), parts)
                )
                yield from (pa.concat_batches([b, b]).slice(b.num_rows) if half.start else b for b in got)

    def seen(batches):
        from pyspark import TaskContext

        part = TaskContext.get().partitionId()
        for batch in unpacked(batches):
            yield pa.RecordBatch.from_arrays(
                [pa.array([part] * batch.num_rows, pa.int64()), batch.column("key"), batch.column("value")], schema=SEEN
            )

    def moved(dataframe: bool) -> pa.Table:
        blobs = slots(spark_session, 6, dataframe=dataframe).mapInArrow(pack, spark_schema(BLOBS))
        return exchanged(blobs, parts).mapInArrow(seen, spark_schema(SEEN)).toArrow().sort_by([("key", "ascending")])

    assert _tasks.exchange_folder(spark_session.sparkContext) is not None, "the suite's session is local"
    files, frame = moved(False), moved(True)
    monkeypatch.setattr(_tasks, "exchange_folder", lambda sc: None)
    shuffled = moved(False)
    assert files.num_rows == 15
    assert files.column("part").to_pylist() == (np.array(files.column("key").to_pylist()) % parts).tolist()
    assert files.equals(shuffled)
    assert files.cast(frame.schema).equals(frame)


@pytest.mark.parametrize(
    ("master", "through_files"),
    [
        ("local", True),
        ("local[2]", True),
        ("local[*, 3]", True),
        ("local-cluster[2,1,1024]", False),
        ("spark://h:7077", False),
        ("yarn", False),
    ],
)
def test_only_a_local_runs_exchanges_go_through_files(master, through_files):
    """Every task of a local run sees the same folder; a cluster's executors share none."""
    from webwinnow.stages._tasks import exchange_folder

    class Context:
        pass

    sc = Context()
    sc.master = master
    assert (exchange_folder(sc) is not None) == through_files


def test_an_exchanges_files_are_in_sparks_own_folder(spark_session):
    """The files lie in the folder Spark gives its Python workers (its block manager's, which it
    deletes when it stops), never in the run's output or the working folder; the runner deletes
    them as each stage ends."""
    import os

    from webwinnow.stages._tasks import drop_exchanges, exchange_folder

    folder = exchange_folder(spark_session.sparkContext)

    def where(batches):
        for _ in batches:
            local = os.environ["SPARK_LOCAL_DIRS"].split(",")[0]
            yield pa.RecordBatch.from_pydict({"dir": [local]})

    local = slots(spark_session, 1).mapInArrow(where, pa.schema([("dir", pa.string())])).toArrow().column("dir")[0].as_py()
    rows = _rows_of()

    def pack(batches):
        yield from packed(rows(batches), lambda b: b.column("key").to_numpy(), 2)

    def nothing(batches):
        yield from ()

    before = set(os.listdir(local))
    blobs = slots(spark_session, 3).mapInArrow(pack, spark_schema(BLOBS))
    assert exchanged(blobs, 2).mapInArrow(nothing, spark_schema(SEEN)).toArrow().num_rows == 0
    made = [name for name in set(os.listdir(local)) - before if name.startswith("webwinnow-exchange-")]
    assert len(made) == 1 and folder not in made, "each exchange has a folder of its own"
    assert all(sorted(os.listdir(os.path.join(local, name))) == ["00000.blobs", "00001.blobs", "00002.blobs"] for name in made)
    drop_exchanges()  # as the runner does when a stage ends
    assert not [name for name in os.listdir(local) if name.startswith("webwinnow-exchange-")]
