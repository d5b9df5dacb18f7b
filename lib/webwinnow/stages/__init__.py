"""The Spark stages, and the one table of them: what each reads, writes and depends on.

Every other place derives from ``STAGES``: the command line's subcommands and their options,
the run loop, resuming, the printed summary, which tables a stage run alone leaves stale,
``jobs/submit.py`` and the README's stage table (a test keeps it equal). One public module
per stage (``stages/<name>.py``) whose ``run(ctx: StageContext) -> dict`` does the work and
returns the statistics recorded beside its tables; a stage's preconditions are its row's
``check``. Helpers start with ``_``. No Spark in this file: a stage's code is imported only
when it runs. Adding a stage is one module and one row.

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
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..config import RunConfig
from ..errors import UserError

#: What the lookup stage writes in a check's folder: the indexed documents the new ones share a
#: fingerprint below the cap with, their stats and fingerprints, and the boilerplate hashes.
INDEXED = ("indexed_documents", "indexed_doc_stats", "indexed_fingerprints", "index_boilerplate")


def _extract_params(cfg: RunConfig) -> dict[str, Any]:
    # Task grouping changes no row (tests show it), and max_failed_ratio only decides whether
    # the documents are published at all.
    ignored = {"task_bytes", "max_files_per_task", "max_failed_ratio"}
    params = {k: v for k, v in asdict(cfg.extract).items() if k not in ignored}
    if cfg.winnow.unit == "code":
        params["text"] = "code"  # the code unit's documents hold the pages' code blocks, not their text
    return params


def _noun(w: dict) -> str:
    """What the run's counts of normalized units count."""
    return {"word": "words", "code": "code tokens"}.get(w.get("unit", "char"), "normalized characters")


def _fields(section: str, *names: str) -> Callable[[RunConfig], dict[str, Any]]:
    """A stage's settings that change its output: these of one config section."""
    return lambda cfg: {name: getattr(getattr(cfg, section), name) for name in names}


def _extract_lines(e: dict, w: dict) -> list[str]:
    return [
        f"read {e['files']} files in {e['tasks']} tasks: {e['records']:,} records = "
        f"{e['parsed']:,} parsed + {e['skipped']:,} skipped + {e['failed']:,} failed + "
        f"{e['flagged']:,} flagged ({e['failed_files']} files failed)"
    ] + (
        [
            "warning: no record became a document, so nothing can be compared: the ledger says why, record by "
            "record (non_html, http_status_NNN, ... : were these the crawl files you meant?)"
        ]
        if e["records"] and not e["parsed"]
        else []
    )


def _fingerprint_lines(f: dict, w: dict) -> list[str]:
    t = w["w"] + w["k"] - 1
    expected, value = ("1/p", 1 / w["mod_p"]) if w["mod_p"] else ("2/(w+1)", 2 / (w["w"] + 1))
    unit = {"word": " words", "code": " tokens"}.get(w.get("unit", "char"), "")
    return [
        f"{f['documents']:,} documents, {f['norm_chars']:,} {_noun(w)}, {f['kgrams']:,} k-grams "
        f"→ {f['fingerprints']:,} fingerprints (k={w['k']}, w={w['w']}, t={t}{unit}, "
        f"{'robust' if w['robust'] else 'standard'}{', mod p=' + str(w['mod_p']) if w['mod_p'] else ''})",
        f"density {f['density']:.4f} (expected {expected} = {value:.4f} on random text)",
        *_fingerprint_warnings(f, w),
    ]


def _fingerprint_warnings(f: dict, w: dict) -> list[str]:
    """What makes the rest of a run meaningless, said where the summary is read."""
    if not f["documents"]:
        return []
    if w.get("unit") == "code" and not f["norm_chars"]:
        return [
            f"warning: none of the {f['documents']:,} documents holds a code block (<pre>, or a <code> of several "
            "lines): a code run compares only those; run with --unit char or word for the pages' text"
        ]
    if not f["fingerprints"]:
        return [
            f"warning: no fingerprint was made: no document is k = {w['k']:,} {_noun(w)} long, so nothing can be "
            f"compared; lower --k (the documents hold {f['norm_chars']:,} {_noun(w)} in all)"
        ]
    return []


