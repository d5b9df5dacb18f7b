"""Configuration: frozen dataclasses, loaded from TOML files layered with command-line overrides.

Defaults live here, in the dataclasses; ``conf/webwinnow.toml`` spells the same values out for
people to copy and edit (a test keeps the two equal). Every stage writes the resolved
configuration next to its output, so a table always says how it was made.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ._checks import resolve_window

#: The Unicode database the character folding (core.charfold) is built from: part of every tag.
UNICODE_VERSION = unicodedata.unidata_version

MiB = 1 << 20


#: What a k-gram counts (webwinnow.core.units), and its k and w when none are given: the paper's web
#: setting for characters, Noplag's word 5-grams in windows of 16, and Dolos's 23 tokens in windows
#: of 17 for code. Analogi's 5 and 4 (the paper's MOSS row, made for a class's programs) pair idioms
#: on a crawl: on the Debian docs corpus, 1.2 M candidate pairs at k = 5 and 422 K at k = 12, whose
#: median longest passage (17 tokens) is a line like `std::cout << '\n' << std` (docs/performance.md).
UNITS = {"char": (50, 100), "word": (5, 16), "code": (23, 17)}


@dataclass(frozen=True)
class WinnowConfig:
    """Winnowing parameters: noise threshold k, window w (guarantee threshold t = w + k - 1), in
    units: normalized characters, words or code tokens."""

    k: int = 50
    w: int = 100
    robust: bool = True
    mod_p: int = 0  # > 0: the paper's 0 mod p baseline instead of winnowing
    unit: str = "char"  # "char", "word" or "code" (tokens of <pre>/<code> blocks)
    lexer: str = "c"  # unit "code": the Pygments lexer every text is tokenized with

    def __post_init__(self) -> None:
        resolve_window(self.k, w=self.w)
        if not isinstance(self.mod_p, int) or isinstance(self.mod_p, bool) or not 0 <= self.mod_p < 2**63:
            raise ValueError(f"winnow.mod_p must be an integer >= 0 and < 2**63, got {self.mod_p!r}")
        if self.unit not in UNITS:
            raise ValueError(f"winnow.unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if not isinstance(self.lexer, str) or not self.lexer:
            raise ValueError(f"winnow.lexer must name a Pygments lexer (python, c, java, ...), got {self.lexer!r}")
        if self.unit == "code":
            from .core.codetokens import check_lexer

            check_lexer(self.lexer)

    def identity(self) -> dict[str, Any]:
        """The settings that make fingerprints: the lexer, and the tokenizer's version, only count
        for code."""
        blob = dataclasses.asdict(self)
        if self.unit == "code":
            from .core.codetokens import tokenizer

            blob["tokens"] = tokenizer()
        else:
            del blob["lexer"]
        if self.unit == "char":
            del blob["unit"]  # as before units existed: char runs' tags are unchanged
        return blob

    @property
    def t(self) -> int:
        """Guarantee threshold: shared normalized substrings this long always share a fingerprint."""
        return self.w + self.k - 1

    @property
    def expected_density(self) -> float:
        return 1.0 / self.mod_p if self.mod_p else 2.0 / (self.w + 1)


@dataclass(frozen=True)
class ExtractConfig:
    """Caps and grouping for reading crawl files and turning HTML into text."""

    max_body_bytes: int = 32 * MiB  # an HTTP body as stored (before decoding) beyond this: flagged
    max_decoded_bytes: int = 32 * MiB  # after transfer/content decoding
    max_member_bytes: int = 4096 * MiB  # one decompressed gzip member (whole-file gzip is one member)
    max_html_bytes: int = 16 * MiB  # HTML handed to the parser
    max_nesting: int = 2000  # element nesting depth: Lexbor's parse time is quadratic in it
    task_bytes: int = 256 * MiB  # input bytes per Spark task
    split_bytes: int = 0  # a .warc.gz larger than this is read in pieces of about this size; 0: a task's share, >= 64 MiB
    max_files_per_task: int = 64
    max_failed_ratio: float = 0.1  # more failed input files than this share: the run fails, nothing published
    text_column: str = "text"  # items (JSONL, Parquet inputs): the column holding each item's text
    id_column: str = "id"  # ... and the one naming it (absent: the row number)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("text_column", "id_column"):
                if not isinstance(value, str) or not value:
                    raise ValueError(f"extract.{f.name} must be a column name, got {value!r}")
            elif f.name == "split_bytes":
                if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
                    raise ValueError(f"extract.split_bytes must be an integer >= 0 (0: automatic), got {value!r}")
            elif f.name == "max_failed_ratio":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                    raise ValueError(f"extract.max_failed_ratio must be within [0, 1], got {value!r}")
            elif not isinstance(value, int) or isinstance(value, bool) or not 1 <= value < 2**63:
                raise ValueError(f"extract.{f.name} must be a positive integer below 2**63, got {value!r}")


def _check_ints(section: str, obj: Any, lows: Mapping[str, int]) -> None:
    for name, low in lows.items():
        value = getattr(obj, name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value < 2**63:
            raise ValueError(f"{section}.{name} must be an integer >= {low} and < 2**63, got {value!r}")


@dataclass(frozen=True)
class PairingConfig:
    """The candidates stage: which documents share fingerprints below the boilerplate cap."""

    max_df: int = 0  # hashes in more documents are boilerplate, not paired; 0 = auto (see the candidates stage)
    min_shared: int = 1  # pairs sharing fewer distinct fingerprint hashes are not reported
    pair_budget: int = 200_000_000  # auto max_df keeps the hash self-join under this many rows
    max_repeats: int = 16  # a hash's first N occurrences in a document seed passages (0 = all)

    def __post_init__(self) -> None:
        _check_ints("pairing", self, {"max_df": 0, "min_shared": 1, "pair_budget": 1, "max_repeats": 0})


@dataclass(frozen=True)
class PassagesConfig:
    """The passages stage: the copied passages grown from a pair's seeds, content or template."""

    max_spans: int = 1000  # passages per pair
    max_compared: int = 20_000_000  # units (characters, words or tokens) compared per pair while growing passages
    min_content: int = (
        0  # a pair shares content when a passage holds a run of this many units outside template; 0 = t = w + k - 1
    )

    def __post_init__(self) -> None:
        _check_ints("passages", self, {"max_spans": 1, "max_compared": 1, "min_content": 0})


