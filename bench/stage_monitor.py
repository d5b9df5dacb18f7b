"""Run `webwinnow run` and measure each stage's peak memory: driver, JVM and Python workers.

The command's stage lines on stderr ("webwinnow: pairs ...") say which stage is running; a thread
samples the process tree every 0.2 s. Memory is PSS (/proc/PID/smaps_rollup), not RSS: Python
workers are forked from one daemon and share pages, and summing their RSS would count those pages
once per worker. Linux only; elsewhere the stage times are still measured and memory is absent.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_STAGE_LINE = re.compile(r"^webwinnow: (?:(starting Spark)|(\w+)) \.\.\.$")
ROLES = ("driver", "jvm", "workers")


@dataclass
class StagePeaks:
    """Peak MiB per stage and role; `worker_max` is the largest single Python worker."""

    peaks: dict[str, dict[str, float]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def add(self, stage: str, role: str, mib: float) -> None:
        if stage not in self.peaks:
            self.peaks[stage] = {r: 0.0 for r in (*ROLES, "worker_max")}
            self.order.append(stage)
        cell = self.peaks[stage]
        cell[role] = max(cell[role], mib)

    def overall(self, role: str) -> float:
        return max((cell[role] for cell in self.peaks.values()), default=0.0)


def _pss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def _role(pid: int) -> str | None:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    exe = os.path.basename(cmd[0].decode(errors="replace")) if cmd and cmd[0] else ""
    if exe == "java":
        return "jvm"
    if b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd or exe.startswith("python"):
        return "workers"
    return None


def _sample(root: int, state: dict, peaks: StagePeaks) -> None:
    kids = _children()
    totals = {"driver": _pss_mib(root) or 0.0, "jvm": 0.0, "workers": 0.0}
    worker_max = 0.0
    stack = list(kids.get(root, []))
    while stack:
        pid = stack.pop()
        stack.extend(kids.get(pid, []))
        role = _role(pid)
        mib = _pss_mib(pid) if role else None
        if role and mib is not None:
            totals[role] += mib
            if role == "workers":
                worker_max = max(worker_max, mib)
    stage = state["stage"]
    for role, mib in totals.items():
        peaks.add(stage, role, mib)
    peaks.add(stage, "worker_max", worker_max)


def run_monitored(cmd: list[str], interval: float = 0.2, env: dict | None = None) -> tuple[float, StagePeaks, str]:
    """Run cmd (a `webwinnow run` without -q); return wall seconds, stage peaks and its stderr."""
    peaks = StagePeaks()
    state = {"stage": "setup"}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            if os.path.isdir("/proc"):
                _sample(proc.pid, state, peaks)
            done.wait(interval)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    lines = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        match = _STAGE_LINE.match(line.strip())
        if match:
            state["stage"] = "spark_start" if match.group(1) else match.group(2)
    code = proc.wait()
    wall = time.perf_counter() - started
    done.set()
    thread.join()
    if code != 0:
        raise SystemExit(f"# {' '.join(cmd)} failed ({code}):\n" + "".join(lines[-20:]))
    return wall, peaks, "".join(lines)
