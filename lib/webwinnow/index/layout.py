"""The index's manifest and files: what an index is made with, what it holds, where each file is.

    IDX/_webwinnow_index.json               the manifest: settings, segments, counts, DF histogram
    IDX/fingerprints/b=XXXX/SEGMENT.parquet  (hash, doc_id, pos), sorted; bucket = the hash's top bits
    IDX/hash_df/b=XXXX/SEGMENT.parquet       (hash, docs): each hash's documents in that segment
    IDX/documents/b=XXXX/SEGMENT.parquet     the documents (coordinates, text, stats), sorted by doc_id
    IDX/directory/SEGMENT.parquet            every row group of the segment's files: its key range
    IDX/segments/SEGMENT.json                the segment's inputs and how they were read

A segment is what one build or append wrote: new files beside the old ones, never a rewrite.
The manifest names the segments that count; it is replaced in one rename (one upload on a
store), so a reader sees the index before an append or after it, and the files of an append
that failed are not part of it (the next append or compaction removes them). Document sets of
segments are disjoint (an input already indexed is refused), so a hash's document frequency
is the sum of its per-segment counts: current after every append with no rewrite.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import storage

if TYPE_CHECKING:
    from ..config import WinnowConfig

FORMAT = "webwinnow-index/1"
MANIFEST = "_webwinnow_index.json"
#: The index's tables and the column each is sorted and bucketed on.
KEYS = {"fingerprints": "hash", "hash_df": "hash", "documents": "doc_id"}
#: Rows per bucket file a new index aims at (fingerprints and hash_df; documents by text bytes).
BUCKET_ROWS = 1 << 20
BUCKET_TEXT_BYTES = 64 << 20
MAX_BITS = 12


@dataclass(frozen=True)
class Settings:
    """What fingerprints mean: an index answers only queries fingerprinted the same way."""

    k: int
    w: int
    robust: bool
    mod_p: int
    unit: str  # "char" (normalized characters), "word" or "code" (tokens): webwinnow.core.units
    unicode: str  # the Unicode database the character folding comes from
    lexer: str = ""  # unit "code": the Pygments lexer the tokens come from ("" for other units)
    tokens: str = ""  # unit "code": the tokenizer's normalization and Pygments release (codetokens.tokenizer)

    @classmethod
    def of(cls, w: WinnowConfig) -> Settings:
        """The settings fingerprints made with `w` have, here and now."""
        from ..core.charfold import UNICODE_VERSION
        from ..core.codetokens import tokenizer

        code = w.unit == "code"
        return cls(
            k=w.k,
            w=w.w,
            robust=w.robust,
            mod_p=w.mod_p,
            unit=w.unit,
            unicode=UNICODE_VERSION,
            lexer=w.lexer if code else "",
            tokens=tokenizer() if code else "",
        )

    def mismatch(self, other: Settings, *, query_w: bool = False) -> str:
        """Why a query made with `other` cannot use this index ("" = it can). query_w: the query
        may use a larger window (its fingerprints are then a subset of the index's)."""
        wrong = [
            f"{name} {getattr(other, name)!r} (the index has {getattr(self, name)!r})"
            for name in ("k", "robust", "mod_p", "unit", "lexer", "tokens", "unicode")
            if getattr(self, name) != getattr(other, name)
        ]
        if other.w != self.w and not (query_w and other.w > self.w and not self.mod_p):
            wrong.append(f"w {other.w} (the index has {self.w}{'; a query window must be larger' if query_w else ''})")
        return ", ".join(wrong)


@dataclass(frozen=True)
class Segment:
    id: str
    documents: int
    fingerprints: int
    hashes: int  # distinct hashes in this segment
    source: str  # the run folder or the inputs it was built from
    created: str


@dataclass(frozen=True)
class Manifest:
    settings: Settings
    bits: dict[str, int]  # per table: the bucket is the key's top `bits` bits (0: one bucket)
    segments: tuple[Segment, ...] = ()
    #: (document frequency, hashes with it) over the whole index: the automatic max_df's input
    df_histogram: tuple[tuple[int, int], ...] = ()
    webwinnow: str = ""
    updated: str = ""
    format: str = FORMAT

    @property
    def documents(self) -> int:
        return sum(s.documents for s in self.segments)

    @property
    def fingerprints(self) -> int:
        return sum(s.fingerprints for s in self.segments)

    @property
    def hashes(self) -> int:
        return sum(n for _, n in self.df_histogram)

    @property
    def segment_ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.segments)

    def identity(self) -> dict[str, Any]:
        """What a check's lookup records of the index it read: a different index, or this one
        after an append or a compaction, makes the check's later tables stale."""
        settings = asdict(self.settings)
        if not settings["tokens"]:
            del settings["tokens"]  # as before code tokens existed: checks against other indexes stay current
        return {"settings": settings, "segments": list(self.segment_ids)}

    def to_json(self) -> str:
        blob = asdict(self)
        blob["df_histogram"] = [list(x) for x in self.df_histogram]
        blob["documents"], blob["fingerprints"], blob["hashes"] = self.documents, self.fingerprints, self.hashes
        return json.dumps(blob, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        blob = json.loads(text)
        return cls(
            settings=Settings(**blob["settings"]),
            bits={k: int(v) for k, v in blob["bits"].items()},
            segments=tuple(Segment(**s) for s in blob["segments"]),
            df_histogram=tuple((int(d), int(n)) for d, n in blob["df_histogram"]),
            webwinnow=blob.get("webwinnow", ""),
            updated=blob.get("updated", ""),
            format=blob["format"],
        )


class NotAnIndex(ValueError):
    pass


def read_manifest(idx: str) -> Manifest:
    """The index at idx, or NotAnIndex saying what is there instead."""
    data = storage.read_bytes(storage.child(idx, MANIFEST))
    if data is None:
        what = "does not exist" if storage.info(idx) is None else f"is not a webwinnow index (no {MANIFEST})"
        raise NotAnIndex(f"{idx} {what}: build one with 'webwinnow index INPUT... --out {idx}'")
    try:
        manifest = Manifest.from_json(data.decode("utf-8"))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise NotAnIndex(
            f"{storage.child(idx, MANIFEST)} is damaged ({exc.__class__.__name__}: {exc}): rebuild the index"
        ) from None
    if manifest.format != FORMAT:
        raise NotAnIndex(f"{idx} is a {manifest.format} index; this webwinnow reads {FORMAT}: rebuild it")
    return manifest


def write_manifest(idx: str, manifest: Manifest) -> None:
    from .. import __version__

    manifest = replace(manifest, webwinnow=__version__, updated=_now())
    storage.write_bytes(storage.child(idx, MANIFEST), manifest.to_json().encode())


def new_segment_id() -> str:
    """Sortable by creation, unique without coordination."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(4)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_segment(segment_id: str, documents: int, fingerprints: int, hashes: int, source: str) -> Segment:
    return Segment(id=segment_id, documents=documents, fingerprints=fingerprints, hashes=hashes, source=source, created=_now())


def bucket_file(table: str, bucket: int, segment: str) -> str:
    """A bucket file's path inside the index (what directories record)."""
    return f"{table}/b={bucket:04x}/{segment}.parquet"


def directory_file(idx: str, segment: str) -> str:
    return storage.child(idx, "directory", f"{segment}.parquet")


def segment_file(idx: str, segment: str) -> str:
    return storage.child(idx, "segments", f"{segment}.json")


def choose_bits(rows: int, per_bucket: int) -> int:
    """Bucket bits for a table of `rows` rows (four times the buckets it needs now: room to grow
    by appends before a bucket gets large)."""
    need = max(1, -(-max(rows, 0) // per_bucket)) * 4
    return min(MAX_BITS, max(0, (need - 1).bit_length()))


def merged_histogram(before: Iterable[tuple[int, int]], moves: Iterable[tuple[int, int, int]]) -> tuple[tuple[int, int], ...]:
    """The DF histogram after an append: `moves` are (df before, df after, hashes) for the hashes
    the new segment has (df before 0: hashes new to the index)."""
    counts: dict[int, int] = {}
    for df, n in before:
        counts[df] = counts.get(df, 0) + n
    for old, new, n in moves:
        if old:
            counts[old] = counts.get(old, 0) - n
        counts[new] = counts.get(new, 0) + n
    if any(n < 0 for n in counts.values()):
        raise ValueError("the index's DF histogram does not match its hash_df files: rebuild the index")
    return tuple(sorted((d, n) for d, n in counts.items() if n))


def owned_files(idx: str, keep: Iterable[str]) -> list[str]:
    """Files under idx written by an index command for a segment not in `keep`: what a failed
    append left, or what a compaction replaced. Only names this layout gives are listed."""
    keep = set(keep)
    found = []
    for table in (*KEYS, "directory", "segments"):
        root = storage.child(idx, table)
        if storage.info(root) is None:
            continue
        for entry in storage.walk(root):
            name = entry.name.rsplit("/", 1)[-1]
            stem = name.rsplit(".", 1)[0]
            if name.endswith((".parquet", ".json")) and stem not in keep and _segment_like(stem):
                found.append(entry.name)
    return found


def _segment_like(stem: str) -> bool:
    head, _, tail = stem.partition("-")
    return len(head) == 15 and head[8] == "T" and len(tail) == 8 and all(c in "0123456789abcdef" for c in tail)


def remove_files(names: Iterable[str]) -> None:
    for name in names:
        fs, path = storage.locate(name)
        try:
            fs.delete_file(path)
        except FileNotFoundError:
            pass
    return None


def local_path(idx: str) -> str:
    return os.path.abspath(idx) if not storage.is_uri(idx) else idx


@dataclass(frozen=True)
class SegmentRecord:
    """IDX/segments/SEGMENT.json: which files a segment read, and how reading them went."""

    id: str
    inputs: list[str] = field(default_factory=list)
    extract: dict[str, Any] = field(default_factory=dict)

    def write(self, idx: str) -> None:
        storage.write_bytes(segment_file(idx, self.id), (json.dumps(asdict(self), indent=1) + "\n").encode())


def indexed_inputs(idx: str, manifest: Manifest) -> set[str]:
    """Every input file the index's segments were made from (by the path the documents name)."""
    found: set[str] = set()
    for seg in manifest.segments:
        data = storage.read_bytes(segment_file(idx, seg.id))
        if data:
            found.update(json.loads(data).get("inputs", []))
    return found
