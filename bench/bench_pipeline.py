"""The whole pipeline on the Debian docs corpus, against the bare reference loop, in one run.

    python bench/bench_pipeline.py [--set small|full]      (make bench runs it with the small set)

Builds the corpus once with ../shared/bench/build_docs_corpus.py into data/bench/docs-SET (it
downloads Debian documentation packages), then runs `webwinnow run` on it (Spark local mode, all
cores) and bench/reference_loop.py (one process, one core) on the same files, and prints per
stage seconds, MB/s of HTML per core for both, and their ratio, with each stage's peak memory
(PSS of the driver, the JVM and the Python workers, sampled by bench/stage_monitor.py). Both are measured in this run:
the machine is shared and noisy, so only ratios from one run mean anything. The loop runs
before the pipeline and again after it; the ratios use the mean of its two runs.

The pipeline runs twice: once timed, its CPU sampled from /proc/PID/stat (0.1 CPU-s of the
monitor's), then once more for its memory. Sampling PSS makes the kernel walk every page of
every process five times a second (2.3-2.5 CPU-s of the monitor's on the docs corpus, full set,
on the same cores as the run's): a run measured so is slower by a second, and the loop beside
it is timed without a monitor.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILDER = REPO.parent / "shared" / "bench" / "build_docs_corpus.py"


def corpus(which: str) -> Path:
    folder = REPO / "data" / "bench" / f"docs-{which}"
    if not (folder / "MANIFEST.tsv").exists():
        if not BUILDER.exists():
            raise SystemExit(f"# {BUILDER} is absent: cannot build the benchmark corpus")
        print(f"# building the docs corpus ({which}) in {folder}: downloads Debian packages", flush=True)
        subprocess.run([sys.executable, str(BUILDER), str(folder), "--set", which], check=True)
    return folder


def _mean_loop(before: dict, after: dict) -> dict:
    """The reference loop's two runs as one: seconds and CPU averaged, the rates from them."""
    mean = dict(before)
    for key in ("seconds", "cpu_s", "extract_s", "fingerprint_s", "pairs_s"):
        mean[key] = (before[key] + after[key]) / 2
    mb = before["html_bytes"] / 1e6
    mean["mb_per_s"] = mb / mean["seconds"]
    mean["cpu_s_per_mb"] = mean["cpu_s"] / mb if mb else 0.0
    return mean


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", default="small", choices=["small", "full"])
    args = p.parse_args()
    crawl = corpus(args.set)
    out = REPO / "data" / "bench" / f"out-{args.set}"
    cores = os.cpu_count() or 1

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import reference_loop

    reference_loop.warm_up()
    before = reference_loop.run(crawl)

    from stage_monitor import print_cpu, run_monitored

    command = [str(REPO / ".venv" / "bin" / "webwinnow"), "run", str(crawl), "--out", str(out)]
    wall, peaks, _ = run_monitored(command, memory=False)
    summary = json.loads((out / "summary.json").read_text())
    # The loop again after the run: on a shared machine one measurement of it moved by a fifth
    # between runs of the same code, and the ratios with it; both are printed, the ratios use
    # their mean.
    after = reference_loop.run(crawl)
    ref = _mean_loop(before, after)
    memory_wall, memory, _ = run_monitored(command)
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    html = pc.sum(pq.read_table(out / "documents", columns=["html_bytes"])["html_bytes"]).as_py()
    mb = html / 1e6
    print(
        f"# corpus docs-{args.set}: {summary['extract']['files']} files, {summary['fingerprint']['documents']:,} documents, "
        f"{mb:.1f} MB of HTML; {cores} cores"
    )
    # a JVM without Spark's classes mapped spends 2-3 CPU-s more a run: say which it was
    jvm = summary.get("spark", {})
    print(
        f"# JVM: class sharing {jvm.get('class_sharing') or 'off'}, C1 only {jvm.get('c1_only')}, serial GC {jvm.get('serial_gc')}"
    )
    order = ["spark_start", *(name for name in summary["ran"])]
    print("#         stage          seconds  MB/s/core   peak PSS MiB: driver    JVM  workers (largest one)")
    for stage in order:
        secs = summary["stage_seconds"].get(stage, 0.0)
        rate = f"{mb / secs / cores:9.2f}" if secs > 0 and stage != "spark_start" else " " * 9
        cell = memory.peaks.get(stage, {})
        print(
            f"pipeline  {stage:<12} {secs:7.1f} s  {rate}   {cell.get('driver', 0):19.0f} {cell.get('jvm', 0):6.0f} "
            f"{cell.get('workers', 0):8.0f} ({cell.get('worker_max', 0):.0f})"
        )
    per_core = mb / wall / cores
    print(
        f"pipeline  end to end   {wall:7.1f} s  {mb / wall:6.2f} MB/s  {per_core:6.2f} MB/s per core  "
        f"(candidate pairs {summary['candidates']['candidate_pairs']:,}, content pairs {summary['passages']['pairs']:,}, "
        f"max_df {summary['candidates']['max_df']}; peak PSS driver "
        f"{memory.overall('driver'):.0f} MiB, JVM {memory.overall('jvm'):.0f} MiB, workers {memory.overall('workers'):.0f} MiB)"
    )
    print(
        f"pipeline  the monitor  {peaks.monitor_cpu:7.2f} CPU-s sampling CPU; the memory run {memory_wall:.1f} s, "
        f"its monitor {memory.monitor_cpu:.2f} CPU-s sampling CPU and PSS (on the run's cores: not the run that is timed)"
    )
    print(
        f"reference runs         {before['seconds']:.1f} s, {before['cpu_s']:.1f} CPU-s before the pipeline; "
        f"{after['seconds']:.1f} s, {after['cpu_s']:.1f} CPU-s after it (the ratios use their mean)"
    )
    print(
        f"reference one core     {ref['seconds']:7.1f} s  {ref['mb_per_s']:6.2f} MB/s  "
        f"(extract {ref['extract_s']:.1f} s, fingerprint {ref['fingerprint_s']:.1f} s, pairs {ref['pairs_s']:.1f} s; "
        f"pairs {ref['pairs']:,}, max_df {ref['max_df']})"
    )
    print(f"ratio     pipeline per core / reference = {per_core / ref['mb_per_s']:.3f}  (target >= 0.25)")
    # CPU-seconds of every process (driver, JVM, Python workers): comparable on a busy machine
    print_cpu(peaks, mb, stages=[s for s in ("setup", *order) if s in peaks.order or s in summary["stage_seconds"]], cores=cores)
    cpu_mb = peaks.total_cpu() / mb
    print(
        f"reference cpu          {ref['cpu_s']:7.1f} CPU-s  {ref['cpu_s_per_mb']:.4f} CPU-s/MB\n"
        f"ratio     pipeline CPU per MB / reference = {cpu_mb / ref['cpu_s_per_mb']:.2f}  (end to end; target <= 4)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
