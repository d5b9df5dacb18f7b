"""A run bigger than the memory it is given, against the same crawl run with generous memory.

    python bench/bench_memory.py DIR [--shards 220] [--pages 6000] [--low 512m] [--high 12g] [--together]

The crawl is DIR/shards: shards of the sample generator, each with its own seed and site tag
(`webwinnow sample --pages P --seed 9000+i --site-tag bI`); 220 shards of 6,000 pages are
5.67 GB of gzipped WARC, 10.3 times a 512 MiB heap (the least Spark starts with). The low run
and the high run are both measured by the stage monitor (CPU-seconds per stage: driver, JVM,
workers; peak memory), and their tables compared (bench/compare_outputs.py, by row hashes for the
big tables). A run that fails is resumed once with --resume (after a fix, say), and what the
monitor measured of each attempt is printed. --together runs the two side by side (each then
takes about twice as long; CPU-seconds stay comparable). Takes hours on 2 cores: not part of
`make bench`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare_outputs  # noqa: E402
import stage_monitor  # noqa: E402

from webwinnow.stages._session import parse_bytes  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WEBWINNOW = str(Path(sys.executable).parent / "webwinnow")


def make_crawl(folder: Path, shards: int, pages: int) -> Path:
    """The shards (made once; two at a time) and a manifest listing their WARC files."""
    folder.mkdir(parents=True, exist_ok=True)

    def one(i: int) -> None:
        shard = folder / f"b{i}"
        if not (shard / "planted.json").exists():
            argv = [WEBWINNOW, "sample", str(shard), "--pages", str(pages), "--seed", str(9000 + i), "--site-tag", f"b{i}"]
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, range(shards)))
    manifest = folder.parent / "warc.paths"
    manifest.write_text("".join(f"{p}\n" for p in sorted(folder.glob("b*/*.warc.gz"))))
    return manifest


def settings(folder: Path, name: str, memory: str) -> Path:
    """A config whose properties are the project's local ones with the driver's heap set."""
    local = (REPO / "conf" / "spark-local.properties").read_text()
    props = folder / f"{name}.properties"
    props.write_text(
        "".join(
            f"spark.driver.memory={memory}\n" if line.startswith("spark.driver.memory=") else line + "\n"
            for line in local.splitlines()
        )
    )
    conf = folder / f"{name}.toml"
    conf.write_text(f'[spark]\nproperties = "{props}"\n')
    return conf


def run(manifest: Path, out: Path, conf: Path, monitored: bool) -> list[tuple[float, stage_monitor.StagePeaks | None, int]]:
    """The run, resumed once if it fails: per attempt (wall seconds, what the monitor measured, exit status)."""
    attempts = []
    # a folder left by an earlier, stopped invocation of this bench is resumed, not redone
    tries = ([], ["--resume"]) if not Path(f"{out}.incomplete").exists() else (["--resume"], ["--resume"])
    for resume in tries:
        argv = [
            WEBWINNOW,
            "run",
            str(manifest),
            "--out",
            str(out),
            "--conf",
            str(REPO / "conf" / "webwinnow.toml"),
            "--conf",
            str(conf),
            *resume,
        ]
        started = time.perf_counter()
        if monitored:
            wall, peaks, log = stage_monitor.run_monitored(argv, interval=1.0, check=False)
            (out.parent / f"{out.name}-{len(attempts)}.log").write_text(log)
            attempts.append((wall, peaks, peaks.code))
        else:
            with open(out.parent / f"{out.name}-{len(attempts)}.log", "w") as log_file:
                code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=log_file).returncode
            attempts.append((time.perf_counter() - started, None, code))
        if attempts[-1][2] == 0:
            break
    return attempts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--shards", type=int, default=220)
    parser.add_argument("--pages", type=int, default=6000)
    parser.add_argument("--low", default="512m", help="the small run's heap (spark.driver.memory in local mode)")
    parser.add_argument("--high", default="12g", help="the generous run's heap")
    parser.add_argument("--together", action="store_true", help="run the two at once")
    args = parser.parse_args()
    manifest = make_crawl(args.dir / "shards", args.shards, args.pages)
    crawl = sum(Path(line).stat().st_size for line in manifest.read_text().split())
    heap = parse_bytes(args.low)
    print(
        f"# crawl: {args.shards} shards, {crawl / 1e9:.2f} GB of WARC, {crawl / heap:.1f} times the {args.low} heap", flush=True
    )
    low, high = args.dir / "out-low", args.dir / "out-high"
    jobs = [(low, settings(args.dir, "low", args.low), True), (high, settings(args.dir, "high", args.high), True)]
    with ThreadPoolExecutor(max_workers=2 if args.together else 1) as pool:
        results = list(pool.map(lambda job: run(manifest, *job), jobs))
    for (out, _, _), attempts in zip(jobs, results, strict=True):
        for n, (wall, peaks, code) in enumerate(attempts):
            print(f"# {out.name} attempt {n + 1}: exit {code}, {wall:.0f} s wall")
            if peaks is not None:
                mb = stage_monitor.html_mb(str(out))
                stage_monitor.print_cpu(peaks, mb, out.name)
                stage_monitor.print_peaks(peaks, out.name)
    if any(attempts[-1][2] for attempts in results):
        print("# a run did not complete: nothing to compare")
        return 1
    return compare_outputs.main([str(low), str(high)])


if __name__ == "__main__":
    raise SystemExit(main())
