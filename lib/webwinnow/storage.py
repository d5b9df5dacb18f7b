"""Where crawl files live: one filesystem layer for local disks and object stores.

A location is a local path or a URI (``file://``, ``s3://``, ``gs://``, ``hdfs://``, ...).
pyarrow.fs picks the filesystem from the URI (credentials and endpoints from the standard
variables: ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``GOOGLE_APPLICATION_CREDENTIALS`` ...),
so no code here knows one store from another. Hadoop's spellings of S3 (``s3a://``,
``s3n://``) name the same objects as ``s3://`` and are read as that, so a crawl gets the same
document ids whichever spelling a manifest uses. Local files stay plain absolute paths.

The driver lists and checks inputs with it; executors open crawl files with it (no Hadoop
connector needed to read a crawl). pyarrow is imported on first use: the command line loads
without it.
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import io
import os
import re
import stat
from dataclasses import dataclass
from typing import IO, Any

#: Hadoop's connector names for stores pyarrow knows by another scheme.
_ALIASES = {"s3a": "s3", "s3n": "s3"}
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)(.*)$")
_GLOB = re.compile(r"[*?\[]")
#: Reads from an object store are ranged GETs: big buffers make few of them.
_REMOTE_BUFFER = 8 << 20
_ADVICE = ": check the location and the store's credentials"


class StorageError(OSError):
    """A location that cannot be listed or read; the message names it and says why."""


@dataclass(frozen=True)
class Entry:
    name: str  # an absolute local path or a canonical URI
    size: int
    mtime_ns: int | None
    is_dir: bool = False


def is_uri(name: str) -> bool:
    return _URI.match(name) is not None


def canonical(name: str) -> str:
    """A local path made absolute (``file://`` dropped), or a URI with Hadoop's aliases resolved."""
    m = _URI.match(name)
    if not m:
        return os.path.abspath(name)
    scheme, authority, rest = m.groups()
    scheme = scheme.lower()
    if scheme == "file":
        return os.path.abspath(rest if authority in ("", "localhost") else authority + rest)
    return f"{_ALIASES.get(scheme, scheme)}://{authority}{rest}"


def is_local(name: str) -> bool:
    return not is_uri(canonical(name))


def join(base: str, relative: str) -> str:
    """relative (a manifest line) under base (a folder path or URI)."""
    if is_uri(relative) or os.path.isabs(relative):
        return canonical(relative)
    base = canonical(base)
    return base.rstrip("/") + "/" + relative if is_uri(base) else os.path.join(base, relative)


def parent(name: str) -> str:
    name = canonical(name)
    if not is_uri(name):
        return os.path.dirname(name)
    scheme, authority, rest = _URI.match(name).groups()  # type: ignore[union-attr]
    return f"{scheme}://{authority}{rest.rstrip('/').rsplit('/', 1)[0]}"


def basename(name: str) -> str:
    return canonical(name).rstrip("/").rsplit("/", 1)[-1]


@functools.lru_cache(maxsize=64)
def _root(scheme: str, authority: str) -> tuple[Any, str]:
    """The filesystem of scheme://authority and the pyarrow path of its root ("bucket", "/", ...).
    Cached: building one may ask the store a question (an S3 bucket's region)."""
    import pyarrow.fs as pafs

    try:
        fs, root = pafs.FileSystem.from_uri(f"{scheme}://{authority}/")
    except (OSError, ValueError) as exc:  # pyarrow.lib.ArrowInvalid is a ValueError
        if "Unrecognized filesystem" not in str(exc):
            raise StorageError(f"{scheme}://{authority}/: {_first_line(exc)}{_ADVICE}") from None
        found = _fsspec(scheme, authority)
        if found is None:
            raise StorageError(
                f"{scheme}://{authority}/: {scheme}:// is not a store webwinnow reads (it reads "
                "local paths, file://, s3:// or s3a://, gs://, hdfs://, http(s):// and what "
                "fsspec knows): download the files, or name them on one of those"
            ) from None
        return found
    return fs, root.rstrip("/")


def _fsspec(scheme: str, authority: str) -> tuple[Any, str] | None:
    """A store pyarrow has no filesystem for but fsspec has (https:// -- Common Crawl's
    data.commoncrawl.org --, az://, ...), wrapped so the rest of this module cannot tell."""
    try:
        import fsspec.core
        import pyarrow.fs as pafs
    except ImportError:
        return None
    if scheme not in fsspec.available_protocols():
        return None
    try:
        fs, root = fsspec.core.url_to_fs(f"{scheme}://{authority}/")
    except ImportError:  # the store's fsspec package (adlfs, ...) is not installed
        return None
    except Exception as exc:  # noqa: BLE001 - whatever the store's package raises on connecting
        raise StorageError(f"{scheme}://{authority}/: {_first_line(exc)}{_ADVICE}") from None
    root = root.rstrip("/")
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), root


