"""Input listing: files, directories, globs and manifests of crawl files, resolved once on the driver.

A manifest is a text file (optionally gzipped, like Common Crawl's ``warc.paths.gz``) with one
path per line; relative lines are resolved against the manifest's folder. Inputs that name
nothing are kept as they are so the extract stage records them as failed files, never dropping
an input silently.
"""

from __future__ import annotations

import glob
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

CRAWL_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wat", ".wat.gz", ".wet", ".wet.gz")
MANIFEST_SUFFIXES = (".paths", ".paths.gz", ".txt", ".lst", ".list")


@dataclass(frozen=True, order=True)
class InputFile:
    path: str  # absolute path: also what document ids are derived from
    size: int  # -1 when the file cannot be read (it becomes a failed ledger row)


def is_crawl_file(name: str) -> bool:
    return name.lower().endswith(CRAWL_SUFFIXES)


def _is_manifest(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(MANIFEST_SUFFIXES) and not is_crawl_file(path.name)


def _read_manifest(path: Path) -> list[str]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        lines = [line.strip() for line in fh]
    out = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        out.append(line if os.path.isabs(line) else str(path.parent / line))
    return out


def _expand(spec: str, from_manifest: bool) -> list[str]:
    path = Path(spec)
    if any(ch in spec for ch in "*?["):
        return sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p) and is_crawl_file(p))
    if path.is_dir():
        return sorted(str(p) for p in path.rglob("*") if p.is_file() and is_crawl_file(p.name))
    if not from_manifest and _is_manifest(path):
        out: list[str] = []
        for line in _read_manifest(path):
            out.extend(_expand(line, from_manifest=True) or [line])
        return out
    return [spec]


def list_inputs(specs: list[str] | tuple[str, ...]) -> list[InputFile]:
    """Every crawl file the specs name, absolute, deduplicated, sorted (so ids and tasks are stable).

    Raises ValueError when nothing at all is named; a spec naming a missing file is kept (it
    becomes a failed ledger row) while a glob or directory with no crawl files is an error, since
    that is almost always a typo.
    """
    if not specs:
        raise ValueError("no input given: pass WARC/ARC files, directories, globs or a manifest of paths")
    found: dict[str, InputFile] = {}
    for spec in specs:
        paths = _expand(str(spec), from_manifest=False)
        if not paths:
            raise ValueError(
                f"{spec!r} names no .warc/.warc.gz/.arc/.arc.gz file: check the path or glob"
            )
        for p in paths:
            absolute = os.path.abspath(p)
            try:
                size = os.path.getsize(absolute)
            except OSError:
                size = -1
            found[absolute] = InputFile(absolute, size)
    return sorted(found.values())


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
