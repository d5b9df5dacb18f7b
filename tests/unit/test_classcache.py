"""The JVM's class-data archive: used only once written whole and checked, named after what it
depends on, never made where it is turned off."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

from webwinnow.stages import _classcache as cc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="class sharing is set up on Linux only")


def _fake_java(folder, code: int):
    """A `java` that answers every call with exit code `code` and logs its arguments."""
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f'#!/bin/sh\necho "$@" >> "{folder}/calls"\nexit {code}\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return java


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A JAVA_HOME with a fake java, a Spark home with two jars, and a cache folder of its own."""
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "spark" / "jars").mkdir(parents=True)
    for name in ("a.jar", "b.jar"):
        (tmp_path / "spark" / "jars" / name).write_bytes(b"x")
    return tmp_path


def test_the_first_run_writes_the_archive_and_later_runs_map_it(home):
    java = _fake_java(home / "jdk", 0)
    options, creation = cc.jvm_options(True, str(home / "spark"))
    folder = home / "cache" / "webwinnow" / "jvm"
    assert creation is not None and creation.tmp.parent == folder and not creation.final.exists()
    assert options.startswith(f"-XX:ArchiveClassesAtExit={creation.tmp} ") and cc.QUIET in options
    assert creation.java == os.path.realpath(java)
    creation.final.write_bytes(b"archive")
    options, again = cc.jvm_options(True, str(home / "spark"))
    assert again is None and options == f"-XX:SharedArchiveFile={creation.final} {cc.QUIET}"


def test_turned_off_there_is_no_option_and_nothing_is_written(home):
    _fake_java(home / "jdk", 0)
    assert cc.jvm_options(False, str(home / "spark")) == ("", None)
    assert not (home / "cache").exists()


def test_the_name_follows_the_jars_and_the_jvm(home):
    java = str(_fake_java(home / "jdk", 0))
    name = cc.archive_name(java, str(home / "spark"))
    assert name == cc.archive_name(java, str(home / "spark")) and name.endswith(".jsa")
    (home / "spark" / "jars" / "c.jar").write_bytes(b"y")  # a Spark upgrade
    assert cc.archive_name(java, str(home / "spark")) != name
    other = _fake_java(home / "jdk2", 0)  # another JDK
    assert cc.archive_name(str(other), str(home / "spark")) != cc.archive_name(java, str(home / "spark"))


def test_the_name_follows_the_class_path_as_the_jvm_checks_it(home, monkeypatch):
    """A JVM maps an archive only for the class path it was written with (the jars where they
    are, their sizes and times): the same Spark installed twice (two virtualenvs, a CI build)
    must not share a name, or the second one finds the first one's archive, refused, forever."""
    java = str(_fake_java(home / "jdk", 0))
    name = cc.archive_name(java, str(home / "spark"))
    shutil.copytree(home / "spark", home / "venv2" / "spark", copy_function=shutil.copy2)  # same jars, times too
    assert cc.archive_name(java, str(home / "venv2" / "spark")) != name
    jar = home / "spark" / "jars" / "a.jar"
    later = jar.stat().st_mtime + 60
    os.utime(jar, (later, later))  # reinstalled: same name and size, another time
    assert cc.archive_name(java, str(home / "spark")) not in (name, cc.archive_name(java, str(home / "venv2" / "spark")))
    touched = cc.archive_name(java, str(home / "spark"))
    assert cc.archive_name(java, str(home / "spark"), "/opt/extra.jar") != touched  # spark.driver.extraClassPath
    monkeypatch.setenv("SPARK_CONF_DIR", str(home / "conf"))  # the launcher puts it on the class path
    assert cc.archive_name(java, str(home / "spark")) != touched


def test_an_archive_unused_for_long_is_removed_when_another_is_written(home):
    java = os.path.realpath(_fake_java(home / "jdk", 0))
    folder = home / "cache" / "webwinnow" / "jvm"
    folder.mkdir(parents=True)
    current = folder / cc.archive_name(java, str(home / "spark"))
    old, recent, other = folder / "spark-0000000000000000.jsa", folder / "spark-1111111111111111.jsa", folder / "notes.jsa"
    for path in (current, old, recent, other):
        path.write_bytes(b"x")
    long_ago = time.time() - (cc.UNUSED_DAYS + 1) * 24 * 3600
    for path in (current, old, other):
        os.utime(path, (long_ago, long_ago))
    options, creation = cc.jvm_options(True, str(home / "spark"))  # maps current: nothing is written, nothing removed
    assert creation is None and str(current) in options and old.exists()
    assert current.stat().st_mtime > long_ago + 3600  # mapped now: kept as used
    current.unlink()
    _, creation = cc.jvm_options(True, str(home / "spark"))  # writes one: the unused ones go
    assert creation is not None and not old.exists() and recent.exists() and other.exists()


