"""What the report shows: one pair of documents, one frequent fingerprint hash.

Built by the caller (the Spark stage) from the PAIRS, PASSAGES, DOCUMENTS and HASH_FREQ tables;
``from_row`` builds one from table rows as dicts (``pyarrow.Table.to_pylist()`` or
``Row.asDict()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._checks import integer as _int
from ..crawl.hosts import host_of as host

#: (start_a, end_a, start_b, end_b, length): character offsets into text_a / text_b (Python str
#: indices, end exclusive) and the passage's length in normalized characters.
Passage = tuple[int, int, int, int, int]


def _opt_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{what} must be str or None, got {type(value).__name__}")


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of half-open [start, end) spans: sorted, overlapping and touching ones merged,
    empty ones dropped."""
    out: list[list[int]] = []
    for start, end in sorted((s, e) for s, e in spans if e > s):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def covered(spans: Iterable[tuple[int, int]]) -> int:
    """Characters covered by the union of the spans."""
    return sum(e - s for s, e in merge_spans(spans))


def unit_noun(unit: str | None) -> str:
    """What a run's lengths count, in words."""
    return {"word": "words", "code": "code tokens"}.get(unit or "char", "normalized characters")


@dataclass(frozen=True)
class PairView:
    """A pair of documents with what they share.

    ``passages`` are PASSAGES rows as ``(start_a, end_a, start_b, end_b, length)``: offsets
    into ``text_a`` / ``text_b`` (Python str indices, end exclusive; spans may overlap on one
    side), ``length`` in normalized characters. ``capped``: the passage search hit a cap, more
    may exist. Texts may be None (not loaded); offsets past a text's end are clipped on display.
    """

    doc_a: int
    doc_b: int
    url_a: str | None
    url_b: str | None
    shared: int
    fp_a: int
    fp_b: int
    resemblance: float
    containment_a: float
    containment_b: float
    text_a: str | None = None
    text_b: str | None = None
    passages: tuple[Passage, ...] = ()
    capped: bool = False
    source: str | None = None  # "a", "b", "tie", "unknown" (PAIRS.source); None: not known to the caller
    source_basis: str | None = None
    # where each page comes from: WARC-Date, WARC file and record offset (None: not known)
    fetch_a: str | None = None
    fetch_b: str | None = None
    warc_a: str | None = None
    warc_b: str | None = None
    # the other times the source is chosen on: HTTP Last-Modified and Date (None: not sent)
    last_modified_a: str | None = None
    last_modified_b: str | None = None
    http_date_a: str | None = None
    http_date_b: str | None = None
    offset_a: int | None = None
    offset_b: int | None = None
    # what was copied (PAIRS): normalized characters in passages, those outside each page's
    # template text, and their share of the page
    norm_copied_a: int | None = None
    norm_copied_b: int | None = None
    content_a: int | None = None
    content_b: int | None = None
    share_a: float | None = None
    share_b: float | None = None
    unit: str = "char"  # what lengths and content counts count: "char", "word" or "code" (tokens)

    @property
    def noun(self) -> str:
        return unit_noun(self.unit)

    def times(self, side: str) -> list[tuple[str, str | None]]:
        """The times a page's source rank is made of, in the order they are tried (PAIRS.source_basis
        names the first both pages have): (basis, time) for side "a" or "b"."""
        return [
            ("last_modified", getattr(self, f"last_modified_{side}")),
            ("warc_date", getattr(self, f"fetch_{side}")),
            ("http_date", getattr(self, f"http_date_{side}")),
        ]

    def deciding_time(self, side: str) -> str | None:
        """The page's time that decided which page is the source (its fetch time when none did)."""
        return dict(self.times(side)).get(self.source_basis or "") or getattr(self, f"fetch_{side}")

    def __post_init__(self) -> None:
        # Doc ids name files (pair/<doc_a>-<doc_b>.html): integers only, never strings.
        object.__setattr__(self, "doc_a", _int(self.doc_a, "doc_a"))
        object.__setattr__(self, "doc_b", _int(self.doc_b, "doc_b"))
        for name in (
            *("url_a", "url_b", "text_a", "text_b", "source", "source_basis", "fetch_a", "fetch_b", "warc_a", "warc_b"),
            *("last_modified_a", "last_modified_b", "http_date_a", "http_date_b"),
        ):
            _opt_str(getattr(self, name), name)
        for name in ("offset_a", "offset_b", "norm_copied_a", "norm_copied_b", "content_a", "content_b"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _int(getattr(self, name), name))
        passages = []
        for p in self.passages:
            if len(p) != 5:
                raise ValueError(f"a passage is (start_a, end_a, start_b, end_b, length), got {p!r}")
            sa, ea, sb, eb, length = (_int(v, "passage offset") for v in p)
            if not (0 <= sa <= ea and 0 <= sb <= eb):
                raise ValueError(f"passage offsets must satisfy 0 <= start <= end, got {p!r}")
            passages.append((sa, ea, sb, eb, length))
        object.__setattr__(self, "passages", tuple(passages))
        object.__setattr__(self, "capped", bool(self.capped))

    @property
    def key(self) -> str:
        """The file stem of the pair's page: built from the integer ids only."""
        return f"{self.doc_a:d}-{self.doc_b:d}"

    @property
    def host_a(self) -> str | None:
        return host(self.url_a)

    @property
    def host_b(self) -> str | None:
        return host(self.url_b)

    @property
    def cross_host(self) -> bool:
        """The two pages are on different hosts (unknown hosts count as different)."""
        return self.host_a is None or self.host_a != self.host_b

    @property
    def template_share(self) -> float | None:
        """The share of the copied characters that is template text (the larger of the sides)."""
        shares = [
            1.0 - content / copied
            for content, copied in ((self.content_a, self.norm_copied_a), (self.content_b, self.norm_copied_b))
            if content is not None and copied
        ]
        return max(shares) if shares else None

    @property
    def copied_a(self) -> int:
        """Characters of text_a inside some passage (the union of the passages' spans)."""
        return covered((p[0], p[1]) for p in self.passages)

    @property
    def copied_b(self) -> int:
        return covered((p[2], p[3]) for p in self.passages)

    @classmethod
    def from_row(
        cls,
        pair: Mapping[str, Any],
        passages: Iterable[Mapping[str, Any]] = (),
        *,
        text_a: str | None = None,
        text_b: str | None = None,
    ) -> PairView:
        """From a PAIRS row and that pair's PASSAGES rows (``capped`` if any row is)."""
        rows = list(passages)
        optional: dict[str, Any] = {
            name: pair.get(column)
            for name, column in (
                ("source", "source"),
                ("source_basis", "source_basis"),
                ("norm_copied_a", "copied_chars_a"),
                ("norm_copied_b", "copied_chars_b"),
                ("content_a", "content_chars_a"),
                ("content_b", "content_chars_b"),
                ("share_a", "content_share_a"),
                ("share_b", "content_share_b"),
            )
        }
        return cls(
            **optional,
            doc_a=pair["doc_a"],
            doc_b=pair["doc_b"],
            url_a=pair.get("url_a"),
            url_b=pair.get("url_b"),
            shared=pair["shared"],
            fp_a=pair["fp_a"],
            fp_b=pair["fp_b"],
            resemblance=pair["resemblance"],
            containment_a=pair["containment_a"],
            containment_b=pair["containment_b"],
            text_a=text_a,
            text_b=text_b,
            passages=tuple((r["start_a"], r["end_a"], r["start_b"], r["end_b"], r["length"]) for r in rows),
            capped=any(bool(r.get("capped")) for r in rows),
        )


