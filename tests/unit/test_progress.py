"""Progress lines on a log (stderr not a terminal): a line every WEBWINNOW_PROGRESS_SECONDS, and
between lines no more than one question to the JVM each half second."""

from __future__ import annotations

from collections import Counter

from webwinnow.app.console import Console
from webwinnow.app.progress import Progress


class _Tracker:
    """SparkContext.statusTracker()'s calls, counted: one job of the group, its stage 7 running,
    and stage 8 of another group's job (a later stage's, begun early)."""

    def __init__(self, calls: Counter) -> None:
        self.calls = calls

    def getJobIdsForGroup(self, group):
        self.calls["jobs"] += 1
        return [1]

    def getJobInfo(self, job):
        self.calls["job"] += 1
        return type("Job", (), {"status": "RUNNING", "stageIds": [6, 7]})()

    def getActiveStageIds(self):
        self.calls["stages"] += 1
        return [7, 8]

    def getStageInfo(self, stage):
        self.calls["stage"] += 1
        return type("Stage", (), {"numTasks": 10, "numCompletedTasks": 4})()


class _Context:
    def __init__(self) -> None:
        self.calls: Counter = Counter()

    def statusTracker(self):
        return _Tracker(self.calls)

    def setJobGroup(self, name, description):
        pass


class _Clock:
    """time.time() and the loop's half-second waits, without waiting: twelve polls, then stop."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.polls = 0

    def time(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.now += seconds
        self.polls += 1
        return self.polls > 12


def test_a_log_gets_a_line_each_interval_and_the_jvm_one_question_between(monkeypatch, capsys):
    from webwinnow.app import progress as module

    clock = _Clock()
    monkeypatch.setattr(module.time, "time", clock.time)
    monkeypatch.setenv("WEBWINNOW_PROGRESS_SECONDS", "2")
    spark = type("SparkSession", (), {"sparkContext": _Context()})()
    console = Console()
    monkeypatch.setattr(type(console), "tty", property(lambda self: False))
    progress = Progress(spark, console)
    progress._thread = "the loop runs here"  # type: ignore[assignment]
    progress._stop = clock  # type: ignore[assignment]
    progress.begin("passages")
    started = clock.now
    progress._loop()  # polls at 0.5, 1.0, ... 6.0 s: lines at 2, 4 and 6 s
    lines = [line for line in capsys.readouterr().err.splitlines() if "tasks" in line]
    calls = spark.sparkContext.calls
    # the stage's own tasks: stage 8 is another group's
    assert len(lines) == 3 and lines[0].startswith("webwinnow: passages: 4/10 tasks, 0 of 1 Spark jobs done, 2 s elapsed")
    assert calls["stage"] == calls["jobs"] == calls["job"] == 3  # one of each a line
    assert calls["stages"] == 12  # the running stages each poll (between lines: when each began)
    assert progress._seen[7] == started + 0.5  # the estimate counts from the first poll that saw it
    assert "about 2 s left in this job" in lines[0]  # 4 of 10 tasks in the 1.5 s since: 6 in 2.25
