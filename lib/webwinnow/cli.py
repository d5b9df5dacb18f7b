"""The `webwinnow` command: parse options once, build the Spark session once, run stages.

    webwinnow run INPUT... --out DIR [--k 50] [--w 100 | --t T] [--standard] [--conf FILE]
    webwinnow extract INPUT... --out DIR        (stage 1 alone)
    webwinnow fingerprint --out DIR             (stage 2 alone, on DIR/documents)
    webwinnow hash_freq|pairs|passages|clusters|report --out DIR   (one later stage alone)
    webwinnow sample OUT_DIR                    (the project's own sample crawl)

`spark-submit jobs/<stage>.py` takes the same options as `webwinnow <stage>`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .config import RunConfig, load_config

STAGES = ("extract", "fingerprint", "hash_freq", "pairs", "passages", "clusters", "report")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="webwinnow", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, help="output folder: one subfolder per table")
    common.add_argument("--conf", action="append", default=[], metavar="FILE",
                        help="TOML config file (repeatable; later files override earlier ones)")
    common.add_argument("--master", help="Spark master, e.g. local[*] (default from config)")
    winnow = argparse.ArgumentParser(add_help=False)
    winnow.add_argument("--k", type=int, help="noise threshold: k-gram length in normalized characters (50)")
    group = winnow.add_mutually_exclusive_group()
    group.add_argument("--w", type=int, help="window: hashes per window (100)")
    group.add_argument("--t", type=int, help="guarantee threshold t; sets w = t - k + 1")
    winnow.add_argument("--standard", action="store_true",
                        help="standard winnowing (rightmost minimum on ties) instead of robust")
    winnow.add_argument("--mod-p", type=int, metavar="P",
                        help="select hashes that are 0 mod P instead of winnowing (the paper's baseline)")
    pairing = argparse.ArgumentParser(add_help=False)
    pairing.add_argument("--max-df", type=int, metavar="N",
                         help="hashes in more than N documents are boilerplate: reported, never paired (default: auto)")
    pairing.add_argument("--min-shared", type=int, metavar="N", help="report pairs sharing >= N fingerprint hashes (1)")
    pairing.add_argument("--exclude", nargs="+", default=[], metavar="FILE",
                         help="template/licence text to leave out of pairing: WARC/ARC, HTML or text files")
    pairing.add_argument("--cluster-resemblance", type=float, metavar="R",
                         help="pairs with resemblance >= R join documents into clusters (0.5)")
    inputs = argparse.ArgumentParser(add_help=False)
    inputs.add_argument("inputs", nargs="+", metavar="INPUT",
                        help=".warc/.warc.gz/.arc/.arc.gz files, directories, globs, or a manifest of paths")
    inputs.add_argument("--max-failed-ratio", type=float, metavar="R",
                        help="fail the run (exit 3, nothing published) when more than this share of input files fail (0.1)")

    sub.add_parser("run", parents=[inputs, common, winnow, pairing], help="run every stage")
    sub.add_parser("extract", parents=[inputs, common], help="crawl files → documents, ledger")
    sub.add_parser("fingerprint", parents=[common, winnow], help="documents → fingerprints, doc_stats")
    sub.add_parser("hash_freq", parents=[common], help="fingerprints → hash_freq, rank_freq, power-law fit")
    sub.add_parser("pairs", parents=[common, pairing], help="fingerprints → pairs, pair_seeds")
    sub.add_parser("passages", parents=[common], help="pair_seeds + documents → passages")
    sub.add_parser("clusters", parents=[common, pairing], help="pairs → clusters")
    sub.add_parser("report", parents=[common], help="all tables → report/index.html")
    sample = sub.add_parser("sample", help="write the project's deterministic sample crawl")
    sample.add_argument("out", metavar="OUT_DIR")
    sample.add_argument("--pages", type=int, default=300)
    sample.add_argument("--seed", type=int, default=2003)
    return p


def resolve_config(args: argparse.Namespace) -> RunConfig:
    winnow: dict = {}
    if getattr(args, "k", None) is not None:
        winnow["k"] = args.k
    if getattr(args, "t", None) is not None:
        from .fingerprint import resolve_window

        k = winnow.get("k")
        if k is None:
            k = load_config(args.conf).winnow.k
        winnow["w"] = resolve_window(k, t=args.t)
    elif getattr(args, "w", None) is not None:
        winnow["w"] = args.w
    if getattr(args, "standard", False):
        winnow["robust"] = False
    if getattr(args, "mod_p", None) is not None:
        winnow["mod_p"] = args.mod_p
    pairs = {
        "max_df": getattr(args, "max_df", None),
        "min_shared": getattr(args, "min_shared", None),
        "cluster_resemblance": getattr(args, "cluster_resemblance", None),
    }
    spark = {"master": args.master} if getattr(args, "master", None) else {}
    extract = {"max_failed_ratio": getattr(args, "max_failed_ratio", None)}
    return load_config(args.conf, {"winnow": winnow, "pairs": pairs, "extract": extract, "spark": spark})


def _stage_config(cfg: RunConfig, out: str, stage: str) -> RunConfig:
    """Later stages must use the k and w the fingerprints were made with: take them from the table."""
    if stage in ("extract", "fingerprint"):
        return cfg
    from dataclasses import replace

    from .config import WinnowConfig
    from .output import read_table_config

    made = read_table_config(out, "fingerprints")["config"]["winnow"]
    return replace(cfg, winnow=WinnowConfig(**made))


def _run_stage(stage: str, spark, cfg: RunConfig, out: str, args: argparse.Namespace, inputs):
    """One stage's library call; returns what goes into the run summary."""
    import importlib

    module = importlib.import_module(f".stages.{stage}", __package__)
    if stage == "extract":
        return asdict(module.run(spark, inputs, cfg, out))
    if stage == "fingerprint":
        result = module.run(spark, cfg, out)
        return {**asdict(result), "density": result.density}
    if stage == "pairs":
        from .exclude import exclusion_hashes

        exclude = getattr(args, "exclude", None)
        return module.run(spark, cfg, out, exclusion_hashes(exclude, cfg.winnow.k, cfg.extract) if exclude else None)
    return module.run(spark, cfg, out)