@dataclass(frozen=True)
class HashView:
    """A frequent fingerprint hash (a HASH_FREQ row): documents and occurrences holding it,
    distinct hosts among those documents, and original text from where its k-gram starts."""

    hash: int
    docs: int
    occurrences: int
    hosts: int | None = None
    snippet: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "hash", _int(self.hash, "hash"))
        _opt_str(self.snippet, "snippet")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> HashView:
        return cls(
            hash=row["hash"],
            docs=row["docs"],
            occurrences=row["occurrences"],
            hosts=row.get("hosts"),
            snippet=row.get("snippet"),
        )


@dataclass(frozen=True)
class ClusterView:
    """A near-duplicate cluster (CLUSTERS rows of one cluster_id): its earliest member and some
    members' (doc_id, url)."""

    cluster_id: int
    size: int
    identical: int  # the most documents sharing one exact normalized text in it
    source_doc: int
    source_url: str | None
    members: tuple[tuple[int, str | None], ...] = ()


@dataclass(frozen=True)
class RunPages:
    """What the report's other pages show, collected by the caller from the tables:

    - ``failed_files``: LEDGER file rows that failed, as (file, reason, records_seen, parsed);
    - ``record_outcomes``: (status, reason, records) of the records that did not become text;
    - ``clusters``: the largest clusters;
    - ``dedup``: the dedup stage's statistics (None: no deduped table), and ``trimmed``: the
      most trimmed pages as (doc_id, url, original_chars, removed_chars, dropped_reason);
    - ``contamination``: a check's statistics and index (None: not a check), and ``covered``:
      the most covered new documents as (item id, or a page's URL, norm_chars, covered_chars, covered_share,
      longest, indexed_documents, the first matches' URLs).
    """

    failed_files: tuple[tuple[str, str | None, int | None, int | None], ...] = ()
    record_outcomes: tuple[tuple[str, str | None, int], ...] = ()
    clusters: tuple[ClusterView, ...] = ()
    total_clusters: int = 0
    dedup: Mapping[str, Any] | None = None
    trimmed: tuple[tuple[int, str | None, int, int, str | None], ...] = ()
    contamination: Mapping[str, Any] | None = None
    covered: tuple[tuple[str | None, int, int, float | None, int, int, tuple[str | None, ...]], ...] = ()


@dataclass(frozen=True)
class FigureEntry:
    """One PNG of the figures page: its file in figures/, and what it shows."""

    file: str
    title: str
    caption: str
    notebook: str = ""  # the notebook that explores the same numbers further
    error: str = ""  # why it could not be drawn (then there is no file)
