"""Input listing: files, directories, globs and manifests of crawl files, resolved once on the driver.

Everything is checked here, before Spark starts: every path named must exist and be readable.
A manifest is a text file (optionally gzipped, like Common Crawl's ``warc.paths.gz``) whose
every line is a path of a crawl file (blank lines and ``#`` comments aside); relative lines are
resolved against the manifest's folder. A text file that does not look like that is an error
naming the line, never read as a list of paths by accident. `--prefix` resolves relative lines
against another folder (a local mirror of Common Crawl's bucket); `--sample F` and `--limit N`
take a deterministic slice, and only the files kept must exist.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError

CRAWL_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wat", ".wat.gz", ".wet", ".wet.gz")
WAT_SUFFIXES = (".wat", ".wat.gz")
WET_SUFFIXES = (".wet", ".wet.gz")
_SHOWN = 5


@dataclass(frozen=True, order=True)
class InputFile:
    path: str  # absolute path: also what document ids are derived from
    size: int


def is_crawl_file(name: str) -> bool:
    return name.lower().endswith(CRAWL_SUFFIXES)


def is_wet(name: str) -> bool:
    """Common Crawl's extracted-text files: their conversion records are the pages' text."""
    return name.lower().endswith(WET_SUFFIXES)


def _manifest_lines(path: Path) -> list[str] | None:
    """The paths a manifest lists, or None when the file is not a manifest of crawl files."""
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                lines = fh.read(64 << 20).splitlines()
        else:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read(64 << 20).splitlines()
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
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


def _local(line: str, base: Path) -> str:
    if line.startswith("file://"):
        return line[len("file://"):]
    if "://" in line:
        raise UserError(f"{line}: remote inputs are not supported yet; download the files or mount the "
                        "store and list local paths")
    return line if os.path.isabs(line) else str(base / line)


def _expand(spec: str, missing: list[str], prefix: str | None = None) -> list[tuple[str, str]]:
    """(path, where it was named) for every crawl file spec names; manifest lines are not yet
    checked for existence (a sample or limit keeps only some of them)."""
    if "://" in spec and not spec.startswith("file://"):
        _local(spec, Path("."))
    spec = spec[len("file://"):] if spec.startswith("file://") else spec
    path = Path(spec)
    if any(ch in spec for ch in "*?["):
        found = sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p) and is_crawl_file(p))
        if not found:
            raise UserError(f"{spec!r} names no .warc/.warc.gz/.arc/.arc.gz/.wet file: check the path or glob")
        return [(f, "") for f in found]
    if path.is_dir():
        found = sorted(str(p) for p in path.rglob("*") if p.is_file() and is_crawl_file(p.name))
        if not found:
            raise UserError(f"{spec}: the folder holds no .warc/.warc.gz/.arc/.arc.gz/.wet file")
        return [(f, "") for f in found]
    if not path.exists():
        missing.append(spec)
        return []
    if not path.is_file():
        raise UserError(f"input {spec} is not a regular file or folder")
    if is_crawl_file(path.name):
        return [(spec, "")]
    lines = _manifest_lines(path)
    if lines is None:
        raise UserError(f"input {spec} is neither a crawl file (.warc, .warc.gz, .arc, .arc.gz, .wet, .wet.gz) "
                        "nor a manifest (a text file whose every line is the path of one)")
    base = Path(prefix) if prefix else path.parent
    return [(_local(line, base), spec) for line in lines]


def sampled(name: str, fraction: float) -> bool:
    """Whether a file belongs to a FRACTION sample: decided by a hash of its file name alone, so
    the same files are chosen on every run, on every mirror of the crawl, whatever else is listed."""
    digest = hashlib.sha256(os.path.basename(name).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def list_inputs(specs: list[str] | tuple[str, ...], prefix: str | None = None, limit: int | None = None,
                sample: float | None = None) -> list[InputFile]:
    """Every crawl file the specs name, absolute, deduplicated, sorted (so ids and tasks are stable).

    prefix: what relative manifest lines are resolved against (default: the manifest's folder),
    e.g. the local mirror of Common Crawl's bucket for the lines of its warc.paths.gz.
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
    if prefix is not None and "://" in prefix and not prefix.startswith("file://"):
        raise UserError(f"--prefix {prefix}: remote inputs are not supported yet; give a local folder")
    if prefix is not None:
        prefix = prefix[len("file://"):] if prefix.startswith("file://") else prefix
        if not os.path.isdir(prefix):
            raise UserError(f"--prefix {prefix} is not a folder: give the folder relative manifest lines are under")
    found: dict[str, InputFile] = {}
    missing: list[str] = []
    named: dict[str, str] = {}
    for spec in specs:
        for p, listed_in in _expand(str(spec), missing, prefix):
            if sample is None or sampled(p, sample):
                named.setdefault(os.path.abspath(p), listed_in)
    # the limit takes the first N in sorted order: the same files whatever order they were named in
    for absolute in sorted(named)[:limit] if limit else sorted(named):
        if not os.path.isfile(absolute):
            missing.append(f"{absolute} (listed in {named[absolute]})" if named[absolute] else absolute)
            continue
        if not os.access(absolute, os.R_OK):
            raise UserError(f"input {absolute} cannot be read (permission denied): fix its permissions")
        found[absolute] = InputFile(absolute, os.path.getsize(absolute))
    if missing:
        shown = "; ".join(missing[:_SHOWN]) + (f"; and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else "")
        raise UserError(f"{len(missing)} input path{'s do' if len(missing) > 1 else ' does'} not exist: {shown}")
    files = sorted(found.values())
    if not files and not missing:
        raise UserError(f"--sample {sample} keeps none of the inputs: take a larger fraction")
    if files and all(f.path.lower().endswith(WAT_SUFFIXES) for f in files):
        raise UserError("every input is a WAT file (metadata records, no page text): give the WARC files, "
                        "or the WET files for their extracted text")
    return files


def group_inputs(files: list[InputFile], target_bytes: int, max_files: int = 64) -> list[list[InputFile]]:
    """Split files into task groups of about target_bytes each (whole files, never split).

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
