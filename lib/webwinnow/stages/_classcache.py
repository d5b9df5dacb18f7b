"""The JVM's class-data sharing archive, for the local runs webwinnow starts itself.

A local run's JVM loads, parses and verifies thousands of classes from Spark's jars before its
first job and as each stage meets new operators: on the scaling input (1×) that was 7–8 of the
21–24 CPU-seconds the JVM spent in a whole run (Spark's start alone 5.6–6.4 → 2.9–3.1 with the
archive; docs/performance.md). Java's dynamic CDS archive (JDK 13 and later) keeps those classes
parsed and verified in a file the next JVM maps.

The first local run on a machine (per JDK and per Spark installation) has its JVM write the
archive when it exits: at the driver's exit the JVM's stdin is closed (what ends it when Python
exits in any case), the driver waits for it, then starts a JVM that must map the archive
(-Xshare:on, with the same class path) and only then renames the file into place. A JVM that
maps a truncated archive dies of SIGBUS, so no archive is used before it was written whole and
checked. Later runs map it. Its name is a digest of everything the JVM checks before it maps
one: the class path (Spark's folder where it is, each jar's size and time, the configuration
folders and extra class path the launcher adds) and the JVM itself. A JVM that finds any of it
changed maps no archive and says nothing: an archive named after less (the jars' names and
sizes) that a second installation of the same Spark had written (another virtualenv, a CI
build) was found by every run of the first one, refused, and never made again. An upgrade or
another installation gets a name of its own; an archive no run has mapped for UNUSED_DAYS, or
whose installation is gone (its jars folder, noted beside it), is removed when the next one is
written. Whether the JVM did map it is checked once it runs (the
archive is among its mapped files, /proc/PID/maps): one it refused all the same is removed, so
the next run writes one it maps, and the run's summary says `refused`. `spark.class_sharing = false` turns all of it off. The
archive (about 90-190 MB) lives in the user's cache folder, or NUMBA_CACHE_DIR when set.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: The JVM says nothing about the archive: a mismatch (another class path) only means no sharing.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: A temporary archive older than this was left by a run that was killed while its JVM wrote it.
STALE_SECONDS = 24 * 3600
#: How long the driver waits at exit for its JVM to write the archive, and for the check.
WAIT_SECONDS = 300
#: An archive no run has mapped for this long is removed when another one is written.
UNUSED_DAYS = 30
#: What the launcher adds to the JVM's class path besides Spark's jars (its environment).
CLASS_PATH_ENV = ("SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH")


@dataclass
class Creation:
    """An archive the JVM writes at its exit: checked and renamed into place at the driver's."""

    tmp: Path
    final: Path
    java: str
    jars: str = ""  # Spark's jars folder the archive is for (kept beside it: see _clear_unused)
    class_path: str = ""
    proc: subprocess.Popen | None = None

    def arm(self, spark) -> None:
        """Wait for this JVM at the driver's exit (registered now: after pyspark's own handlers)."""
        try:
            context = spark.sparkContext
            self.class_path = str(context._jvm.System.getProperty("java.class.path"))
            self.proc = context._gateway.proc
        except Exception:  # noqa: BLE001 - no handle on the JVM: no archive, nothing else changes
            return
        atexit.register(self.finish)

    def finish(self) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # the JVM exits on EOF, writing the archive as it does
            proc.wait(timeout=WAIT_SECONDS)
            if proc.returncode == 0 and self.tmp.is_file() and mappable(self.java, self.tmp, self.class_path):
                os.replace(self.tmp, self.final)
                if self.jars:
                    _jars_note(self.final).write_text(self.jars, encoding="utf-8")
        except Exception:  # noqa: BLE001 - the run is over: an archive not made is made next time
            pass
        finally:
            _unlink(self.tmp)


def jvm_options(enabled: bool, spark_home: str | None = None, extra_class_path: str = "") -> tuple[str, Creation | None]:
    """The JVM options that map the archive, or that have the JVM write it (with its Creation,
    to arm once the session exists); ("", None) where there is none to use or to make.
    extra_class_path: spark.driver.extraClassPath, which the launcher puts first."""
    if not enabled or not sys.platform.startswith("linux"):
        return "", None
    java = _java()
    folder = cache_folder()
    if java is None or folder is None:
        return "", None
    final = folder / archive_name(java, spark_home or _spark_home(), extra_class_path)
    if final.is_file():
        _touch(final)  # mapped now: not one to remove as unused
        return f"-XX:SharedArchiveFile={final} {QUIET}", None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _clear_stale(folder, final.name)
        _clear_unused(folder)
        tmp = folder / f".{final.name}.{os.getpid()}.tmp"
        if not os.access(folder, os.W_OK):
            return "", None
    except OSError:
        return "", None
    jars = os.path.join(os.path.abspath(spark_home or _spark_home()), "jars")
    return f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", Creation(tmp, final, java, jars)