def run_stages(stages: tuple[str, ...], args: argparse.Namespace, cfg: RunConfig) -> dict:
    """Run the named stages in order on one Spark session; returns the run summary.

    A command that starts from the crawl (run, extract) builds the whole output folder beside
    the old one and swaps it in only when every stage succeeded, so a folder never mixes tables
    of two runs; later stages alone replace their own tables, one at a time, atomically.
    """
    from .session import build_session

    final = os.path.abspath(args.out)
    fresh = "extract" in stages
    out = final + ".incomplete" if fresh else final
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    elif not os.path.isdir(final):
        raise FileNotFoundError(f"{final} does not exist: run 'webwinnow run INPUT... --out {args.out}' first")
    os.makedirs(out, exist_ok=True)
    summary: dict = {"out": final, "config": cfg.to_dict(), "tag": cfg.tag}
    inputs = None
    if fresh:
        from .storage import list_inputs

        inputs = list_inputs(args.inputs)
        summary["inputs"] = len(inputs)
    started = time.time()
    timings: dict[str, float] = {}
    spark = build_session(cfg.spark, args.master)
    timings["spark_start"] = round(time.time() - started, 1)
    try:
        for stage in stages:
            if stage not in ("extract", "fingerprint"):
                cfg = _stage_config(cfg, out, stage)
                summary["config"] = cfg.to_dict()
            began = time.time()
            summary[stage] = _run_stage(stage, spark, cfg, out, args, inputs)
            timings[stage] = round(time.time() - began, 1)
    finally:
        spark.stop()
    summary["seconds"] = round(time.time() - started, 1)
    summary["stage_seconds"] = timings
    if "report" in summary:  # where it will be once the folder is in place
        summary["report"] = os.path.join(final, os.path.relpath(summary["report"], out))
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")
    if fresh:
        from .output import replace_dir

        replace_dir(out, final)
    _print_summary(summary, cfg)
    return summary