def _hash_freq_lines(h: dict, w: dict) -> list[str]:
    fit, shares = h.get("fit") or {}, h.get("shares") or {}
    slope = f"{fit['slope']:.2f}" if fit.get("slope") is not None else "n/a"
    seen = "/".join(f"{100 * (shares.get(key) or 0):.0f}%" for key in ("once", "twice", "three_times"))
    return [f"{h['hashes']:,} distinct hashes; rank–frequency slope {slope}; seen in 1/2/3 documents: {seen}"]


def _candidates_lines(p: dict, w: dict) -> list[str]:
    return [
        f"{p['candidate_pairs']:,} candidate document pairs share fingerprints (max_df {p['max_df']}"
        f"{' auto' if p['max_df_auto'] else ''}; hashes in more documents are boilerplate)"
    ]


def _passages_lines(p: dict, w: dict) -> list[str]:
    return [
        f"{p['pairs']:,} pairs share content: {p['passages']:,} copied passages, {p['content_chars']:,} {_noun(w)} of content",
        f"{p['template_pairs']:,} pairs share only template text (template_pairs: {p['template_only']:,} "
        f"template, {p['no_passage']:,} no passage)",
    ]


def _clusters_lines(c: dict, w: dict) -> list[str]:
    lines = [
        f"{c['clusters']:,} near-duplicate clusters (resemblance >= {c['cluster_resemblance']}) "
        f"holding {c['clustered_documents']:,} documents"
    ]
    if c.get("identical_documents"):
        lines.append(
            f"{c['identical_documents']:,} documents share their exact normalized text with another "
            f"({c['identical_texts']:,} distinct texts): each such group is in one cluster"
        )
    return lines


def _dedup_lines(d: dict, w: dict) -> list[str]:
    share = d["removed_chars"] / d["original_chars"] if d["original_chars"] else 0.0
    return [
        f"dedup: kept {d['kept']:,} of {d['documents']:,} documents ({d['near_duplicates']:,} near-duplicates "
        f"and {d['emptied']:,} emptied pages dropped); removed {d['removed_chars']:,} of {d['original_chars']:,} "
        f"characters ({100 * share:.1f}%): {d['copied_chars_removed']:,} copied from kept pages "
        f"({d['trimmed_documents']:,} pages trimmed), {d['template_chars_removed']:,} template"
        + (
            f"; {d['regrown_pairs']:,} pairs past the passage search's cap grown again whole for their cuts"
            if d.get("regrown_pairs")
            else ""
        ),
        *(
            [
                f"warning: dedup could not finish {d['incomplete_pairs']:,} pairs even grown again "
                "(passages.max_compared × 64 units compared): copies of theirs may stay in both pages; "
                "raise passages.max_compared"
            ]
            if d.get("incomplete_pairs")
            else []
        ),
    ]


def _lookup_lines(x: dict, w: dict) -> list[str]:
    return [
        f"index {x['index']}: {x['index_documents']:,} documents; the new documents' {x['query_hashes']:,} hashes: "
        f"{x['shared_hashes']:,} in the index below the cap (max_df {x['max_df']}{' auto' if x['max_df_auto'] else ''}), "
        f"{x['boilerplate_hashes']:,} boilerplate → {x['indexed_documents']:,} indexed documents to compare"
    ]


def _contamination_lines(c: dict, w: dict) -> list[str]:
    return [
        f"{c['contaminated']:,} of {c['documents']:,} new documents share a passage with the index "
        f"({c['half_covered']:,} at least half covered, {c['covered']:,} wholly); every shared passage of "
        f"t = {c['t']} {_noun(w)} outside template is found"
    ]


def _report_lines(index: Any, w: dict) -> list[str]:
    return [f"report: {index}"] if isinstance(index, str) else []


def _report_entry(stats: dict, where: str) -> Any:
    """The summary names the report by where its index page is."""
    from .. import storage

    return storage.child(where, stats["index"])