def locate(name: str) -> tuple[Any, str]:
    """(pyarrow filesystem, its path) for a location."""
    name = canonical(name)
    m = _URI.match(name)
    if not m:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem(), name
    scheme, authority, rest = m.groups()
    fs, root = _root(scheme, authority)
    return fs, root + "/" + rest.lstrip("/")


def _name_of(base: str, base_path: str, path: str) -> str:
    """The location of `path`, a path pyarrow listed under the location `base` (at `base_path`)."""
    if not is_uri(base):
        return path
    return base.rstrip("/") + "/" + path[len(base_path.rstrip("/")) :].lstrip("/")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def info(name: str) -> Entry | None:
    """What is at a location (None when nothing is)."""
    if is_local(name):
        return _local_info(canonical(name), name)
    import pyarrow.fs as pafs

    fs, path = locate(name)
    try:
        fi = fs.get_file_info(path)
    except (OSError, ValueError) as exc:
        raise StorageError(f"{name}: {_first_line(exc)}{_ADVICE}") from None
    if fi.type == pafs.FileType.NotFound:
        return None
    return Entry(canonical(name), fi.size if fi.size is not None else -1, fi.mtime_ns, fi.type == pafs.FileType.Directory)


def walk(name: str, recursive: bool = True) -> list[Entry]:
    """Every file and folder under a folder, sorted by name."""
    base = canonical(name)
    if not is_uri(base):
        return sorted(_local_walk(base, recursive, name), key=lambda e: e.name)
    import pyarrow.fs as pafs

    fs, path = locate(base)
    try:
        found = fs.get_file_info(pafs.FileSelector(path, recursive=recursive))
    except (OSError, ValueError) as exc:
        raise StorageError(f"{name}: {_first_line(exc)}{_ADVICE}") from None
    out = [
        Entry(
            _name_of(base, path, fi.path), fi.size if fi.size is not None else -1, fi.mtime_ns, fi.type == pafs.FileType.Directory
        )
        for fi in found
    ]
    return sorted(out, key=lambda e: e.name)


# Local paths are looked at with os.stat, as pyarrow's LocalFileSystem does (symbolic links
# followed, a broken one or a path through a file is nothing, a folder has no size, anything
# neither file nor folder size -1): the command checks its inputs and output folder before it
# starts the JVM, and importing pyarrow (and NumPy with it) for that put 0.1 s before the
# JVM's start, on one core. tests/unit/test_storage.py holds both to the same answers.


def _stat_entry(path: str, st: os.stat_result) -> Entry:
    if stat.S_ISDIR(st.st_mode):
        return Entry(path, -1, st.st_mtime_ns, True)
    return Entry(path, st.st_size if stat.S_ISREG(st.st_mode) else -1, st.st_mtime_ns)


def _local_info(path: str, name: str) -> Entry | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise StorageError(f"{name}: {exc.strerror or exc}{_ADVICE}") from None
    return _stat_entry(path, st)


def _local_walk(folder: str, recursive: bool, name: str = "") -> list[Entry]:
    """name: the folder as the caller named it (the top of the walk), else "" below it."""
    found: list[Entry] = []
    try:
        listed = os.scandir(folder)
    except OSError as exc:
        if not name and exc.errno == errno.ELOOP:  # a link to a folder above: listed until the system refuses
            return found
        raise StorageError(f"{name or folder}: {exc.strerror or exc}{_ADVICE}") from None
    with listed:
        for entry in listed:
            path = folder + "/" + entry.name
            try:
                st = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):  # a broken link: not listed
                continue
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    continue
                raise StorageError(f"{path}: {exc.strerror or exc}{_ADVICE}") from None
            found.append(_stat_entry(path, st))
            if recursive and stat.S_ISDIR(st.st_mode):
                found.extend(_local_walk(path, recursive))
    return found