def _print_summary(s: dict, cfg: RunConfig) -> None:
    w = cfg.winnow
    lines = []
    if "extract" in s:
        e = s["extract"]
        lines.append(
            f"read {e['files']} files in {e['tasks']} tasks: {e['records']:,} records = "
            f"{e['parsed']:,} parsed + {e['skipped']:,} skipped + {e['failed']:,} failed + "
            f"{e['flagged']:,} flagged ({e['failed_files']} files failed)"
        )
    if "fingerprint" in s:
        f = s["fingerprint"]
        expected = "1/p" if w.mod_p else "2/(w+1)"
        lines.append(
            f"{f['documents']:,} documents, {f['norm_chars']:,} normalized chars, {f['kgrams']:,} k-grams "
            f"→ {f['fingerprints']:,} fingerprints (k={w.k}, w={w.w}, t={w.t}, "
            f"{'robust' if w.robust else 'standard'}{f', mod p={w.mod_p}' if w.mod_p else ''})"
        )
        lines.append(f"density {f['density']:.4f} (expected {expected} = {w.expected_density:.4f} on random text)")
    if "hash_freq" in s:
        h = s["hash_freq"]
        fit, shares = h.get("fit") or {}, h.get("shares") or {}
        slope = f"{fit['slope']:.2f}" if fit.get("slope") is not None else "n/a"
        lines.append(f"{h['hashes']:,} distinct hashes; rank–frequency slope {slope}; "
                     f"seen in 1/2/3 documents: " + "/".join(f"{100 * (shares.get(key) or 0):.0f}%" for key in ("once", "twice", "three_times")))
    if "pairs" in s:
        p = s["pairs"]
        lines.append(f"{p['pairs']:,} document pairs share fingerprints (max_df {p['max_df']}"
                     f"{' auto' if p['max_df_auto'] else ''}; hashes in more documents are boilerplate)")
    if "passages" in s:
        lines.append(f"{s['passages']['passages']:,} copied passages")
    if "clusters" in s:
        c = s["clusters"]
        lines.append(f"{c['clusters']:,} near-duplicate clusters (resemblance >= {c['cluster_resemblance']}) "
                     f"holding {c['clustered_documents']:,} documents")
    if "report" in s:
        lines.append(f"report: {s['report']}")
    tables = sorted(p.name for p in Path(s["out"]).iterdir() if p.is_dir() and not p.name.startswith("."))
    lines.append(f"output: {s['out']}  tables: {', '.join(tables)}")
    lines.append(f"{s['seconds']} s: " + ", ".join(f"{k} {v}" for k, v in s["stage_seconds"].items()))
    print("\n".join(f"webwinnow: {line}" for line in lines), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "sample":
            from .sample import write_sample

            info = write_sample(args.out, pages=args.pages, seed=args.seed)
            print(f"webwinnow: sample crawl: {len(info['warc_files'])} WARC files, {info['html_pages']} HTML pages, "
                  f"{info['planted_copies']} planted copies in {os.path.abspath(args.out)}")
            return 0
        cfg = resolve_config(args)
        stages = STAGES if args.command == "run" else (args.command,)
        run_stages(stages, args, cfg)
        return 0
    except (ValueError, FileNotFoundError) as exc:
        print(f"webwinnow: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from .stages.extract import TooManyFailures

        if not isinstance(exc, TooManyFailures):
            raise
        print(f"webwinnow: run failed: {exc}\nwebwinnow: the ledger of this run is in "
              f"{os.path.abspath(args.out)}.incomplete/ledger; {os.path.abspath(args.out)} was not changed",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