@dataclass
class StageContext:
    """What a stage runs with: the one argument of every stage's ``run``.

    folder: the run's folder (``outputs.folder.RunFolder``); ``out`` is where this command reads
    and writes its tables. inputs: the crawl files (a stage that reads no table); exclude: the
    --exclude files; index and manifest: the index a check reads; progress: the counters
    (stages._beacon.ReadCounters) the progress lines follow (a stage that reads the crawl).
    later: the stages the command runs after this one; handoff: what a stage leaves the later
    ones of the same command (extract's fingerprints, made as the texts were read), one dict
    for the whole command.
    """

    spark: Any
    cfg: RunConfig
    folder: Any
    inputs: tuple[Any, ...] = ()
    exclude: tuple[str, ...] = ()
    index: str = ""
    manifest: Any = None
    progress: Any = None
    later: tuple[str, ...] = ()
    handoff: dict[str, Any] = field(default_factory=dict)

    @property
    def out(self) -> str:
        return self.folder.location


@dataclass(frozen=True)
class StageCheck:
    """What a stage's preconditions are checked on, before Spark starts. fresh: the command starts
    from the crawl (the stage's input tables will be made by it); first: the stage is the first
    the command runs; metas: the run's tables' metadata as they are (empty when fresh)."""

    cfg: RunConfig
    out: str
    metas: Mapping[str, dict | None]
    fresh: bool
    first: bool
    inputs: tuple[str, ...] = ()
    index: str = ""
    exclude: tuple[str, ...] = ()


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _candidates_check(c: StageCheck) -> dict:
    """--exclude's files are part of what the candidate pairs are made from: their content."""
    return {"recipe_inputs": [(p, _file_digest(p)) for p in c.exclude]} if c.exclude else {}


def _winnow_of(metas: Mapping[str, dict | None], table: str) -> dict:
    return ((metas.get(table) or {}).get("config") or {}).get("winnow") or {}


def _fingerprint_check(c: StageCheck) -> dict:
    extracted = _winnow_of(c.metas, "documents")
    if c.first and not c.fresh and (extracted.get("unit") == "code") != (c.cfg.winnow.unit == "code"):
        kind = "code blocks" if extracted.get("unit") == "code" else "page text"
        mine = "code blocks" if c.cfg.winnow.unit == "code" else "page text"
        raise UserError(
            f"{c.out}: its documents hold {kind} and --unit {c.cfg.winnow.unit} fingerprints {mine}: "
            + (
                "add --unit code"
                if extracted.get("unit") == "code"
                else f"read the crawl again with 'webwinnow run INPUT... --out {c.out} --unit code'"
            )
        )
    return {}


def _dedup_check(c: StageCheck) -> dict:
    if c.fresh and c.cfg.winnow.unit == "code":
        raise UserError(
            "--dedup with --unit code: a code run's documents hold only their pages' code blocks, "
            "and dedup writes whole pages; dedup a run made with --unit char or word"
        )
    if not c.first or c.fresh:
        return {}
    if c.metas.get("indexed_documents"):
        raise UserError(
            f"{c.out} is a check's folder (new documents against an index): dedup works on "
            "a run's; run 'webwinnow run --dedup' over the crawl, or use the contamination table"
        )
    if _winnow_of(c.metas, "fingerprints").get("unit") == "code":
        raise UserError(
            f"{c.out} is a code run: its documents hold only their pages' code blocks, and "
            "dedup writes whole pages; dedup a run made with --unit char or word"
        )
    return {}


