"""Errors a user can act on: the command prints their message as one line and exits non-zero.

Exit status: 2 a usage error or refusal, 3 too many failed input files, 4 the environment failed
(disk full, a corrupt table file), 5 Spark died under the command (its JVM or a Python worker
crashed or was killed), 130 interrupted. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from dataclasses import dataclass


class UserError(ValueError):
    """Bad input, a refused --out, a missing table: the message says what to do. Exit status 2.

    A ValueError, so library callers that catch bad values catch it too.
    """

    exit_code = 2


class TooManyFailures(UserError):
    """More input files failed than extract.max_failed_ratio allows; documents were not written."""

    exit_code = 3


@dataclass(frozen=True)
class EnvironmentFailure:
    """A failure of the machine or the data on disk, not of webwinnow: said in one line, exit 4."""

    kind: str  # "disk_full" | "corrupt_table" | "spark_died"
    message: str
    exit_code: int = 4


_CORRUPT = re.compile(
    r"is not a Parquet file|Could not read footer|CorruptedFile|ParquetDecodingException|"
    r"expected magic number|Can not read value at|FAILED_READ_FILE|Invalid Parquet",
    re.I,
)
_PARQUET_PATH = re.compile(r"(?:file:)?/*(/[^\s'\"\]\[,/][^\s'\"\]\[,]*?\.parquet)")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def interrupted_by(exc: BaseException) -> bool:
    """Whether exc was raised while a KeyboardInterrupt unwound (a cleanup call into the
    interrupted JVM that failed in a finally block, say): then the run was interrupted."""
    return any(isinstance(e, KeyboardInterrupt) for e in _chain(exc))


def environment_failure(exc: BaseException, out: str) -> EnvironmentFailure | None:
    """The root cause of exc when it is a full disk or a corrupt Parquet file, else None.

    Spark's errors arrive as Py4J exceptions whose text holds the Java cause: they are matched on
    that text, since the Java exception classes do not cross into Python.
    """
    text = ""
    for e in _chain(exc):
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            return EnvironmentFailure(
                "disk_full",
                f"disk full (ENOSPC) writing {getattr(e, 'filename', None) or out}: "
                "free some space or give an --out on another disk, then rerun",
            )
        text += " " + str(e)
    if "No space left on device" in text:
        return EnvironmentFailure(
            "disk_full", f"disk full (ENOSPC) while writing {out}: free some space or give an --out on another disk, then rerun"
        )
    if _CORRUPT.search(text):
        m = _PARQUET_PATH.search(text)
        where = m.group(1) if m else "a table file"
        return EnvironmentFailure(
            "corrupt_table",
            f"{where} is corrupt (not a readable Parquet file): rerun the stage that writes its table, or the whole run",
        )
    return None


#: What Py4J and Spark say when the JVM is gone, or when a Python worker died under a task.
_JVM_GONE = re.compile(
    r"Answer from Java side is empty|Error while (?:sending|receiving)|Java gateway process exited|"
    r"Connection refused|py4j\.protocol\.Py4JNetworkError|"
    # Py4J's client swallows the network error of a class lookup and says the class is missing
    # (SparkConf, on a JVM killed as the stage began): Spark's own classes are there while it lives
    r"\b(?:org\.apache\.spark\.\S+|Spark\w*) does not exist in the JVM",
    re.I,
)
_WORKER_DIED = re.compile(
    r"Python worker exited unexpectedly|crashed|Python worker .{0,40}(?:killed|died)|"
    r"SparkException: .{0,80}(?:EOFException|Connection reset)",
    re.I,
)


def spark_died(exc: BaseException) -> EnvironmentFailure | None:
    """Whether exc says Spark died under the command: its JVM is gone, or a Python worker was
    killed or crashed in a task (what a kill -9, the out-of-memory killer or a segfault does).
    The message names which; the caller adds where the run stands. Exit status 5."""
    text = ""
    for e in _chain(exc):
        name = type(e).__name__
        if name == "Py4JNetworkError" or isinstance(e, (ConnectionRefusedError, ConnectionResetError, BrokenPipeError)):
            return EnvironmentFailure("spark_died", f"Spark's JVM died ({name}: {str(e)[:120].strip()})", 5)
        text += " " + str(e)
    if _WORKER_DIED.search(text):
        return EnvironmentFailure("spark_died", "a Spark Python worker died in a task (killed or crashed)", 5)
    if _JVM_GONE.search(text):
        return EnvironmentFailure("spark_died", "Spark's JVM died (its connection is gone)", 5)
    return None
