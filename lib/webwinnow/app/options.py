"""The command line's arguments: the parser (one subcommand per stage, from STAGES) and the
configuration they resolve to (defaults, the project's TOML, --conf files, then options)."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..config import RunConfig, default_config_files, load_config
from ..crawl.inputs import ACCEPTED
from ..stages import STAGES

INPUT_HELP = ACCEPTED
DESCRIPTION = "The `webwinnow` command: check everything that can be checked, then run stages on one Spark session."


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="webwinnow", description=DESCRIPTION)
    p.add_argument("--version", action=_Version, nargs=0, help="show program's version number and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, help="output folder: one subfolder per table")
    common.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="FILE",
        help="TOML config file (repeatable; later files override earlier ones)",
    )
    common.add_argument("--master", help="Spark master, e.g. local[*] (default from config)")
    common.add_argument("--remote", metavar="sc://HOST:PORT", help="run through a Spark Connect server (default: SPARK_REMOTE)")
    talk = common.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print only errors, warnings and where the output is")
    talk.add_argument("-v", "--verbose", action="store_true", help="also show Spark's own output")
    fresh = argparse.ArgumentParser(add_help=False)
    fresh.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted or failed run from OUT.incomplete, keeping its finished stages",
    )
    fresh.add_argument(
        "--force",
        action="store_true",
        help="replace an --out folder that webwinnow did not make (never a file, never one holding an input)",
    )
    later = argparse.ArgumentParser(add_help=False)
    later.add_argument(
        "--downstream",
        action="store_true",
        help="also rerun the stages that read this stage's tables (otherwise they are marked stale)",
    )
    winnow = argparse.ArgumentParser(add_help=False)
    winnow.add_argument(
        "--unit",
        choices=("char", "word", "code"),
        help="what a k-gram counts: normalized characters (char, k=50 w=100), words (word, k=5 w=16), "
        "or tokens of the pages' <pre>/<code> blocks (code, k=23 w=17); k and w default by unit",
    )
    winnow.add_argument(
        "--lexer",
        metavar="NAME",
        help="--unit code: the Pygments lexer every text is tokenized with (c; python, java, bash, ...)",
    )
    winnow.add_argument("--k", type=int, help="noise threshold: k-gram length in units (50 characters)")
    group = winnow.add_mutually_exclusive_group()
    group.add_argument("--w", type=int, help="window: hashes per window (100)")
    group.add_argument("--t", type=int, help="guarantee threshold t; sets w = t - k + 1")
    winnow.add_argument(
        "--standard", action="store_true", help="standard winnowing (rightmost minimum on ties) instead of robust"
    )
    winnow.add_argument(
        "--mod-p", type=int, metavar="P", help="select hashes that are 0 mod P instead of winnowing (the paper's baseline)"
    )
    cap = argparse.ArgumentParser(add_help=False)
    cap.add_argument(
        "--max-df",
        type=int,
        metavar="N",
        help="hashes in more than N documents are boilerplate: reported, never paired (default: auto)",
    )
    pairing = argparse.ArgumentParser(add_help=False, parents=[cap], conflict_handler="resolve")
    pairing.add_argument("--min-shared", type=int, metavar="N", help="report pairs sharing >= N fingerprint hashes (1)")
    pairing.add_argument(
        "--exclude",
        nargs="+",
        default=[],
        metavar="FILE",
        help="template/licence text to leave out of pairing: WARC/ARC, HTML or text files",
    )
    clustering = argparse.ArgumentParser(add_help=False)
    clustering.add_argument(
        "--cluster-resemblance", type=float, metavar="R", help="pairs with resemblance >= R join documents into clusters (0.5)"
    )
    reading = argparse.ArgumentParser(add_help=False)
    reading.add_argument(
        "--prefix",
        metavar="DIR",
        help="resolve a manifest's relative lines against DIR (e.g. a local mirror of Common Crawl's bucket)",
    )
    reading.add_argument("--limit", type=int, metavar="N", help="read only the first N input files (in sorted order)")
    reading.add_argument(
        "--sample",
        type=float,
        metavar="FRACTION",
        help="read about FRACTION of the input files, chosen by a hash of each file name (the same every run)",
    )
    reading.add_argument(
        "--max-failed-ratio",
        type=float,
        metavar="R",
        help="fail the run (exit 3, nothing published) when more than this share of input files fail (0.1)",
    )
    reading.add_argument(
        "--text-column",
        metavar="NAME",
        help="items given as .jsonl/.parquet (a benchmark): the column with each item's text (text)",
    )
    reading.add_argument("--id-column", metavar="NAME", help="... and the column naming each item (id)")
    inputs = argparse.ArgumentParser(add_help=False, parents=[reading])
    inputs.add_argument("inputs", nargs="+", metavar="INPUT", help=INPUT_HELP)
    check = argparse.ArgumentParser(add_help=False)
    check.add_argument("--index", metavar="IDX", help="the fingerprint index to check against (webwinnow index)")
    check.add_argument(
        "--self", action="store_true", default=None, dest="self_pairs", help="also pair the new documents with each other"
    )

    dedup = argparse.ArgumentParser(add_help=False)
    dedup.add_argument(
        "--strip-template",
        action="store_true",
        default=None,
        help="dedup: also remove template text from every page of a host but its first",
    )
    dedup.add_argument(
        "--min-passage",
        type=int,
        metavar="N",
        help="dedup: remove copied passages of at least N units (normalized characters, words or tokens; default t)",
    )
    dedup.add_argument(
        "--keep-near-duplicates",
        action="store_true",
        help="dedup: keep every member of a near-duplicate cluster (cut their copied passages only)",
    )

    groups = {
        "inputs": inputs,
        "fresh": fresh,
        "later": later,
        "winnow": winnow,
        "pairing": pairing,
        "clustering": clustering,
        "dedup": dedup,
        "check": check,
        "cap": cap,
    }
    run = sub.add_parser(
        "run",
        parents=[inputs, common, fresh, winnow, pairing, clustering, dedup],
        help="run every stage (dedup too with --dedup)",
    )
    run.add_argument("--dedup", action="store_true", help="also write the deduplicated corpus (the dedup stage)")
    checking = sub.add_parser(
        "check",
        parents=[inputs, common, fresh, check, pairing, clustering],
        help="new crawl files against an index: pairs new ↔ indexed, passages, report",
    )
    checking.add_argument(
        "--query-w",
        type=int,
        metavar="W",
        help="fingerprint the new documents with a larger window W than the index's: faster, and the guarantee becomes W + k - 1",
    )
    index = sub.add_parser("index", parents=[reading, winnow], help="build, append to or compact a fingerprint index")
    index.add_argument("inputs", nargs="*", metavar="INPUT", help=INPUT_HELP)
    where = index.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", metavar="IDX", help="build a new index in IDX")
    where.add_argument("--index", metavar="IDX", help="the index to --append to or --compact")
    index.add_argument(
        "--from",
        dest="from_run",
        metavar="RUN_DIR",
        help="index an existing run's documents and fingerprints instead of reading INPUTs",
    )
    index.add_argument("--append", action="store_true", help="add the INPUTs (or --from RUN_DIR) to --index IDX as a new segment")
    index.add_argument("--compact", action="store_true", help="merge the segments of --index IDX into one")
    index.add_argument("--force", action="store_true", help="replace the index at --out (never anything else)")
    index.add_argument("--conf", action="append", default=[], metavar="FILE", help="TOML config file (repeatable)")
    index.add_argument("--master", help="Spark master, e.g. local[*] (default from config)")
    index.add_argument("--remote", metavar="sc://HOST:PORT", help="run through a Spark Connect server (default: SPARK_REMOTE)")
    talk = index.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print only errors and where the index is")
    talk.add_argument("-v", "--verbose", action="store_true", help="also show Spark's own output")
    for s in STAGES:
        sub.add_parser(s.name, parents=[common, *(groups[g] for g in s.options)], help=s.help)
    paper = sub.add_parser("paper-tables", help="the paper's density, gap and power-law measurements on a run")
    paper.add_argument("--out", required=True, help="a run's output folder (or its URI on a store)")
    paper.add_argument("--json", action="store_true", help="print the numbers as one JSON object instead")
    paper.add_argument(
        "--mod-p", type=int, metavar="P", help="the 0 mod P baseline (default: (w+1)/2, the same expected density as winnowing)"
    )
    paper.add_argument("--max-docs", type=int, metavar="N", help="measure only the first N documents")
    show = sub.add_parser("show", help="a run's results on the terminal: the top pairs, one pair's passages, the columns")
    show.add_argument("--out", help="a run's output folder (or its URI on a store)")
    show.add_argument("--top", type=int, default=20, metavar="N", help="how many pairs to list (20)")
    show.add_argument(
        "--pair", type=int, nargs="+", metavar="N", help="a listed pair's rank, or its two doc ids: its passages side by side"
    )
    show.add_argument("--passages", type=int, default=5, metavar="N", help="--pair: how many of its longest passages (5)")
    show.add_argument(
        "--columns", nargs="?", const="", metavar="TABLE", help="what each column of the tables (or of TABLE) means"
    )
    sample = sub.add_parser("sample", help="write the project's deterministic sample crawl")
    sample.add_argument("out", metavar="OUT_DIR")
    sample.add_argument("--pages", type=int, default=300)
    sample.add_argument("--seed", type=int, default=2003)
    sample.add_argument(
        "--site-tag",
        default="",
        help="put the sites under news.TAG.sample.test ...: shards "
        "written with other seeds and tags add up to a larger crawl (bench/bench_scaling.py)",
    )
    return p


def _version() -> str:
    from ..core.charfold import UNICODE_VERSION

    return f"webwinnow {__version__} (Python {sys.version.split()[0]}, Unicode {UNICODE_VERSION})"


class _Version(argparse.Action):
    """--version, its text made only when asked for: the Unicode version comes from the case-folding
    table's module, which imports NumPy (0.065 s of every command's start, before its JVM's)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def resolve_config(args: argparse.Namespace) -> RunConfig:
    """Defaults, the project's conf/webwinnow.toml when present, --conf files, then options."""
    files = [*default_config_files(), *args.conf]
    winnow: dict = {}
    for name in ("unit", "lexer"):
        if getattr(args, name, None) is not None:
            winnow[name] = getattr(args, name)
    if getattr(args, "k", None) is not None:
        winnow["k"] = args.k
    if getattr(args, "t", None) is not None:
        from .._checks import resolve_window

        k = winnow.get("k")
        if k is None:
            k = load_config(files, {"winnow": dict(winnow)}).winnow.k
        winnow["w"] = resolve_window(k, t=args.t)
    elif getattr(args, "w", None) is not None:
        winnow["w"] = args.w
    if getattr(args, "standard", False):
        winnow["robust"] = False
    if getattr(args, "mod_p", None) is not None:
        winnow["mod_p"] = args.mod_p
    pairing = {"max_df": getattr(args, "max_df", None), "min_shared": getattr(args, "min_shared", None)}
    clusters = {"resemblance": getattr(args, "cluster_resemblance", None)}
    dedup = {
        "strip_template": getattr(args, "strip_template", None),
        "min_passage": getattr(args, "min_passage", None),
        "drop_near_duplicates": False if getattr(args, "keep_near_duplicates", False) else None,
    }
    check = {"self_pairs": getattr(args, "self_pairs", None), "query_w": getattr(args, "query_w", None)}
    spark = {"master": args.master} if getattr(args, "master", None) else {}
    if getattr(args, "remote", None):
        spark["remote"] = args.remote
    extract = {
        "max_failed_ratio": getattr(args, "max_failed_ratio", None),
        "text_column": getattr(args, "text_column", None),
        "id_column": getattr(args, "id_column", None),
    }
    cfg = load_config(
        files,
        {
            "winnow": winnow,
            "pairing": pairing,
            "clusters": clusters,
            "extract": extract,
            "dedup": dedup,
            "check": check,
            "spark": spark,
        },
    )
    if getattr(args, "lexer", None) is not None and cfg.winnow.unit != "code":
        raise ValueError(
            f"--lexer {args.lexer}: a lexer tokenizes code, and this command counts {cfg.winnow.unit}s; "
            "add --unit code, or leave --lexer out"
        )
    return cfg


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed command line. An option the command does not know is refused by the command's
    own parser (its usage, not the top level's), with the nearest options it has."""
    import difflib

    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        sub = parser._subparsers._group_actions[0].choices[args.command]  # type: ignore[union-attr,index]
        known = [o for action in sub._actions for o in action.option_strings]
        hints = sorted(
            {
                m
                for u in unknown
                if u.startswith("-")
                for m in difflib.get_close_matches(u.split("=", 1)[0], known, n=2, cutoff=0.6)
            }
        )
        sub.error(f"unrecognized arguments: {' '.join(unknown)}" + (f" (did you mean {' or '.join(hints)}?)" if hints else ""))
    return args


# -- what a stage is made from ------------------------------------------------------------------