def _lookup_check(c: StageCheck) -> dict:
    """The index a check (or its lookup stage alone) reads: there, readable, made with the
    settings of the new fingerprints, and not holding the new input files already. Returns it
    (index, manifest) and what the lookup's tables are made from (recipe_inputs)."""
    from dataclasses import replace

    from .. import storage
    from ..config import WinnowConfig
    from ..core.charfold import UNICODE_VERSION
    from ..index.layout import NotAnIndex, Settings, indexed_inputs, read_manifest

    recorded = ((c.metas.get("indexed_documents") or {}).get("stats") or {}).get("index")
    index = c.index or recorded or ""
    if not index:
        raise UserError("lookup needs --index IDX (this folder records no index)")
    index = storage.canonical(index)
    try:
        manifest = read_manifest(index)
    except NotAnIndex as exc:
        raise UserError(f"--index {exc}") from None
    fingerprinted = _winnow_of(c.metas, "fingerprints")
    made = WinnowConfig(**fingerprinted) if fingerprinted else c.cfg.winnow
    settings = manifest.settings
    mine = replace(Settings.of(made), unicode=settings.unicode)  # Unicode: its own message below
    wrong = settings.mismatch(mine, query_w=True) or (
        settings.unicode != UNICODE_VERSION and f"Unicode {UNICODE_VERSION} (the index has {settings.unicode})"
    )
    if wrong:
        raise UserError(
            f"--index {index}: the new fingerprints would be made with {wrong}: rebuild the "
            "index with these settings, or check with the index's"
        )
    if c.inputs:
        already = indexed_inputs(index, manifest).intersection(c.inputs)
        if already:
            raise UserError(
                f"{sorted(already)[0]} is already in the index {index} ({len(already)} input "
                "files are): checking a crawl against itself pairs every page with itself; "
                "leave them out"
            )
    return {"index": index, "manifest": manifest, "recipe_inputs": {"index": index, **manifest.identity()}}


@dataclass(frozen=True)
class Stage:
    """One stage: its command-line help and options, the tables it reads and writes, the settings
    that change its output, and its summary lines. Its code is ``webwinnow.stages.<name>.run``."""

    name: str
    help: str
    reads: tuple[str, ...]  # tables that must exist and be current
    writes: tuple[str, ...]
    options: tuple[str, ...]  # the command line's option groups (see app.options: the groups of _parser)
    params: Callable[[RunConfig], dict[str, Any]] = field(default=lambda cfg: {})
    summary: Callable[[Any, dict], list[str]] = field(default=lambda stats, winnow: [])
    #: read when present and current, never required (their content equals a recomputation)
    uses: tuple[str, ...] = ()
    #: read when present (in a check's folder: the lookup stage's tables; a run's dedup tables),
    #: and then part of what the stage's tables are made from, like `reads`
    follows: tuple[str, ...] = ()
    #: its preconditions, before Spark starts: raises UserError; returns what it resolved (the
    #: lookup's index) for the runner to hand to the stage
    check: Callable[[StageCheck], dict] = field(default=lambda c: {})
    #: what the run's summary holds for it, given its statistics and where the run is
    entry: Callable[[dict, str], Any] = field(default=lambda stats, where: stats)
    #: the stages of the same command after whose end this one begins part of its work (its
    #: module's ``begin(ctx)``, ctx.later the stages still to run, this one among them): the
    #: report's figures, each group drawn once no later stage writes its tables
    begins_after: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return f"{__name__}.{self.name}"