def refused(spark, options: str) -> bool:
    """Whether the JVM this process started was told to map an archive (`options`, as
    jvm_options gave them) and did not; the archive is removed then (the next run writes one).
    False where it cannot tell (no /proc, no handle on the JVM's process)."""
    found = re.search(r"-XX:SharedArchiveFile=(\S+)", options)
    try:
        pid = spark.sparkContext._gateway.proc.pid
    except Exception:  # noqa: BLE001 - no handle on the JVM's process: nothing to check
        return False
    if found is None or mapped_by(pid, Path(found.group(1))) is not False:
        return False
    _remove_archive(Path(found.group(1)))
    return True


def mapped_by(pid: int, archive: Path) -> bool | None:
    """Whether process `pid` has the archive mapped (None: its maps cannot be read)."""
    real = os.path.realpath(archive)
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as fh:
            return any(line.rstrip("\n").endswith(" " + real) for line in fh)
    except OSError:
        return None


def archive_name(java: str, spark_home: str, extra_class_path: str = "") -> str:
    """spark-<digest>.jsa, the digest over what the archive depends on: the JVM (its binary and
    library), the class path as the JVM checks it (Spark's jars where they are, with their sizes
    and times; what the launcher adds), and Python's pyspark."""
    parts = [java, *jvm_stamps(java)]
    # the path as the launcher writes it (a symlinked virtualenv's own), not resolved
    jars = Path(os.path.abspath(spark_home)) / "jars" if spark_home else None
    if jars is not None and jars.is_dir():
        parts += sorted(file_stamp(p) for p in jars.glob("*.jar"))
    parts += [f"{name}={os.environ.get(name, '')}" for name in CLASS_PATH_ENV]
    parts.append(f"extraClassPath={extra_class_path}")
    try:
        from pyspark.version import __version__

        parts.append(__version__)
    except ImportError:
        pass
    return f"spark-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}.jsa"


def jvm_stamps(java: str) -> list[str]:
    """The file stamps of the JVM a java binary runs (its library and its modules image): an
    upgrade in place changes them, not the binary's path."""
    home = Path(java).resolve().parent.parent
    return [file_stamp(home / "lib" / "server" / "libjvm.so"), file_stamp(home / "lib" / "modules")]


def mappable(java: str, archive: Path, class_path: str) -> bool:
    """Whether a JVM with this class path maps the archive (and so neither refuses nor dies of it)."""
    try:
        done = subprocess.run(
            [java, f"-XX:SharedArchiveFile={archive}", "-Xshare:on", "-cp", class_path, "-version"],
            capture_output=True,
            timeout=WAIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _java() -> str | None:
    """The java Spark's launcher runs: JAVA_HOME's, else the one on PATH (resolved)."""
    home = os.environ.get("JAVA_HOME")
    candidate = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not candidate or not os.access(candidate, os.X_OK):
        return None
    return os.path.realpath(candidate)


def _spark_home() -> str:
    try:
        from pyspark.find_spark_home import _find_spark_home

        return _find_spark_home()
    except Exception:  # noqa: BLE001 - no Spark home found: the archive's name leaves the jars out
        return ""


def cache_folder() -> Path | None:
    """Where webwinnow keeps what it learns about the JVM (this archive, stages._launch's
    commands): the user's cache folder, or NUMBA_CACHE_DIR's when set; None without a home."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / "jvm"
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webwinnow" / "jvm"
    except RuntimeError:  # no home directory
        return None


def file_stamp(path: Path) -> str:
    """path:size:mtime_ns, or the path alone where it is not there: what a digest over files
    changes with."""
    try:
        st = path.stat()
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return str(path)


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # another user's archive, a read-only cache: it is still used
        pass


def _clear_unused(folder: Path) -> None:
    """Remove the archives no run has mapped for UNUSED_DAYS (an upgrade's), and those of an
    installation that is gone (its jars folder, noted beside the archive, no longer there: a
    removed virtualenv's, a deleted clone's): each is 90-190 MB."""
    limit = time.time() - UNUSED_DAYS * 24 * 3600
    for old in folder.glob("spark-*.jsa"):
        try:
            note = _jars_note(old)
            gone = note.is_file() and not os.path.isdir(note.read_text(encoding="utf-8"))
            if gone or old.stat().st_mtime < limit:
                _remove_archive(old)
        except OSError:
            pass
    for note in folder.glob("spark-*.jsa.jars"):
        if not note.with_name(note.name[: -len(".jars")]).exists():
            _unlink(note)


def _jars_note(archive: Path) -> Path:
    return archive.with_name(archive.name + ".jars")


def _remove_archive(archive: Path) -> None:
    _unlink(archive)
    _unlink(_jars_note(archive))


def _clear_stale(folder: Path, name: str) -> None:
    """Remove this archive's temporary files that runs killed while writing them left behind."""
    now = time.time()
    for tmp in folder.glob(f".{name}.*.tmp"):
        try:
            if now - tmp.stat().st_mtime > STALE_SECONDS:
                tmp.unlink()
        except OSError:
            pass


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