@dataclass(frozen=True)
class ClustersConfig:
    """The clusters stage: near-duplicate documents."""

    resemblance: float = 0.5  # pairs at least this resemblant link documents into clusters
    # up to this many linking edges are joined on the driver (union–find, about 40 bytes an edge);
    # more are joined in Spark (large-star / small-star rounds): the same clusters
    driver_edges: int = 5_000_000

    def __post_init__(self) -> None:
        if (
            isinstance(self.resemblance, bool)
            or not isinstance(self.resemblance, (int, float))
            or not 0.0 <= float(self.resemblance) <= 1.0
        ):
            raise ValueError(f"clusters.resemblance must be within [0, 1], got {self.resemblance!r}")
        if isinstance(self.driver_edges, bool) or not isinstance(self.driver_edges, int) or self.driver_edges < 0:
            raise ValueError(f"clusters.driver_edges must be an integer >= 0 (0: always in Spark), got {self.driver_edges!r}")


@dataclass(frozen=True)
class ReportConfig:
    """The report stage: how much of the run the HTML report shows."""

    pairs: int = 1000  # pairs listed (paged)
    details: int = 200  # side-by-side pages
    hashes: int = 200  # most frequent fingerprints on the boilerplate page
    figure_docs: int = 2000  # documents sampled for the figures page; 0 = no figures

    def __post_init__(self) -> None:
        _check_ints("report", self, {"pairs": 1, "details": 1, "hashes": 1, "figure_docs": 0})


