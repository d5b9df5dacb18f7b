"""Progress under Spark Connect: no status tracker or accumulators, so the lines count the tasks
of the running operation's stages from what the server reports (registerProgressHandler)."""

from __future__ import annotations

from dataclasses import dataclass

from webwinnow.app.console import Console
from webwinnow.app.progress import Progress


@dataclass
class _Stage:  # pyspark.sql.connect.shell.progress.StageInfo's fields
    stage_id: int
    num_tasks: int
    num_completed_tasks: int
    num_bytes_read: int
    done: bool


def _connect_session():
    cls = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})
    session = cls()
    session.handlers = []
    session.registerProgressHandler = session.handlers.append
    session.removeProgressHandler = session.handlers.remove
    return session


def test_lines_count_the_reported_tasks_and_operations(capsys):
    spark = _connect_session()
    progress = Progress(spark, Console())
    assert len(spark.handlers) == 1 and progress.counters() is None  # no accumulators, no beacon
    progress.begin("passages")
    handler = spark.handlers[0]
    handler(stages=[_Stage(1, 4, 4, 0, True)], inflight_tasks=0, operation_id="a", done=False)
    handler(stages=None, inflight_tasks=0, operation_id="a", done=True)
    handler(stages=[_Stage(2, 10, 3, 0, False), _Stage(3, 2, 2, 0, True)], inflight_tasks=2, operation_id="b", done=False)
    line = progress.line(progress.current)
    assert line.startswith("passages: 3/10 tasks, 1 Spark operations done, ")
    assert "read" not in line  # bytes read: not known under Connect
    progress.end()
    progress.stop()
    assert spark.handlers == []
    said = capsys.readouterr().err
    assert "Spark Connect: progress counts the tasks the server reports; bytes read are not shown" in said


def test_a_new_stage_starts_its_count_again():
    spark = _connect_session()
    progress = Progress(spark, Console())
    progress.begin("candidates")
    spark.handlers[0](stages=None, inflight_tasks=0, operation_id="a", done=True)
    progress.end()
    progress.begin("passages")
    assert progress.line(progress.current).startswith("passages: 0 s elapsed")
    progress.stop()