def _creation(home, code: int, written: bool, exit_code: int = 0):
    java = _fake_java(home / "jdk", code)
    _, creation = cc.jvm_options(True, str(home / "spark"))
    if written:
        creation.tmp.write_bytes(b"whole archive")
    # the "JVM": a process that ends when its stdin closes, with exit_code
    creation.proc = subprocess.Popen(
        [sys.executable, "-c", f"import sys; sys.stdin.read(); sys.exit({exit_code})"], stdin=subprocess.PIPE
    )
    creation.class_path = "/spark/conf/:/spark/jars/*"
    return creation, java


def test_an_archive_is_put_in_place_only_after_a_jvm_mapped_it(home):
    creation, _ = _creation(home, 0, written=True)
    creation.finish()
    assert creation.final.read_bytes() == b"whole archive" and not creation.tmp.exists()
    # the installation it is for, noted beside it: the archive goes when that is gone
    assert (creation.final.parent / (creation.final.name + ".jars")).read_text() == str(home / "spark" / "jars")
    calls = (home / "jdk" / "calls").read_text()
    assert f"-XX:SharedArchiveFile={creation.tmp} -Xshare:on -cp /spark/conf/:/spark/jars/* -version" in calls


@pytest.mark.parametrize(("check", "exit_code"), [(1, 0), (0, 1)])
def test_an_archive_a_jvm_refuses_or_one_from_a_failed_exit_is_removed(home, check, exit_code):
    creation, _ = _creation(home, check, written=True, exit_code=exit_code)
    creation.finish()
    assert not creation.final.exists() and not creation.tmp.exists()


def test_no_archive_written_leaves_nothing(home):
    creation, _ = _creation(home, 0, written=False)
    creation.finish()
    assert not creation.final.exists() and list(creation.tmp.parent.iterdir()) == []


def test_only_temporary_archives_of_killed_runs_are_cleared(home):
    _fake_java(home / "jdk", 0)
    folder = home / "cache" / "webwinnow" / "jvm"
    folder.mkdir(parents=True)
    name = cc.archive_name(os.path.realpath(home / "jdk" / "bin" / "java"), str(home / "spark"))
    old, fresh, other = folder / f".{name}.11.tmp", folder / f".{name}.12.tmp", folder / "notes.txt"
    for path in (old, fresh, other):
        path.write_bytes(b"x")
    long_ago = time.time() - cc.STALE_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    cc.jvm_options(True, str(home / "spark"))
    assert not old.exists() and fresh.exists() and other.exists()


def test_no_java_no_archive(home, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(home / "nowhere"))
    assert cc.jvm_options(True, str(home / "spark")) == ("", None)


class _Proc:
    def __init__(self, pid):
        self.pid = pid


class _Spark:
    """What refused() reads of a session: its JVM's process."""

    def __init__(self, pid):
        self.sparkContext = type("Context", (), {"_gateway": type("Gateway", (), {"proc": _Proc(pid)})()})()


def test_an_archive_the_jvm_did_not_map_is_removed_and_the_run_says_so(tmp_path):
    """The JVM says nothing when it refuses an archive: the check is whether the file is among
    the process's mappings (here this process's own, /proc/self/maps)."""
    import mmap

    held, other = tmp_path / "spark-held.jsa", tmp_path / "spark-other.jsa"
    held.write_bytes(b"x" * 4096)
    other.write_bytes(b"x" * 4096)
    with open(held, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ):
        me = _Spark(os.getpid())
        assert cc.mapped_by(os.getpid(), held) is True and cc.mapped_by(os.getpid(), other) is False
        assert not cc.refused(me, f"-Dx=1 -XX:SharedArchiveFile={held} {cc.QUIET}") and held.exists()
        assert cc.refused(me, f"-XX:SharedArchiveFile={other} {cc.QUIET}") and not other.exists()
    # no archive asked for, or no way to tell: nothing is removed
    other.write_bytes(b"x")
    assert not cc.refused(me, "-XX:+UseSerialGC")
    assert cc.mapped_by(2**22 + 12345, other) is None and not cc.refused(_Spark(2**22 + 12345), f"-XX:SharedArchiveFile={other}")
    assert not cc.refused(object(), f"-XX:SharedArchiveFile={other}") and other.exists()


def test_the_archive_of_an_installation_that_is_gone_is_removed_when_another_is_written(home):
    """A deleted virtualenv's or clone's archive (90-190 MB) does not wait for UNUSED_DAYS."""
    _fake_java(home / "jdk", 0)
    folder = home / "cache" / "webwinnow" / "jvm"
    folder.mkdir(parents=True)
    gone, here, unnoted = (folder / f"spark-{c * 16}.jsa" for c in "abc")
    for archive in (gone, here, unnoted):
        archive.write_bytes(b"x")
    (folder / f"{gone.name}.jars").write_text(str(home / "deleted-venv" / "jars"))
    (folder / f"{here.name}.jars").write_text(str(home / "spark" / "jars"))
    orphan = folder / "spark-dddddddddddddddd.jsa.jars"
    orphan.write_text(str(home / "spark" / "jars"))
    _, creation = cc.jvm_options(True, str(home / "spark"))
    assert creation is not None
    assert not gone.exists() and not (folder / f"{gone.name}.jars").exists() and not orphan.exists()
    assert here.exists() and (folder / f"{here.name}.jars").exists() and unnoted.exists()
