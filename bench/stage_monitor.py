"""Run `webwinnow run` and measure each stage's peak memory and CPU-seconds: driver, JVM and
Python workers.

The command's stage lines on stderr ("webwinnow: pairs ...") say which stage is running; a thread
samples the process tree every 0.2 s. Memory is PSS (/proc/PID/smaps_rollup), not RSS: Python
workers are forked from one daemon and share pages, and summing their RSS would count those pages
once per worker. CPU is each process's utime + stime (/proc/PID/stat), charged by the growth since
the last sample to the stage running then; a process that ended between two samples is charged by
its parent's reaped-children time, less what was already seen of it (the JVM is not reaped by the
driver, so the run's own rusage cannot give the total). CPU-seconds stay comparable on a busy
machine where wall time does not. Linux only; elsewhere the stage times are still measured and memory and
CPU are absent.

Reading PSS is not free: the kernel walks every page of a process to share it out, and for the
forked workers' shared pages that cost 2.3-2.5 CPU-s of system time a docs-corpus run (full
set), on the same cores the run uses. `run_monitored(memory=False)` samples CPU only (0.1 CPU-s
a run): the one to time a run by.
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
    #: CPU-seconds per stage and role (driver, jvm, workers)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)
    #: wall seconds per stage, between the samples that charged it its CPU
    wall: dict[str, float] = field(default_factory=dict)
    #: the command's exit status
    code: int = 0
    #: CPU-seconds the sampling thread itself spent (reading /proc), on the run's cores
    monitor_cpu: float = 0.0

    def charge(self, stage: str, role: str, seconds: float) -> None:
        cell = self.cpu.setdefault(stage, {r: 0.0 for r in ROLES})
        cell[role] += seconds

    def tick(self, stage: str, seconds: float) -> None:
        self.wall[stage] = self.wall.get(stage, 0.0) + seconds

    def stage_cpu(self, stage: str) -> float:
        return sum((self.cpu.get(stage) or {}).values())

    def total_cpu(self) -> float:
        return sum(self.stage_cpu(stage) for stage in self.cpu)

    def role_cpu(self, role: str) -> float:
        return sum(cell[role] for cell in self.cpu.values())

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


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _children() -> tuple[dict[int, list[int]], dict[int, tuple[float, float]]]:
    """Each process's children, and its CPU-seconds: (own, reaped children's)."""
    kids: dict[int, list[int]] = {}
    cpu: dict[int, tuple[float, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            ppid = int(fields[1])
            # fields after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14)
            own = (int(fields[11]) + int(fields[12])) / _TICK
            reaped = (int(fields[13]) + int(fields[14])) / _TICK
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
        cpu[int(entry)] = (own, reaped)
    return kids, cpu


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


def _sample(root: int, state: dict, peaks: StagePeaks, memory: bool = True) -> None:
    kids, cpu = _children()
    totals = {"driver": (_pss_mib(root) or 0.0) if memory else 0.0, "jvm": 0.0, "workers": 0.0}
    worker_max = 0.0
    stage = state["stage"]
    now = time.perf_counter()
    if "at" in state:  # the interval this sample's CPU deltas cover, charged to the same stage
        peaks.tick(stage, now - state["at"])
    state["at"] = now
    seen: dict[int, tuple[str, int, float, float]] = {}  # pid -> role, parent, own, reaped
    stack = [(root, 0)]
    while stack:
        pid, parent = stack.pop()
        stack.extend((kid, pid) for kid in kids.get(pid, []))
        role = "driver" if pid == root else _role(pid)
        if pid != root and memory:
            mib = _pss_mib(pid) if role else None
            if role and mib is not None:
                totals[role] += mib
                if role == "workers":
                    worker_max = max(worker_max, mib)
        own, reaped = cpu.get(pid, (0.0, 0.0))
        # a process of no role of its own (spark-submit's shell) counts with its parent's
        seen[pid] = (role or (seen[parent][0] if parent in seen else "driver"), parent, own, reaped)
    before = state.setdefault("cpu", {})
    ended = [pid for pid in before if pid not in seen]
    for pid, (role, parent, own, reaped) in seen.items():
        _, _, own0, reaped0 = before.get(pid, (role, parent, 0.0, 0.0))
        peaks.charge(stage, role, max(0.0, own - own0))
        # what ended children used after the last sample saw them
        gone = [before[c] for c in ended if before[c][1] == pid]
        unseen = (reaped - reaped0) - sum(c[2] + c[3] for c in gone)
        if unseen > 0:
            peaks.charge(stage, gone[0][0] if gone else role, unseen)
    state["cpu"] = seen
    for role, mib in totals.items():
        peaks.add(stage, role, mib)
    peaks.add(stage, "worker_max", worker_max)


def run_monitored(
    cmd: list[str], interval: float = 0.2, env: dict | None = None, check: bool = True, memory: bool = True
) -> tuple[float, StagePeaks, str]:
    """Run cmd (a `webwinnow run` without -q); return wall seconds, stage peaks and its stderr.
    A failed command raises SystemExit with its last lines, unless check is false. Without
    `memory`, only CPU is sampled: the peaks stay 0 and the run's wall time is its own."""
    peaks = StagePeaks()
    state: dict = {"stage": "setup"}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    done = threading.Event()

    def sampler() -> None:
        start = time.thread_time()
        while not done.is_set():
            if os.path.isdir("/proc"):
                _sample(proc.pid, state, peaks, memory)
            done.wait(interval)
        peaks.monitor_cpu = time.thread_time() - start

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
    peaks.code = code
    if code != 0 and check:
        raise SystemExit(f"# {' '.join(cmd)} failed ({code}):\n" + "".join(lines[-20:]))
    return wall, peaks, "".join(lines)


