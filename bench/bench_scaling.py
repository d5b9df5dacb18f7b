"""How every stage's time grows with its input: 1x, 2x, 4x, 8x a crawl that grows like a crawl.

    python bench/bench_scaling.py [--base-shards 8] [--factors 1,2,4,8]   (make bench runs it)

The input is a union of shards of the project's sample crawl, each written with its own seed and
site tag (`webwinnow sample --seed S --site-tag sN`): every shard is three other sites with their
own templates, vocabulary, mirrors, versions and planted passages. Doubling the shards doubles
sites and pages while the share of copies and templates stays constant -- not the same files
repeated, which would turn every page into a copy. Shards are written once into
data/bench/scaling/ and reused.

Prints, per stage, the seconds at each factor, the fitted slope (seconds per MB of HTML, least
squares) and the growth exponent between the smallest and largest input (log t_max/t_min over
log of the input ratio: 1.0 is linear, below 1 means fixed costs still dominate). The pairs and
passages stages are set against what they should grow with: the reported pairs and the copied
characters of their passages. CPU-seconds of the whole process tree (bench/stage_monitor.py) give
the marginal rate (CPU-s per MB of HTML, the slope) and the fixed cost of a run (the intercept),
set against the bare reference loop's CPU per MB on the largest input, in the same run. The document-frequency cap is the one the smallest input chose
automatically, kept for the larger ones (the automatic cap, ⌈√documents⌉, rises with the crawl).

The smallest input (8 shards, 2,488 pages) is past the report's document sample (its figures
read 2,000 documents, however large the crawl): from 4 shards (1,244 pages) on, the fit took the
sample's growth up to its cap for a cost per MB, a marginal cost a large crawl never pays.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARDS = REPO / "data" / "bench" / "scaling"
STAGES = ["extract", "fingerprint", "hash_freq", "candidates", "passages", "clusters", "report"]


def shard(i: int) -> Path:
    folder = SHARDS / f"shard-{i:03d}"
    if not (folder / "planted.json").exists():
        subprocess.run(
            [str(REPO / ".venv" / "bin" / "webwinnow"), "sample", str(folder), "--seed", str(5000 + i), "--site-tag", f"s{i}"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return folder


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares intercept and slope."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0
    return my - slope * mx, slope


def exponent(xs: list[float], ys: list[float]) -> float:
    if ys[0] <= 0 or ys[-1] <= 0 or xs[-1] == xs[0]:
        return float("nan")
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-shards", type=int, default=8, help="shards at 1x (each about 300 pages, 2.4 MB of HTML)")
    p.add_argument("--factors", default="1,2,4,8")
    args = p.parse_args()
    factors = [int(f) for f in args.factors.split(",")]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from stage_monitor import ROLES, run_monitored

    rows: list[dict] = []
    for factor in factors:
        inputs = [str(shard(i)) for i in range(args.base_shards * factor)]
        out = REPO / "data" / "bench" / f"out-scaling-{factor}x"
        # The automatic cap is ⌈√documents⌉: left free it would admit, as the crawl grows, hashes of
        # each site's template that the smaller crawl capped, and the copy structure would not be
        # constant. Every larger input keeps the cap the smallest one chose.
        cap = ["--max-df", str(rows[0]["max_df"])] if rows else []
        wall, peaks, _ = run_monitored([str(REPO / ".venv" / "bin" / "webwinnow"), "run", *inputs, "--out", str(out), *cap])
        summary = json.loads((out / "summary.json").read_text())
        html = pc.sum(pq.read_table(out / "documents", columns=["html_bytes"])["html_bytes"]).as_py()
        rows.append(
            {
                "factor": factor,
                "mb": html / 1e6,
                "wall": wall,
                "docs": summary["fingerprint"]["documents"],
                "pairs": summary["candidates"]["candidate_pairs"],
                "max_df": summary["candidates"]["max_df"],
                "copied": summary["passages"]["normalized_chars"],
                "stages": summary["stage_seconds"],
                "cpu": peaks.total_cpu(),
                "workers_mib": peaks.overall("workers"),
                "jvm_mib": peaks.overall("jvm"),
                "peaks": peaks.peaks,
                "peaks_cpu": peaks.cpu,
            }
        )
        print(
            f"scaling {factor}x: {len(inputs)} shards, {rows[-1]['docs']:,} documents, {rows[-1]['mb']:.1f} MB of HTML, "
            f"{rows[-1]['pairs']:,} pairs (max_df {rows[-1]['max_df']}), {rows[-1]['copied']:,} copied chars, "
            f"{wall:.1f} s; peak PSS JVM {rows[-1]['jvm_mib']:.0f} MiB, workers {rows[-1]['workers_mib']:.0f} MiB",
            flush=True,
        )

    mbs = [r["mb"] for r in rows]
    head = "".join(f"{str(r['factor']) + 'x':>8}" for r in rows)
    print(
        f"# scaling   stage       {head}   s per MB   exponent   peak PSS MiB at {factors[-1]}x: JVM workers  "
        "(1.0 = linear; seconds at each input)"
    )
    for stage in [*STAGES, "end to end"]:
        ys = [r["wall"] if stage == "end to end" else r["stages"].get(stage, 0.0) for r in rows]
        _, slope = fit(mbs, ys)
        cells = "".join(f"{y:8.1f}" for y in ys)
        last = rows[-1]
        jvm, workers = (
            (last["jvm_mib"], last["workers_mib"])
            if stage == "end to end"
            else (last["peaks"].get(stage, {}).get("jvm", 0.0), last["peaks"].get(stage, {}).get("workers", 0.0))
        )
        print(f"scaling   {stage:<11} {cells}   {slope:8.3f}   {exponent(mbs, ys):8.2f}   {jvm:27.0f} {workers:7.0f}")
    fixed, marginal = fit(mbs, [r["cpu"] for r in rows])
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import reference_loop

    reference_loop.warm_up()
    ref = reference_loop.run([shard(i) for i in range(args.base_shards * factors[-1])])
    print(
        "# scaling   stage CPU-s     "
        + "".join(f"{str(r['factor']) + 'x':>8}" for r in rows)
        + "   marginal CPU-s per MB (driver, JVM, workers)   fixed CPU-s"
    )
    for stage in ["spark_start", *STAGES]:
        ys = [sum((r["peaks_cpu"].get(stage) or {}).values()) for r in rows]
        if not any(ys):
            continue
        fixed_s, slope = fit(mbs, ys)
        roles = [fit(mbs, [(r["peaks_cpu"].get(stage) or {}).get(role, 0.0) for r in rows])[1] for role in ROLES]
        cells = "".join(f"{y:8.1f}" for y in ys)
        print(
            f"scaling   cpu {stage:<11} {cells}   {slope:8.4f}  ({roles[0]:7.4f} {roles[1]:7.4f} {roles[2]:7.4f})"
            f"   {fixed_s:8.1f}"
        )
    cells = "".join(f"{r['cpu']:8.1f}" for r in rows)
    print(f"scaling   cpu (CPU-s) {cells}   whole process tree at each input")
    print(
        f"scaling   marginal {marginal:.4f} CPU-s per MB of HTML, fixed {fixed:.1f} CPU-s per run; the reference loop "
        f"{ref['cpu_s_per_mb']:.4f} CPU-s per MB: marginal ratio {marginal / ref['cpu_s_per_mb']:.2f} (target <= 2)"
    )
    for stage, key, unit in (("candidates", "pairs", "pair"), ("passages", "copied", "copied char")):
        ys = [r["stages"].get(stage, 0.0) for r in rows]
        xs = [float(r[key]) for r in rows]
        print(f"scaling   {stage} against {unit}s: exponent {exponent(xs, ys):.2f} ({xs[0]:,.0f} -> {xs[-1]:,.0f} {unit}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
