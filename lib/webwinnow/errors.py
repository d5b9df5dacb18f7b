"""Errors a user can act on: the command prints their message as one line and exits non-zero.

Exit status: 2 a usage error or refusal, 3 too many failed input files, 4 the environment failed
(disk full, a corrupt table file), 5 Spark died under the command (its JVM ran out of memory, or it or a
Python worker crashed or was killed), 130 interrupted. Anything else is a bug and keeps its traceback.
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

    kind: str  # "disk_full" | "corrupt_table" | "spark_died" | "out_of_memory"
    message: str
    exit_code: int = 4
    remedy: str = ""  # what to change before running again, when the message alone does not say


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


def exception_text(e: BaseException) -> str:
    """str(e), which for a Py4JJavaError asks the JVM for the Java exception's text: when the JVM
    is gone that call fails, and the text is what Py4J kept and the failure's own."""
    try:
        return str(e)
    except Exception as gone:  # a dead gateway: connection refused or reset
        return f"{getattr(e, 'errmsg', '') or type(e).__name__} ({type(gone).__name__}: {gone}); the JVM did not answer"


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
        text += " " + exception_text(e)
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
    r"Connection refused|py4j\.protocol\.Py4JNetworkError|the JVM did not answer|"
    # Py4J's client swallows the network error of a class lookup and says the class is missing
    # (SparkConf, or PythonRDD for a broadcast, on a JVM killed as the stage began): Spark's own
    # classes are there while it lives
    r"\b(?:org\.apache\.spark\.\S+|Spark\w*|Python(?:RDD|Utils|SQLUtils)) does not exist in the JVM",
    re.I,
)
#: A Java heap exhausted in a task or on the driver; Spark's executors then exit with status 52
#: (SparkExitCode.OOM), and in local mode that executor is the driver's JVM.
_OUT_OF_MEMORY = re.compile(r"java\.lang\.OutOfMemoryError(?::\s*([\w ]{1,40}))?|SparkOutOfMemoryError")
JVM_EXIT_OUT_OF_MEMORY = 52
_RAISE_MEMORY = (
    "give Spark more memory (spark.driver.memory in local mode, spark.executor.memory on a cluster, "
    "in the properties file that [spark] properties names) or more, smaller tasks ([spark] shuffle_partitions)"
)
#: What a job gets when the JVM shuts down under it: an executor's OutOfMemoryError makes it
#: exit (status 52), and its shutdown hook stops the SparkContext first, failing the jobs with this.
_JVM_ENDING = re.compile(r"SparkContext (?:was|has been) shut ?down|on a stopped SparkContext|SparkContext is stopped", re.I)


def jvm_ending(exc: BaseException) -> bool:
    """Whether exc says the SparkContext was shut down under a job: the JVM may still be exiting,
    and its exit status (52: out of memory) is worth a moment's wait."""
    return any(_JVM_ENDING.search(exception_text(e)) for e in _chain(exc))


_WORKER_DIED = re.compile(
    r"Python worker exited unexpectedly|crashed|Python worker .{0,40}(?:killed|died)|"
    r"SparkException: .{0,80}(?:EOFException|Connection reset)",
    re.I,
)


def spark_died(exc: BaseException, jvm_exit: int | None = None) -> EnvironmentFailure | None:
    """Whether exc says Spark died under the command: its JVM ran out of memory or is gone, or a
    Python worker was killed or crashed in a task (what a kill -9, the out-of-memory killer or a
    segfault does). jvm_exit is the exit status of the JVM this process started, if it has ended.
    The message names which; the caller adds where the run stands. Exit status 5."""
    text = ""
    gone = None
    for e in _chain(exc):
        name = type(e).__name__
        if gone is None and (
            name == "Py4JNetworkError" or isinstance(e, (ConnectionRefusedError, ConnectionResetError, BrokenPipeError))
        ):
            gone = f"Spark's JVM died ({name}: {exception_text(e)[:120].strip()})"
        text += " " + exception_text(e)
    oom = _OUT_OF_MEMORY.search(text)
    if oom is not None or jvm_exit == JVM_EXIT_OUT_OF_MEMORY:
        what = f"java.lang.OutOfMemoryError: {oom.group(1).strip()}" if oom and oom.group(1) else "java.lang.OutOfMemoryError"
        return EnvironmentFailure("out_of_memory", f"Spark ran out of memory ({what})", 5, _RAISE_MEMORY)
    if gone is not None:
        return EnvironmentFailure("spark_died", gone, 5)
    if _WORKER_DIED.search(text):
        return EnvironmentFailure("spark_died", "a Spark Python worker died in a task (killed or crashed)", 5)
    if _JVM_GONE.search(text):
        return EnvironmentFailure("spark_died", "Spark's JVM died (its connection is gone)", 5)
    if _JVM_ENDING.search(text):
        return EnvironmentFailure("spark_died", "Spark's JVM shut down under the run", 5)
    if jvm_exit not in (None, 0):  # whatever the error says, the JVM this process started has died
        return EnvironmentFailure("spark_died", f"Spark's JVM died (exit status {jvm_exit})", 5)
    return None
