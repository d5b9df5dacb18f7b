"""The table of stages: what each stage reads, writes and depends on, and how a table says it is current.

Every other place derives from ``STAGES``: the run loop, resuming, and which tables a stage
run alone leaves stale. No Spark here: a stage's code is imported only when it runs.

A table is **current** when it was made from the tables it read as they are now. Each stage
records in its tables' ``_webwinnow.json`` a *recipe*: a digest of the stage's own settings (only
those that change its output) and of the recipes of the tables it read, plus, for extract, the
input files (path, size, modification time). Change a setting or rewrite an upstream table and
every table downstream no longer matches: it is stale. Resuming keeps exactly the stages whose
recipe matches what they would be made from now.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from .config import RunConfig


def _extract_params(cfg: RunConfig) -> dict[str, Any]:
    # Task grouping changes no row (tests show it), and max_failed_ratio only decides whether
    # the documents are published at all.
    ignored = {"task_bytes", "max_files_per_task", "max_failed_ratio"}
    return {k: v for k, v in asdict(cfg.extract).items() if k not in ignored}


def _pairs_fields(*names: str) -> Callable[[RunConfig], dict[str, Any]]:
    return lambda cfg: {name: getattr(cfg.pairs, name) for name in names}


@dataclass(frozen=True)
class Stage:
    name: str
    help: str
    reads: tuple[str, ...]  # tables that must exist and be current
    writes: tuple[str, ...]
    params: Callable[[RunConfig], dict[str, Any]] = field(default=lambda cfg: {})
    #: read when present and current, never required (their content equals a recomputation)
    uses: tuple[str, ...] = ()


STAGES: tuple[Stage, ...] = (
    Stage("extract", "crawl files → documents, ledger", (), ("documents", "ledger"), _extract_params),
    Stage("fingerprint", "documents → fingerprints, doc_stats", ("documents",), ("fingerprints", "doc_stats"),
          lambda cfg: asdict(cfg.winnow)),
    Stage("hash_freq", "fingerprints → hash_freq, rank_freq, power-law fit", ("fingerprints", "documents"),
          ("hash_freq", "rank_freq")),
    Stage("pairs", "fingerprints → pairs, pair_seeds", ("fingerprints", "documents"), ("pairs", "pair_seeds"),
          _pairs_fields("max_df", "min_shared", "pair_budget"), uses=("hash_freq",)),
    Stage("passages", "pair_seeds + documents → passages", ("pair_seeds", "pairs", "documents"), ("passages",),
          _pairs_fields("max_spans", "max_chars"), uses=("hash_freq",)),
    Stage("clusters", "pairs → clusters", ("pairs",), ("clusters",), _pairs_fields("cluster_resemblance")),
    Stage("report", "all tables → report/index.html",
          ("ledger", "documents", "doc_stats", "hash_freq", "rank_freq", "pairs", "passages", "clusters"),
          ("report",), _pairs_fields("report_pairs", "report_details", "report_hashes")),
)

BY_NAME = {s.name: s for s in STAGES}
WRITER = {table: s for s in STAGES for table in s.writes}
TABLES = tuple(WRITER)


def stage(name: str) -> Stage:
    return BY_NAME[name]


def downstream(names: tuple[str, ...] | list[str]) -> list[Stage]:
    """Stages after the named ones that read (directly or through others) what they write, in order."""
    dirty = {t for n in names for t in BY_NAME[n].writes}
    out = []
    for s in STAGES:
        if s.name in names:
            continue
        if dirty.intersection(s.reads):
            out.append(s)
            dirty.update(s.writes)
    return out


def recipe(s: Stage, cfg: RunConfig, read_recipes: dict[str, str], inputs: Any = None) -> str:
    """The digest a table of stage s records: its settings and what it was made from."""
    from . import __version__
    from .unifold import UNICODE_VERSION

    blob = {
        "stage": s.name,
        "webwinnow": __version__,
        "unicode": UNICODE_VERSION,
        "params": s.params(cfg),
        "reads": {t: read_recipes[t] for t in sorted(s.reads)},
        "inputs": inputs,
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]


def stale_tables(meta: dict[str, dict[str, Any] | None]) -> dict[str, str]:
    """Tables (of those whose metadata is given; None = missing) that are no longer current, with why.

    A table is stale when a table it read has been rewritten since (its recipe changed), is
    missing, or is stale itself.
    """
    stale: dict[str, str] = {}
    for s in STAGES:
        for table in s.writes:
            record = meta.get(table)
            if record is None:
                continue
            made_from = record.get("reads", {})
            for src in s.reads:
                now = meta.get(src)
                if src in stale:
                    stale[table] = f"{src} is stale"
                elif now is None:
                    stale[table] = f"{src} is missing"
                elif made_from.get(src) != now.get("recipe"):
                    stale[table] = f"made from an earlier {src}"
                else:
                    continue
                break
    return stale
