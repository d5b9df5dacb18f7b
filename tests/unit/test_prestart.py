"""The Python daemon the driver starts beside the JVM (stages._prestart), with the JVM played by the
test: it starts webwinnow's daemon module as Spark does, with Spark's environment and path, and
reads the daemon's port from it."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import webwinnow.stages._prestart as prestart

if not sys.platform.startswith("linux"):
    pytest.skip("the daemon is prestarted on Linux", allow_module_level=True)

LIB = Path(prestart.__file__).resolve().parents[2]


def _spark_path() -> str:
    """PYTHONPATH as Spark gives its daemon: its zips of pyspark and py4j first."""
    import pyspark

    zips = sorted((Path(pyspark.__file__).parent / "python" / "lib").glob("*.zip"))
    assert any(z.name == "pyspark.zip" for z in zips)
    return os.pathsep.join([*map(str, zips), str(LIB)])


def _as_the_jvm(handle: prestart.Prestarted | None, **env: str) -> subprocess.Popen:
    """Start the daemon module as Spark's JVM does, and read its port as the JVM does."""
    environ = {**os.environ, **prestart.SPARK_SETS, "PYTHONPATH": _spark_path(), "PYTHON_WORKER_FACTORY_SECRET": "s3cret"}
    environ["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")
    if handle is not None:
        environ[prestart.SOCKET_ENV] = handle.socket_path
    environ.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "webwinnow.stages._daemon", "pyspark.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environ,
    )


def _port(jvm_side: subprocess.Popen) -> int:
    got = jvm_side.stdout.read(4)
    assert len(got) == 4, "the daemon gave no port"
    return struct.unpack("!i", got)[0]


