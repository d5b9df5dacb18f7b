"""Spark's Python daemon, for the local runs webwinnow starts: pyspark's own, with pyspark and
py4j imported from where they are installed rather than from Spark's zip files.

Spark puts `pyspark.zip` and py4j's zip first on its Python workers' path. Python compiles a
module imported from a zip every time (no bytecode is cached there): a worker forked from the
daemon spent 0.6 CPU-s importing pyspark's worker modules, against 0.1 s from the installed
package's cached bytecode. Where the same pyspark is installed in a folder on the path (pip's
pyspark, which the zip was copied from), the zips leave the path before pyspark's daemon is
imported; anything else (another version, no installed copy) keeps Spark's path as it is.

Nothing else is imported here: the daemon forks its workers, and a process that started threads
(pyarrow and numpy do at import) must not fork.
"""

from __future__ import annotations

import os
import sys
import zipfile

#: The zips Spark puts on its workers' path, by file name.
_ZIPS = ("pyspark.zip", "py4j-")


def installed_path(path: list[str]) -> list[str]:
    """`path` without Spark's zips of pyspark and py4j, where a folder on it holds the same pyspark
    (version.py identical) and a py4j; else `path` unchanged."""
    zips = [p for p in path if p.endswith(".zip") and os.path.basename(p).startswith(_ZIPS)]
    zipped = next((p for p in zips if os.path.basename(p) == "pyspark.zip"), None)
    if zipped is None:
        return path
    try:
        with zipfile.ZipFile(zipped) as z:
            version = z.read("pyspark/version.py")
    except (OSError, KeyError, zipfile.BadZipFile):
        return path
    folders = [p for p in path if p not in zips and os.path.isdir(p or ".")]
    if not any(_same(os.path.join(p or ".", "pyspark", "version.py"), version) for p in folders):
        return path
    if not any(os.path.isdir(os.path.join(p or ".", "py4j")) for p in folders):
        return path
    return [p for p in path if p not in zips]


def _same(name: str, content: bytes) -> bool:
    try:
        with open(name, "rb") as fh:
            return fh.read() == content
    except OSError:
        return False


if __name__ == "__main__":
    sys.path[:] = installed_path(sys.path)
    from pyspark.daemon import manager

    manager()