@dataclass(frozen=True)
class DedupConfig:
    """What the dedup stage keeps of each page."""

    min_passage: int = 0  # copied passages this long (in units: characters, words or tokens) are removed from copies; 0 = t
    drop_near_duplicates: bool = True  # a cluster keeps its source_doc whole and drops its other members
    strip_template: bool = False  # template text removed from every page of a host but its first
    min_kept_chars: int = 1  # a page left with fewer letters and digits than this is dropped ("emptied")

    def __post_init__(self) -> None:
        for name in ("min_passage", "min_kept_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
                raise ValueError(f"dedup.{name} must be an integer >= 0 and < 2**63, got {value!r}")
        for name in ("drop_near_duplicates", "strip_template"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"dedup.{name} must be true or false, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class CheckConfig:
    """`webwinnow check`: new documents against an index."""

    self_pairs: bool = False  # also pair the new documents with each other
    query_w: int = 0  # fingerprint the new documents with this larger window (guarantee query_w + k - 1); 0 = the index's

    def __post_init__(self) -> None:
        if not isinstance(self.self_pairs, bool):
            raise ValueError(f"check.self_pairs must be true or false, got {self.self_pairs!r}")
        if not isinstance(self.query_w, int) or isinstance(self.query_w, bool) or not 0 <= self.query_w < 2**31:
            raise ValueError(f"check.query_w must be an integer >= 0, got {self.query_w!r}")


@dataclass(frozen=True)
class SparkConfig:
    master: str = ""  # "": spark-submit's --master, else local[*] (run directly)
    remote: str = ""  # sc://HOST:PORT: every stage through Spark Connect; "": SPARK_REMOTE, else none
    app_name: str = "webwinnow"
    properties: str = ""  # a Spark .properties file; relative paths are relative to the TOML file
    shuffle_partitions: int = 0  # 0: as configured for Spark, else one per core and per 64 MiB of input
    numba_cache_dir: str = ""  # where executors cache compiled kernels; "" = beside the package
    class_sharing: bool = True  # a local JVM maps (or, the first time, writes) a class-data archive

    def __post_init__(self) -> None:
        if not isinstance(self.class_sharing, bool):
            raise ValueError(f"spark.class_sharing must be true or false, got {self.class_sharing!r}")


@dataclass(frozen=True)
class RunConfig:
    winnow: WinnowConfig = field(default_factory=WinnowConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    pairing: PairingConfig = field(default_factory=PairingConfig)
    passages: PassagesConfig = field(default_factory=PassagesConfig)
    clusters: ClustersConfig = field(default_factory=ClustersConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    check: CheckConfig = field(default_factory=CheckConfig)
    spark: SparkConfig = field(default_factory=SparkConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def tag(self) -> str:
        """A short stable id of the settings that change fingerprints."""
        blob = json.dumps({"winnow": self.winnow.identity(), "unicode": UNICODE_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


_SECTIONS = {
    "winnow": WinnowConfig,
    "extract": ExtractConfig,
    "pairing": PairingConfig,
    "passages": PassagesConfig,
    "clusters": ClustersConfig,
    "report": ReportConfig,
    "dedup": DedupConfig,
    "check": CheckConfig,
    "spark": SparkConfig,
}
#: 0.2.0's [pairs] section, split into the sections of the stages that use its keys: where each went.
_MOVED = {
    "max_df": "pairing.max_df",
    "min_shared": "pairing.min_shared",
    "pair_budget": "pairing.pair_budget",
    "max_repeats": "pairing.max_repeats",
    "max_spans": "passages.max_spans",
    "max_chars": "passages.max_compared",
    "min_content": "passages.min_content",
    "cluster_resemblance": "clusters.resemblance",
    "report_pairs": "report.pairs",
    "report_details": "report.details",
    "report_hashes": "report.hashes",
    "report_figure_docs": "report.figure_docs",
}


def _merge(base: dict[str, dict[str, Any]], layer: Mapping[str, Any], source: str) -> None:
    """Layer the values of one file (or the command line) over base. Choosing a unit brings its
    own k and w unless the same layer gives them: k = 50 from the project's file must not
    become 50 words because a later layer said unit = "word"."""
    chosen = (layer.get("winnow") or {}).get("unit") if isinstance(layer.get("winnow"), Mapping) else None
    if isinstance(chosen, str) and chosen in UNITS and chosen != base.get("winnow", {}).get("unit", "char"):
        k, w = UNITS[chosen]
        base.setdefault("winnow", {}).update(k=k, w=w)
    for section, values in layer.items():
        if section == "pairs" and isinstance(values, Mapping):
            moved = ", ".join(f"pairs.{key} is now {_MOVED.get(key, '(gone)')}" for key in values) or "nothing in it"
            raise ValueError(f"{source}: [pairs] was split into [pairing], [passages], [clusters] and [report]: {moved}")
        if section not in _SECTIONS:
            raise ValueError(f"{source}: unknown section [{section}]; known: {', '.join(_SECTIONS)}")
        if not isinstance(values, Mapping):
            raise ValueError(f"{source}: [{section}] must be a table")
        known = {f.name for f in fields(_SECTIONS[section])}
        for key, value in values.items():
            if key not in known:
                raise ValueError(f"{source}: unknown key {section}.{key}; known: {', '.join(sorted(known))}")
            base.setdefault(section, {})[key] = value


def default_config_files() -> list[Path]:
    """The project's conf/webwinnow.toml (beside lib/ in a checkout or an editable install), so
    the direct command applies the same settings as `make run`; WEBWINNOW_CONF names another
    file ("" for none). An installed wheel has no conf/: the dataclass defaults apply."""
    import os

    named = os.environ.get("WEBWINNOW_CONF")
    if named is not None:
        return [Path(named)] if named else []
    project = Path(__file__).resolve().parents[2] / "conf" / "webwinnow.toml"
    return [project] if project.is_file() else []


def load_config(files: Sequence[str | Path] = (), overrides: Mapping[str, Mapping[str, Any]] | None = None) -> RunConfig:
    """Defaults, then each TOML file in order, then overrides ({section: {key: value}})."""
    merged: dict[str, dict[str, Any]] = {}
    for path in files:
        path = Path(path)
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            raise ValueError(f"config file {path} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"config file {path} is not valid TOML: {exc}") from None
        props = data.get("spark", {}).get("properties")
        if props and not Path(props).is_absolute():
            data["spark"]["properties"] = str((path.parent / props).resolve())
        _merge(merged, data, str(path))
    if overrides:
        _merge(merged, {s: {k: v for k, v in vals.items() if v is not None} for s, vals in overrides.items()}, "command line")
    return RunConfig(
        winnow=WinnowConfig(**merged.get("winnow", {})),
        extract=ExtractConfig(**merged.get("extract", {})),
        pairing=PairingConfig(**merged.get("pairing", {})),
        passages=PassagesConfig(**merged.get("passages", {})),
        clusters=ClustersConfig(**merged.get("clusters", {})),
        report=ReportConfig(**merged.get("report", {})),
        dedup=DedupConfig(**merged.get("dedup", {})),
        check=CheckConfig(**merged.get("check", {})),
        spark=SparkConfig(**merged.get("spark", {})),
    )
