"""Progress of the running stage, read from Spark's status tracker (no UI needed).

Each stage's Spark jobs run in a job group named after the stage. A thread polls the tracker:
on a terminal it redraws one bar line twice a second; otherwise (a pipe, CI, a log) it prints a
plain line every few seconds (``WEBWINNOW_PROGRESS_SECONDS``, 10 by default). The extract stage
also reports bytes and records read: as its tasks read, from the datagrams they send to the
driver's beacon (stages._beacon), and at least what the accumulators its tasks add to when they
finish say (display only: a recomputed task adds twice, so both are capped at the totals; the
ledger is the record).

Spark Connect has no status tracker, accumulators or driver beside the tasks: there the lines
count the tasks of the running operation's stages, from the progress the server sends with
each operation's results (registerProgressHandler), and bytes read are not shown.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..stages._beacon import Beacon, ReadCounters
from ..stages._session import is_connect, setting
from .console import Console


@dataclass
class _Current:
    name: str
    started: float
    total_bytes: int = 0
    counters: ReadCounters | None = None
    beacon: Beacon | None = None

    def read(self) -> tuple[int, int]:
        """(bytes, records) read so far: the beacon's counts, or the finished files' if more."""
        if self.counters is None or self.counters.bytes is None:
            return 0, 0
        done = (self.counters.bytes.value, self.counters.records.value)
        now = self.beacon.totals() if self.beacon is not None else (0, 0)
        return min(max(done[0], now[0]), self.total_bytes), min(max(done[1], now[1]), 10**18)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds} s"


class Progress:
    def __init__(self, spark, console: Console) -> None:
        self.connect = is_connect(spark)
        self.spark = spark
        self.sc: Any = None if self.connect else spark.sparkContext
        self.console = console
        self.enabled = not console.quiet
        self.tty = console.tty
        self.interval = 0.5 if self.tty else float(os.environ.get("WEBWINNOW_PROGRESS_SECONDS", "10"))
        self.current: _Current | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._seen: dict[int, float] = {}
        self._beacon: Beacon | None = None
        # Spark Connect: the running operation's stages, and the operations of the stage done
        self._operation: dict[int, tuple[int, int, bool]] = {}
        self._operations_done = 0
        if self.connect and self.enabled:
            spark.registerProgressHandler(self._on_progress)
            console.say("Spark Connect: progress counts the tasks the server reports; bytes read are not shown")

    def _on_progress(self, stages, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        with self._lock:
            if done:
                self._operation = {}
                self._operations_done += 1
            else:
                self._operation = {s.stage_id: (s.num_tasks, s.num_completed_tasks, s.done) for s in stages or ()}

    def counters(self) -> ReadCounters | None:
        """What the extract stage's tasks report their reading to: accumulators, and a beacon
        when the progress lines are shown (None under Spark Connect, which has neither)."""
        if self.connect:
            return None
        if self.enabled and self._beacon is None:
            try:
                self._beacon = Beacon(setting(self.spark, "spark.driver.host") or "127.0.0.1")
            except OSError:  # no socket for it here: progress by finished files only
                self._beacon = None
        address = self._beacon.address if self._beacon is not None else None
        return ReadCounters(self.sc.accumulator(0), self.sc.accumulator(0), address)

    def begin(self, name: str, total_bytes: int = 0, counters: ReadCounters | None = None) -> None:
        if self.sc is not None:
            self.sc.setJobGroup(name, f"webwinnow {name}")
        with self._lock:
            self._operation, self._operations_done = {}, 0
            self.current = _Current(name, time.time(), total_bytes, counters, self._beacon if counters else None)
        self.console.say(f"{name} ...")
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="webwinnow-progress", daemon=True)
            self._thread.start()

    def end(self, note: str = "") -> float:
        with self._lock:
            cur, self.current = self.current, None
        elapsed = time.time() - cur.started if cur else 0.0
        self.console.clear_bar()
        if cur:
            self.console.say(f"{cur.name} done in {elapsed:.1f} s" + (f": {note}" if note else ""))
        return elapsed

    def stop(self) -> None:
        self._stop.set()
        if self.connect and self.enabled:
            self.spark.removeProgressHandler(self._on_progress)
        self.console.clear_bar()
        if self._beacon is not None:
            self._beacon.close()
            self._beacon = None

    def _loop(self) -> None:
        last_line = time.time()
        while not self._stop.wait(self.interval if self.tty else min(self.interval, 0.5)):
            with self._lock:
                cur = self.current
            if cur is None:
                continue
            try:
                if not self.tty and time.time() - last_line < self.interval:
                    # between log lines only when each stage began (its estimate's start): one
                    # call to the JVM, where a line asks about every job of the stage (a line
                    # each half second was a third of a docs-corpus run's py4j calls)
                    self._note_stages()
                    continue
                line = self.line(cur)
            except Exception:  # the tracker goes away while Spark stops: nothing to show
                continue
            if self.tty:
                self.console.bar(line)
            elif time.time() - last_line >= self.interval:
                self.console.say(line)
                last_line = time.time()

    def _note_stages(self) -> None:
        """When each running Spark stage was first seen running (the estimates' start)."""
        if self.connect:
            return
        now = time.time()
        for sid in self.sc.statusTracker().getActiveStageIds():
            self._seen.setdefault(sid, now)

    def _stages(self, cur: _Current) -> tuple[list[tuple[int, int, int]], str]:
        """The running stages (id, tasks, tasks done), and how many Spark jobs (or Connect
        operations) of the webwinnow stage are done."""
        if self.connect:
            with self._lock:
                running = [(sid, n, d) for sid, (n, d, finished) in self._operation.items() if not finished]
                done_ops = self._operations_done
            return running, f"{done_ops} Spark operations done" if done_ops else ""
        tracker = self.sc.statusTracker()
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(cur.name)]
        jobs = [j for j in jobs if j is not None]
        done_jobs = sum(j.status == "SUCCEEDED" for j in jobs)
        running = []
        # the stage's own: a later stage's job begun early (the report's figures) is not counted
        mine = {sid for j in jobs for sid in j.stageIds}
        for sid in tracker.getActiveStageIds():
            if sid not in mine:
                continue
            info = tracker.getStageInfo(sid)
            if info is not None:
                running.append((sid, info.numTasks, info.numCompletedTasks))
        return running, f"{done_jobs} of {len(jobs)} Spark jobs done" if jobs else ""

    def line(self, cur: _Current) -> str:
        running, jobs = self._stages(cur)
        now = time.time()
        tasks = done = 0
        step_left = None
        for sid, n, completed in running:
            tasks += n
            done += completed
            seen = self._seen.setdefault(sid, now)
            if completed:
                est = (now - seen) * (n - completed) / completed
                step_left = max(step_left or 0.0, est)
        elapsed = now - cur.started
        parts = []
        if tasks:
            parts.append(f"{done}/{tasks} tasks")
        if jobs:
            parts.append(jobs)
        left = None
        if cur.counters is not None and cur.counters.bytes is not None and cur.total_bytes:
            read, records = cur.read()
            parts.append(f"{_size(read)} of {_size(cur.total_bytes)} read")
            parts.append(f"{records:,} records")
            if read:
                left = elapsed * (cur.total_bytes - read) / read
        parts.append(f"{_clock(elapsed)} elapsed")
        if left is not None:
            parts.append(f"about {_clock(left)} left")
        elif step_left is not None:
            # later stages run several Spark jobs whose count is not known ahead: estimate the current one
            parts.append(f"about {_clock(step_left)} left in this job")
        head = cur.name
        counted = cur.counters is not None and cur.counters.bytes is not None and cur.total_bytes
        share = cur.read()[0] / cur.total_bytes if counted else (done / tasks if tasks else None)
        if self.tty and share is not None:
            head += f" [{'#' * int(share * 20):.<20}]"
        return f"{head}: " + ", ".join(parts)