def _listener(port: int) -> int:
    """The pid of the process that listens on the loopback port."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A":  # LISTEN
            inodes.add(fields[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in {f"socket:[{i}]" for i in inodes}:
                    return int(pid)
        except OSError:
            continue
    raise AssertionError(f"nothing listens on port {port}")


def test_the_jvms_daemon_hands_over_to_the_prestarted_one_and_stands_in_for_it():
    handle = prestart.start()
    assert handle is not None
    jvm_side = _as_the_jvm(handle)
    try:
        port = _port(jvm_side)
        # the port is the prestarted process's: it serves as Spark's daemon with the JVM's pipes
        assert _listener(port) == handle.proc.pid
        assert handle.handed_over()
        # it loaded behind the JVM in a thread of its own; it forks its workers at its own priority
        assert os.getpriority(os.PRIO_PROCESS, handle.proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        assert jvm_side.poll() is None and handle.proc.poll() is None
        # Spark stops its daemon with SIGTERM to the process it started: passed on
        jvm_side.send_signal(signal.SIGTERM)
        handle.proc.wait(30)
        assert jvm_side.wait(30) == 0
        assert not os.path.exists(handle.socket_path)
    finally:
        jvm_side.kill()
        handle.stop()
    assert not os.path.exists(handle.folder)


def test_the_daemon_ends_when_the_jvm_closes_its_input():
    handle = prestart.start()
    jvm_side = _as_the_jvm(handle)
    try:
        _port(jvm_side)
        jvm_side.stdin.close()  # how Spark tells its daemon to leave
        handle.proc.wait(30)  # pyspark's daemon always leaves with 1
        assert jvm_side.wait(30) == 0
    finally:
        jvm_side.kill()
        handle.stop()


def test_a_daemon_loaded_under_another_environment_is_refused_and_the_jvms_loads_itself():
    handle = prestart.start()
    # a variable NumPy reads as it is imported, set for the JVM's daemon only
    jvm_side = _as_the_jvm(handle, OMP_NUM_THREADS="3")
    try:
        port = _port(jvm_side)
        assert _listener(port) == jvm_side.pid  # it serves itself, as before
        assert not handle.handed_over()
        assert handle.proc.wait(30) == 0  # the refused one leaves
        jvm_side.stdin.close()
        jvm_side.wait(30)
    finally:
        jvm_side.kill()
        handle.stop()


def test_without_a_prestarted_daemon_the_jvms_serves_as_before():
    jvm_side = _as_the_jvm(None, **{prestart.SOCKET_ENV: "/nonexistent/daemon.sock"})
    try:
        assert _listener(_port(jvm_side)) == jvm_side.pid
        jvm_side.stdin.close()
        jvm_side.wait(30)  # pyspark's daemon always leaves with 1
    finally:
        jvm_side.kill()


def test_a_prestarted_daemon_no_task_needed_leaves_when_the_driver_stops_it():
    handle = prestart.start()
    assert handle.proc.poll() is None
    handle.stop()
    assert handle.proc.returncode == 0 and not handle.handed_over()
    assert not os.path.exists(handle.folder)


def test_what_must_match_is_what_is_read_as_the_interpreter_and_imports_start():
    env = {"NUMBA_CACHE_DIR": "/x", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "PYTHONPATH": "/y", "HOME": "/h"}
    env |= {"PYTHON_WORKER_FACTORY_SECRET": "s", "SPARK_HOME": "/s", "LANG": "C.UTF-8", "LANGUAGE": "en"}
    assert prestart._import_time(env) == {
        "NUMBA_CACHE_DIR": "/x",
        "OMP_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "LANG": "C.UTF-8",
    }
    loaded = {name: sys.modules[name].__file__ for name in prestart.PACKAGES if name in sys.modules}
    offer = {"executable": sys.executable, "version": sys.version, "origins": loaded, "env": env}
    assert prestart._refusal(offer, env) == ""
    assert prestart._refusal(offer, {**env, "PYTHONHASHSEED": "1"}) == "environment: PYTHONHASHSEED"
    assert prestart._refusal({**offer, "executable": "/usr/bin/python9"}, env) == "another interpreter"
    assert prestart._refusal({**offer, "origins": {**loaded, "pytest": "/elsewhere/pytest/__init__.py"}}, env) == ""
    assert "webwinnow" in loaded
    moved = {**loaded, "webwinnow": "/elsewhere/webwinnow/__init__.py"}
    assert prestart._refusal({**offer, "origins": moved}, env) == "other packages"


@pytest.mark.parametrize("figures", [False, True])
def test_the_daemon_of_a_command_that_draws_figures_has_matplotlib_loaded(figures):
    # matplotlib's compiled font module among the daemon's mapped files once it serves, only
    # when the command draws the report's figures (the runner asks for FIGURE_MODULES then)
    handle = prestart.start(also=prestart.FIGURE_MODULES if figures else ())
    jvm_side = _as_the_jvm(handle)
    try:
        _port(jvm_side)
        assert handle.handed_over()
        maps = Path(f"/proc/{handle.proc.pid}/maps").read_text()
        assert ("ft2font" in maps) == figures
    finally:
        jvm_side.stdin.close()
        jvm_side.kill()
        handle.stop()


def test_loading_behind_the_jvm_lowers_only_its_own_threads_priority():
    """behind_jvm lowers the calling thread's priority (never past 19); the prestarted daemon
    loads in such a thread, gets its result or its error, and keeps its own priority, which the
    workers it forks inherit."""
    import threading

    own = os.getpriority(os.PRIO_PROCESS, 0)
    seen: list[int] = []

    def prepare() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    assert prestart._behind_jvm(prepare, lambda: True) is True
    assert seen == [min(19, own + prestart.BEHIND_JVM)]
    assert os.getpriority(os.PRIO_PROCESS, 0) == own == os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def failing() -> None:
        raise ImportError("a module that will not load")

    with pytest.raises(ImportError, match="will not load"):
        prestart._behind_jvm(failing, lambda: True)
    again: list[int] = []

    def twice() -> None:
        prestart.behind_jvm()
        prestart.behind_jvm()
        again.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    thread = threading.Thread(target=twice)
    thread.start()
    thread.join()
    assert again == [min(19, own + 2 * prestart.BEHIND_JVM)]