def has_glob(name: str) -> bool:
    return _GLOB.search(name) is not None


def glob(pattern: str) -> list[Entry]:
    """Files matching a glob: ``*``, ``?`` and ``[...]`` within one path segment, ``**`` across
    any number of them; names starting with a dot only when the pattern's segment does."""
    pattern = canonical(pattern)
    cut = _GLOB.search(pattern).start()  # type: ignore[union-attr]
    base = pattern[: pattern.rfind("/", 0, cut) + 1] or "."
    parts = pattern[len(base) :].split("/")
    deep = len(parts) > 1 or "**" in parts
    if info(base) is None:
        return []
    found = []
    for e in walk(base, recursive=deep):
        rel = e.name[len(canonical(base).rstrip("/")) + 1 :] if is_uri(base) else os.path.relpath(e.name, canonical(base))
        if not e.is_dir and _match(parts, rel.split("/")):
            found.append(e)
    return found


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    if not parts or (parts[0].startswith(".") and not pattern[0].startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], pattern[0]) and _match(pattern[1:], parts[1:])


def open_input(name: str) -> IO[bytes]:
    """A seekable binary reader: a local file, or an object read in large ranged requests."""
    name = canonical(name)
    if not is_uri(name):
        return open(name, "rb")
    fs, path = locate(name)
    try:
        raw = fs.open_input_file(path)
    except (OSError, ValueError) as exc:
        raise StorageError(f"{name}: {_first_line(exc)}{_ADVICE}") from None
    return io.BufferedReader(raw, buffer_size=_REMOTE_BUFFER)


def read_head(name: str, limit: int) -> bytes:
    """The first `limit` bytes of a file."""
    with open_input(name) as fh:
        return fh.read(limit)


def readable(name: str) -> bool:
    """False when a local file's permissions forbid reading it. An object store answers only when
    read (one request per file is too many to ask up front): its refusals become ledger rows."""
    name = canonical(name)
    return is_uri(name) or os.access(name, os.R_OK)


# -- writing (output folders on a store: see webwinnow.outputs.generations) --------------------------------


def child(base: str, *names: str) -> str:
    """base/names..., keeping base's spelling (Spark needs s3a:// where pyarrow reads s3://)."""
    if not is_uri(base):
        return os.path.join(base, *names)
    return "/".join([base.rstrip("/"), *names])


def read_bytes(name: str) -> bytes | None:
    """A whole small file, or None when it is not there."""
    fs, path = locate(name)
    try:
        with fs.open_input_stream(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        if info(name) is None:
            return None
        raise StorageError(f"{name}: {_first_line(exc)}{_ADVICE}") from None


def write_bytes(name: str, data: bytes) -> None:
    """Write a whole file. On an object store one upload: readers see the old object or the new
    one, never a part (which is what a commit record relies on)."""
    fs, path = locate(name)
    try:
        if not is_uri(canonical(name)):  # a local file: written beside, renamed over (atomic too)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.tmp-{os.getpid()}"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
            return
        with fs.open_output_stream(path) as fh:
            fh.write(data)
    except (OSError, ValueError) as exc:
        raise StorageError(f"{name}: cannot write ({_first_line(exc)}){_ADVICE}") from None


def delete_tree(name: str) -> None:
    """Delete a folder and everything under it (on an object store: every object of the prefix)."""
    fs, path = locate(name)
    try:
        fs.delete_dir(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        if info(name) is not None:
            raise StorageError(f"{name}: cannot delete ({_first_line(exc)}){_ADVICE}") from None


def delete_file(name: str) -> None:
    """Delete one file (an object), if it is there."""
    fs, path = locate(name)
    try:
        fs.delete_file(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        if info(name) is not None:
            raise StorageError(f"{name}: cannot delete ({_first_line(exc)}){_ADVICE}") from None


def upload_tree(local: str, name: str) -> None:
    """Copy a local folder's files to name/ (a report built on the driver's disk)."""
    import pyarrow.fs as pafs

    fs, path = locate(name)
    try:
        pafs.copy_files(local, path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
    except (OSError, ValueError) as exc:
        raise StorageError(f"{name}: cannot write ({_first_line(exc)}){_ADVICE}") from None
