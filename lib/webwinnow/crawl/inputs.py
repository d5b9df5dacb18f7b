"""Input listing: files, directories, globs and manifests of crawl files, resolved once on the driver.

Everything is checked here, before Spark starts: every path named must exist and be readable.
Paths are local or URIs of any store `webwinnow.storage` reaches (s3://, gs://, hdfs://). A manifest is a text file (optionally gzipped, like Common Crawl's ``warc.paths.gz``) whose
every line is a path of a crawl file (blank lines and ``#`` comments aside); relative lines are
resolved against the manifest's folder. A text file that does not look like that is an error
naming the line, never read as a list of paths by accident. `--prefix` resolves relative lines
against another folder (``s3://commoncrawl/`` or a local mirror of it); `--sample F` and `--limit N`
take a deterministic slice, and only the files kept must exist.
"""

from __future__ import annotations

import gzip
import hashlib
import io
from collections import defaultdict
from dataclasses import dataclass

from .. import storage
from ..errors import UserError

CRAWL_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wat", ".wat.gz", ".wet", ".wet.gz")
WAT_SUFFIXES = (".wat", ".wat.gz")
WET_SUFFIXES = (".wet", ".wet.gz")
#: Files of items (webwinnow.crawl.items): texts that are not crawl records.
ITEM_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".parquet", ".txt", ".text")
TEXT_SUFFIXES = (".txt", ".text")
#: What an INPUT may name, said once: the command line's help, the errors and the README use it.
CRAWL_FILES = "crawl files (.warc, .arc, .wat, .wet, each also .gz)"
ITEM_FILES = "item files (.jsonl, .ndjson, each also .gz; .parquet; .txt, .text)"
ACCEPTED = f"{CRAWL_FILES}, {ITEM_FILES}, folders, globs, or a manifest (a text file listing one path a line)"
_SHOWN = 5
#: Files of one folder checked with one listing of it rather than one question each (on an
#: object store, a listing is one request per thousand names).
_LIST_FROM = 8
_MANIFEST_MAX = 64 << 20


@dataclass(frozen=True, order=True)
class InputFile:
    path: str  # an absolute path or a canonical URI: also what document ids are derived from
    size: int
    mtime_ns: int | None = None


def is_crawl_file(name: str) -> bool:
    return name.lower().endswith(CRAWL_SUFFIXES)


def is_item_file(name: str) -> bool:
    return name.lower().endswith(ITEM_SUFFIXES)


def _is_input(name: str) -> bool:
    """A crawl file, or a file of items (webwinnow.crawl.items: JSONL, Parquet, text)."""
    return is_crawl_file(name) or is_item_file(name)


def _chosen(entries: list[storage.Entry]) -> list[storage.Entry]:
    """The crawl files among a folder's or a glob's files, or, when there is none, its item
    files (a folder of crawl files with a README.txt beside them: the crawl files only)."""
    crawl = [e for e in entries if is_crawl_file(storage.basename(e.name))]
    return crawl or [e for e in entries if _is_input(storage.basename(e.name))]


def _names_crawl_files(name: str) -> bool:
    """Whether a text file names crawl files on some line: a manifest with a bad line is refused,
    never read as one text item."""
    head = storage.read_head(name, _MANIFEST_MAX).decode("utf-8", "replace").lower()
    return any(suffix in head for suffix in (".warc", ".arc", ".wet", ".wat"))


def is_wet(name: str) -> bool:
    """Common Crawl's extracted-text files: their conversion records are the pages' text."""
    return name.lower().endswith(WET_SUFFIXES)


def _manifest_lines(name: str) -> list[str] | None:
    """The paths a manifest lists, or None when the file is not a manifest of crawl files."""
    try:
        head = storage.read_head(name, _MANIFEST_MAX)
        if name.lower().endswith(".gz"):
            with gzip.GzipFile(fileobj=io.BytesIO(head)) as fh:
                head = fh.read(_MANIFEST_MAX)
        lines = head.decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError, EOFError):  # gzip.BadGzipFile is an OSError
        return None
    out = []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not is_crawl_file(line.split("?", 1)[0]):
            return None
        out.append(line)
    return out or None


def _info(name: str) -> storage.Entry | None:
    try:
        return storage.info(name)
    except storage.StorageError as exc:
        raise UserError(f"input {exc}") from None


def _expand(spec: str, prefix: str | None = None) -> list[tuple[str, str, storage.Entry | None]]:
    """(location, where it was named, what is there if known) for every crawl file spec names;
    manifest lines are not checked yet (a sample or limit keeps only some of them)."""
    if storage.has_glob(spec):
        try:
            found = _chosen(storage.glob(spec))
        except storage.StorageError as exc:
            raise UserError(f"input {exc}") from None
        if not found:
            raise UserError(f"{spec!r} names none of the {CRAWL_FILES} or {ITEM_FILES}: check the path or glob")
        return [(e.name, "", e) for e in found]
    entry = _info(spec)
    if entry is None:
        return [(storage.canonical(spec), "", None)]
    if entry.is_dir:
        try:
            found = _chosen([e for e in storage.walk(spec) if not e.is_dir])
        except storage.StorageError as exc:
            raise UserError(f"input {exc}") from None
        if not found:
            raise UserError(f"{spec}: the folder holds none of the {CRAWL_FILES} or {ITEM_FILES}")
        return [(e.name, "", e) for e in found]
    if entry.size < 0:
        raise UserError(f"input {spec} is not a regular file or folder")
    if is_crawl_file(storage.basename(spec)):
        return [(entry.name, "", entry)]
    lines = _manifest_lines(entry.name)
    if lines is None:
        if is_item_file(storage.basename(spec)) and entry.size > 0 and not _names_crawl_files(entry.name):
            return [(entry.name, "", entry)]
        raise UserError(f"input {spec} is none of what an INPUT may be: {ACCEPTED}")
    base = prefix or storage.parent(entry.name)
    return [(storage.join(base, line), spec, None) for line in lines]