def print_cpu(
    peaks: StagePeaks, mb: float, label: str = "pipeline", stages: list[str] | None = None, cores: int | None = None
) -> None:
    """CPU-seconds per stage and role, and per MB of HTML; with `cores`, the core-seconds each
    stage left idle (cores × its wall seconds between samples, less its CPU: where the run waits
    on one process while the others could work). `stages`: every stage the command ran, in
    order; one that ended between two samples (run_monitored's interval) is listed with what
    was charged to it, its CPU counted in the stage of the next sample."""
    idle_head = f", idle core-s of {cores} cores" if cores else ""
    print(f"# {label} CPU-seconds by stage (driver, JVM, workers) and per MB of HTML ({mb:.1f} MB){idle_head}")

    def idle(wall: float, cpu: float) -> str:
        return f"  idle {cores * wall - cpu:5.1f}" if cores else ""

    listed = [*(stages or []), *(s for s in peaks.order if s not in (stages or []))]
    for stage in listed:
        if stage not in peaks.cpu and stage not in peaks.order:
            print(f"{label}  cpu {stage:<12}     0.0 CPU-s  (between two samples: counted in the next stage)")
            continue
        cell = peaks.cpu.get(stage) or {r: 0.0 for r in ROLES}
        total = sum(cell.values())
        print(
            f"{label}  cpu {stage:<12} {total:7.1f} CPU-s  ({cell['driver']:6.1f} {cell['jvm']:6.1f} {cell['workers']:6.1f})"
            f"  {total / mb if mb else 0:7.4f} CPU-s/MB{idle(peaks.wall.get(stage, 0.0), total)}"
        )
    total = peaks.total_cpu()
    print(
        f"{label}  cpu whole run    {total:7.1f} CPU-s  ({peaks.role_cpu('driver'):6.1f} {peaks.role_cpu('jvm'):6.1f} "
        f"{peaks.role_cpu('workers'):6.1f})  {total / mb if mb else 0:7.4f} CPU-s/MB{idle(sum(peaks.wall.values()), total)}"
    )


def print_peaks(peaks: StagePeaks, label: str = "pipeline") -> None:
    """Peak PSS per stage: driver, JVM, all Python workers together and the largest one."""
    print(f"# {label} peak PSS MiB by stage (driver, JVM, workers, largest worker)")
    for stage in peaks.order:
        cell = peaks.peaks[stage]
        print(
            f"{label}  peak {stage:<12} {cell['driver']:7.0f} {cell['jvm']:7.0f} {cell['workers']:7.0f} {cell['worker_max']:7.0f}"
        )


def html_mb(out: str) -> float:
    """MB of HTML a run read: its documents' html_bytes."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for folder in (out, out + ".incomplete"):  # a failed run leaves its finished tables beside OUT
        if os.path.isdir(os.path.join(folder, "documents")):
            table = pq.read_table(os.path.join(folder, "documents"), columns=["html_bytes"])
            return (pc.sum(table["html_bytes"]).as_py() or 0) / 1e6
    return 0.0


def main() -> int:
    """python bench/stage_monitor.py webwinnow run INPUT... --out OUT: the run's CPU and memory by stage."""
    import sys

    cmd = sys.argv[1:]
    if "--out" not in cmd:
        raise SystemExit("usage: stage_monitor.py webwinnow run INPUT... --out OUT [options]")
    wall, peaks, log = run_monitored(cmd, check=False)
    mb = html_mb(cmd[cmd.index("--out") + 1])
    if peaks.code:  # what it measured until then still counts
        print(f"# {' '.join(cmd)} failed ({peaks.code}):\n" + "".join(log.splitlines(keepends=True)[-20:]))
    print(
        f"# {wall:.1f} s wall; peak PSS MiB: driver {peaks.overall('driver'):.0f}, JVM {peaks.overall('jvm'):.0f}, "
        f"workers {peaks.overall('workers'):.0f}"
    )
    print_cpu(peaks, mb, cores=os.cpu_count())
    print_peaks(peaks)
    return peaks.code


if __name__ == "__main__":
    raise SystemExit(main())
