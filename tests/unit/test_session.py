"""The Spark session's settings webwinnow chooses itself."""

from __future__ import annotations


def test_a_short_local_run_compiles_with_c1_and_collects_serially_unless_chosen():
    from webwinnow.stages._session import short_jvm_options

    both = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    assert short_jvm_options("") == both
    assert short_jvm_options("-Dlog4j2.level=warn") == f"-Dlog4j2.level=warn {both}"
    # the user's JIT and collector are kept as they are
    assert short_jvm_options("-XX:TieredStopAtLevel=4") == "-XX:TieredStopAtLevel=4 -XX:+UseSerialGC"
    assert short_jvm_options("-XX:-TieredCompilation") == "-XX:-TieredCompilation -XX:+UseSerialGC"
    assert short_jvm_options("-XX:+UseG1GC") == "-XX:+UseG1GC -XX:TieredStopAtLevel=1"
    assert short_jvm_options("-XX:+UseParallelGC -Xss4m") == "-XX:+UseParallelGC -Xss4m -XX:TieredStopAtLevel=1"
    assert short_jvm_options("-XX:+UseZGC -XX:-TieredCompilation") == "-XX:+UseZGC -XX:-TieredCompilation"
    # a flag that merely mentions GC is not a collector
    assert short_jvm_options("-XX:+PrintGCDetails") == f"-XX:+PrintGCDetails {both}"


class _Conf:
    def __init__(self, settings: dict[str, str], reads: list[int]) -> None:
        self.settings, self.reads = settings, reads

    def getAll(self):
        return list(self.settings.items())


class _Context:
    """A SparkContext as context_settings sees it: getConf() copies its settings (and counts it)."""

    def __init__(self, settings: dict[str, str]) -> None:
        self.settings, self.reads = settings, []

    def getConf(self):
        self.reads.append(1)
        return _Conf(dict(self.settings), self.reads)


class _Session:
    def __init__(self, sc) -> None:
        self.sparkContext = sc
        self.conf = {"spark.sql.shuffle.partitions": "7"}


def test_a_contexts_settings_are_copied_from_the_jvm_once_and_each_context_has_its_own():
    from webwinnow.stages._session import setting

    one = _Context({"spark.master": "local[2]", "spark.app.id": "a-1"})
    other = _Context({"spark.master": "local[4]"})
    for _ in range(5):
        assert setting(_Session(one), "spark.master") == "local[2]"
        assert setting(_Session(one), "spark.app.id") == "a-1"
    assert len(one.reads) == 1  # getConf() is some seventy py4j calls: once, not ten times
    assert setting(_Session(other), "spark.master") == "local[4]"
    assert setting(_Session(other), "spark.app.id", "none") == "none"
    assert len(other.reads) == 1
    # keys the context was not started with still come from the session's runtime settings
    assert setting(_Session(one), "spark.sql.shuffle.partitions") == "7"


class _Server:
    """An accumulator server whose shutdown blocks until released, recording where it ran."""

    def __init__(self) -> None:
        import threading

        self.server_shutdown = False
        self.release, self.ran_in = threading.Event(), []

    def shutdown(self) -> None:
        import threading

        self.ran_in.append(threading.current_thread())
        self.release.wait(10)


def test_stopping_spark_does_not_wait_for_the_accumulator_server():
    # pyspark's stop() waited up to a second for its server's handler to poll: here the handler
    # is told to end and the server closed by another thread, while the command goes on
    import threading
    import types

    from webwinnow.stages._lazysession import release_accumulators

    server = _Server()
    sc = types.SimpleNamespace(_accumulatorServer=server)
    closing = release_accumulators(sc)
    assert closing is not None and closing.daemon
    assert server.server_shutdown and sc._accumulatorServer is None  # stop() will not wait on it
    closing.join(0.05)
    assert closing.is_alive(), "release returned while the server was still closing"
    server.release.set()
    closing.join(10)
    assert not closing.is_alive() and server.ran_in == [closing] != [threading.current_thread()]
    assert release_accumulators(sc) is None  # stopped twice: nothing left to release


def test_a_released_accumulator_server_ends_its_handler_and_closes():
    # pyspark's own server, with a connection held open as the JVM holds its one
    import socket

    from pyspark.accumulators import _start_update_server

    from webwinnow.stages._lazysession import release_accumulators

    server = _start_update_server("secret-token", False)
    client = socket.create_connection(server.server_address)
    try:
        import types

        closing = release_accumulators(types.SimpleNamespace(_accumulatorServer=server))
        closing.join(10)
        assert not closing.is_alive()
        assert server.socket.fileno() == -1  # closed: nothing listens on the port any more
    finally:
        client.close()


def test_the_modules_imported_ahead_are_imported_in_a_thread_and_one_missing_stops_nothing(tmp_path, monkeypatch):
    import os
    import sys
    import threading

    from webwinnow.stages._prestart import BEHIND_JVM
    from webwinnow.stages._session import import_ahead

    (tmp_path / "ahead_one.py").write_text(
        "import os, threading\nTHREAD = threading.current_thread().name\n"
        "NICE = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())\n"
    )
    (tmp_path / "ahead_two.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("ahead_one", "ahead_two"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    thread = import_ahead(("ahead_one", "no_such_module_here", "ahead_two"))
    thread.join(30)
    assert not thread.is_alive()
    assert sys.modules["ahead_one"].THREAD == thread.name != threading.current_thread().name
    # behind the JVM's start (stages._prestart.behind_jvm), this thread's priority untouched
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if sys.platform.startswith("linux"):
        assert sys.modules["ahead_one"].NICE == min(19, own + BEHIND_JVM)
    assert sys.modules["ahead_two"].VALUE == 2
    assert "no_such_module_here" not in sys.modules


def test_what_is_imported_ahead_is_what_the_drivers_first_call_to_the_jvm_imports():
    """pyspark's numpy converter, asked about the first SparkConf's arguments, imports
    pyspark.testing.utils (pandas, pyarrow, protocol buffers): AHEAD must name it."""
    import subprocess
    import sys

    from webwinnow.stages._session import AHEAD

    code = (
        "import sys; from pyspark.sql.types import NumpyArrayConverter; before = set(sys.modules); "
        "NumpyArrayConverter().can_convert('x'); print(' '.join(sorted(set(sys.modules) - before)))"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    imported = set(got.stdout.split())
    assert set(AHEAD) <= imported
    assert "pandas" in imported  # what makes it worth a thread