def sampled(name: str, fraction: float) -> bool:
    """Whether a file belongs to a FRACTION sample: decided by a hash of its file name alone, so
    the same files are chosen on every run, on every mirror of the crawl, whatever else is listed."""
    digest = hashlib.sha256(storage.basename(name).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def _look_up(names: list[str]) -> dict[str, storage.Entry | None]:
    """What is at each location: one listing per folder holding many of them, else one question each."""
    by_folder: dict[str, list[str]] = defaultdict(list)
    for name in names:
        by_folder[storage.parent(name)].append(name)
    found: dict[str, storage.Entry | None] = {}
    for folder, members in sorted(by_folder.items()):
        listed: dict[str, storage.Entry] = {}
        if len(members) >= _LIST_FROM:
            try:
                if _info(folder) is not None:
                    listed = {e.name: e for e in storage.walk(folder, recursive=False)}
            except (storage.StorageError, UserError):
                listed = {}  # a store without listings (a web server): ask file by file
        if any(m in listed for m in members):
            found.update({m: listed.get(m) for m in members})
        else:
            found.update({m: _info(m) for m in members})
    return found


def list_inputs(
    specs: list[str] | tuple[str, ...], prefix: str | None = None, limit: int | None = None, sample: float | None = None
) -> list[InputFile]:
    """Every crawl file the specs name, absolute, deduplicated, sorted (so ids and tasks are stable).

    Specs and prefix are local paths or URIs of any store pyarrow.fs reaches (s3://, gs://,
    hdfs://; s3a:// is read as s3://). prefix: what relative manifest lines are resolved against
    (default: the manifest's folder), e.g. s3://commoncrawl/ or a local mirror of it for the
    lines of Common Crawl's warc.paths.gz.
    sample: keep about this fraction of the files (by `sampled`); limit: then the first N.

    Raises UserError (a ValueError) when nothing is named, when a path does not exist or cannot
    be read, when a glob or folder holds no crawl file, when a text file is not a manifest, and
    when every input is a WAT file (metadata only: no page text to compare).
    """
    if not specs:
        raise UserError("no input given: pass WARC/ARC/WET files, directories, globs or a manifest of paths")
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")
    if sample is not None and not 0 < sample <= 1:
        raise UserError(f"--sample must be a fraction in (0, 1], got {sample}")
    if prefix is not None:
        prefix = storage.canonical(prefix)
        if storage.is_uri(prefix):  # on a store a prefix is a string: its files are checked one by one
            try:
                storage.locate(prefix)
            except storage.StorageError as exc:
                raise UserError(f"--prefix {exc}") from None
        elif (entry := _info(prefix)) is None or not entry.is_dir:
            raise UserError(f"--prefix {prefix} is not a folder: give the folder relative manifest lines are under")
    named: dict[str, tuple[str, storage.Entry | None]] = {}
    for spec in specs:
        for name, listed_in, entry in _expand(str(spec), prefix):
            if sample is None or sampled(name, sample):
                named.setdefault(name, (listed_in, entry))
    # the limit takes the first N in sorted order: the same files whatever order they were named in
    kept = sorted(named)[:limit] if limit else sorted(named)
    looked_up = _look_up([n for n in kept if named[n][1] is None])
    found: list[InputFile] = []
    missing: list[str] = []
    for name in kept:
        listed_in, entry = named[name]
        entry = entry or looked_up.get(name)
        if entry is None or entry.is_dir:
            missing.append(f"{name} (listed in {listed_in})" if listed_in else name)
            continue
        if not storage.readable(name):
            raise UserError(f"input {name} cannot be read (permission denied): fix its permissions")
        found.append(InputFile(name, entry.size, entry.mtime_ns))
    if missing:
        shown = "; ".join(missing[:_SHOWN]) + (f"; and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else "")
        raise UserError(f"{len(missing)} input path{'s do' if len(missing) > 1 else ' does'} not exist: {shown}")
    files = sorted(found)
    if not files:
        raise UserError(f"--sample {sample} keeps none of the inputs: take a larger fraction")
    if all(f.path.lower().endswith(WAT_SUFFIXES) for f in files):
        raise UserError(
            "every input is a WAT file (metadata records, no page text): give the WARC files, "
            "or the WET files for their extracted text"
        )
    return files


def group_inputs(files: list[InputFile], target_bytes: int, max_files: int = 64) -> list[list[InputFile]]:
    """Split files into task groups of about target_bytes each (whole files: the extract stage
    reads a large .warc.gz in pieces of its own).

    Files are assigned in sorted order, so the grouping and therefore the task of every record
    is the same on every run.
    """
    groups: list[list[InputFile]] = []
    current: list[InputFile] = []
    size = 0
    for f in files:
        if current and (size + max(f.size, 0) > target_bytes or len(current) >= max_files):
            groups.append(current)
            current, size = [], 0
        current.append(f)
        size += max(f.size, 0)
    if current:
        groups.append(current)
    return groups