STAGES: tuple[Stage, ...] = (
    Stage(
        "extract",
        "crawl files → documents, ledger",
        (),
        ("documents", "ledger"),
        ("inputs", "fresh"),
        _extract_params,
        _extract_lines,
    ),
    Stage(
        "fingerprint",
        "documents → fingerprints, doc_stats",
        ("documents",),
        ("fingerprints", "doc_stats"),
        ("winnow", "later"),
        lambda cfg: cfg.winnow.identity(),
        _fingerprint_lines,
        check=_fingerprint_check,
    ),
    Stage(
        "hash_freq",
        "fingerprints → hash_freq, rank_freq, power-law fit",
        ("fingerprints", "documents"),
        ("hash_freq", "rank_freq"),
        ("later",),
        summary=_hash_freq_lines,
    ),
    Stage(
        "lookup",
        "check: fingerprints + an index → indexed_documents ...",
        ("fingerprints", "documents"),
        INDEXED,
        ("check", "cap", "later"),
        lambda cfg: {**_fields("pairing", "max_df", "pair_budget")(cfg), "self_pairs": cfg.check.self_pairs},
        _lookup_lines,
        check=_lookup_check,
    ),
    Stage(
        "candidates",
        "fingerprints → candidate_pairs, pair_seeds",
        ("fingerprints", "documents"),
        ("candidate_pairs", "pair_seeds"),
        ("pairing", "later"),
        _fields("pairing", "max_df", "min_shared", "pair_budget", "max_repeats"),
        _candidates_lines,
        uses=("hash_freq",),
        check=_candidates_check,
        follows=("indexed_documents", "indexed_fingerprints", "index_boilerplate"),
    ),
    Stage(
        "passages",
        "pair_seeds → passages, pairs, template_pairs, template_kgrams",
        ("pair_seeds", "candidate_pairs", "documents"),
        ("pairs", "template_pairs", "passages", "template_kgrams"),
        ("later",),
        _fields("passages", "max_spans", "max_compared", "min_content"),
        _passages_lines,
        uses=("hash_freq",),
        follows=("indexed_documents", "index_boilerplate"),
    ),
    Stage(
        "clusters",
        "pairs + documents → clusters",
        ("pairs", "documents"),
        ("clusters",),
        ("clustering", "later"),
        _fields("clusters", "resemblance"),
        _clusters_lines,
        follows=("indexed_documents",),
    ),
    Stage(
        "contamination",
        "check: pairs + passages → contamination",
        ("passages", "pairs", "documents", "doc_stats", "indexed_documents"),
        ("contamination",),
        ("later",),
        summary=_contamination_lines,
    ),
    Stage(
        "dedup",
        "pairs + passages + clusters → deduped, deduped_jsonl",
        ("documents", "candidate_pairs", "pairs", "passages", "clusters"),
        ("deduped", "deduped_jsonl"),
        ("dedup", "later"),
        lambda cfg: asdict(cfg.dedup),
        _dedup_lines,
        uses=("hash_freq",),
        check=_dedup_check,
    ),
    Stage(
        "report",
        "all tables → report/index.html",
        (
            "ledger",
            "documents",
            "doc_stats",
            "hash_freq",
            "rank_freq",
            "candidate_pairs",
            "pairs",
            "template_pairs",
            "passages",
            "clusters",
        ),
        ("report",),
        (),
        _fields("report", "pairs", "details", "hashes", "figure_docs"),
        _report_lines,
        # dedup and the index check have pages of their own: a report is made from them when they
        # are there, so running dedup alone leaves the report stale (and --downstream redraws it)
        follows=("indexed_documents", "deduped", "contamination"),
        entry=_report_entry,
        begins_after=("hash_freq", "candidates", "passages"),
    ),
)
#: What `run` runs by default (dedup with --dedup), and what `check` runs.
RUN_STAGES = ("extract", "fingerprint", "hash_freq", "candidates", "passages", "clusters", "dedup", "report")
CHECK_STAGES = ("extract", "fingerprint", "hash_freq", "lookup", "candidates", "passages", "clusters", "contamination", "report")

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
        if dirty.intersection(s.reads + s.follows):
            out.append(s)
            dirty.update(s.writes)
    return out


def recipe(s: Stage, cfg: RunConfig, read_recipes: Mapping[str, str | None], inputs: Any = None) -> str:
    """The digest a table of stage s records: its settings and what it was made from."""
    from .. import __version__
    from ..core.charfold import UNICODE_VERSION

    blob = {
        "stage": s.name,
        "webwinnow": __version__,
        "unicode": UNICODE_VERSION,
        "params": s.params(cfg),
        "reads": {t: read_recipes[t] for t in sorted(s.reads)},
        # absent from a run's folder: a run's recipes stay what they were
        **({"follows": follows} if (follows := {t: read_recipes[t] for t in sorted(s.follows) if read_recipes.get(t)}) else {}),
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
            present = [t for t in s.follows if t in made_from or meta.get(t) is not None]
            for src in (*s.reads, *present):
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


def fingerprinted_before(s: Stage) -> bool:
    """Whether s comes after the stage that makes the fingerprints: it then works with the k and
    w they were made with (the fingerprints table's settings), whatever the command line says."""
    names = [x.name for x in STAGES]
    return names.index(s.name) > names.index(WRITER["fingerprints"].name)


def table_is_current(out: str, table: str) -> bool:
    """The table of the run folder at `out` exists, complete, and was made from the tables it read
    as they are now."""
    from ..outputs.tables import table_meta

    metas = {t: table_meta(out, t) for t in TABLES}
    return metas.get(table) is not None and table not in stale_tables(metas)
