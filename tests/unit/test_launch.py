"""stages._launch: the driver's JVM started with spark-submit's command, without its shell chain.

The command and the environment must be the ones bin/spark-submit would run the JVM with: a
fake JAVA_HOME records what its java is started with (the launcher JVM it lets run), once
through bin/spark-submit and once through this module, and the two must agree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from webwinnow.stages import _launch

REAL_JAVA = os.path.realpath(os.path.join(os.environ["JAVA_HOME"], "bin", "java")) if os.environ.get("JAVA_HOME") else None
SOCKET = "spark.executorEnv.WEBWINNOW_DAEMON_SOCKET"
#: What bash itself puts in a process's environment (spark-submit's JVM is run by bash).
BASH_SETS = {"SHLVL", "_", "PWD", "OLDPWD"}


def _real_java() -> str:
    import shutil

    found = REAL_JAVA or shutil.which("java")
    assert found, "the tests need Java (make prereqs)"
    return os.path.realpath(found)


@pytest.fixture
def recording_java(tmp_path, monkeypatch):
    """A JAVA_HOME whose java runs Spark's launcher for real and, started as anything else (the
    application's JVM), writes its arguments and environment to a file and exits."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    record = tmp_path / "record.json"
    script = home / "bin" / "java"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, sys
            if "org.apache.spark.launcher.Main" in sys.argv:
                os.execv({_real_java()!r}, [{_real_java()!r}, *sys.argv[1:]])
            with open({str(record)!r}, "w") as fh:
                json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, fh)
            """
        )
    )
    script.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.delenv("SPARK_ENV_LOADED", raising=False)
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    return record


class _Conf:
    """What stages._launch reads of a SparkConf: its settings, in the order they were set. A
    SparkConf made while this process has a JVM (the suite's shared session) lists them in the
    JVM's hash order; build_session launches only before there is one, when pyspark keeps them
    in a dict, as here."""

    def __init__(self, settings: dict[str, str]) -> None:
        self.settings = settings

    def getAll(self) -> list[tuple[str, str]]:  # noqa: N802 - SparkConf's name
        return list(self.settings.items())


def _conf(socket: str = "sockets/a/daemon.sock", memory: str = "2g") -> _Conf:
    return _Conf(
        {
            "spark.master": "local[2]",
            "spark.driver.memory": memory,
            "spark.driver.extraJavaOptions": "-Dlog4j2.level=warn -XX:+UseSerialGC",
            "spark.app.name": "webwinnow",
            SOCKET: socket,
        }
    )


def _through_spark_submit(conf, record: Path) -> dict:
    from pyspark.find_spark_home import _find_spark_home

    args = _launch._submit_args(conf)
    env = {**os.environ, "SPARK_CONNECT_MODE": "0", "_PYSPARK_DRIVER_CONN_INFO_PATH": "/nowhere"}
    subprocess.run([os.path.join(_find_spark_home(), "bin", "spark-submit"), *args], env=env, check=True, stdin=subprocess.PIPE)
    return json.loads(record.read_text())


def _through_launch(conf, record: Path) -> dict:
    env = _launch._spark_class_env(dict(os.environ))
    assert env is not None
    command = _launch.launch_command(_launch._submit_args(conf), env, (SOCKET,))
    assert command is not None
    env = {**env, "SPARK_CONNECT_MODE": "0", "_PYSPARK_DRIVER_CONN_INFO_PATH": "/nowhere"}
    subprocess.run(command, env=env, check=True, stdin=subprocess.PIPE)
    return json.loads(record.read_text())


def test_the_jvm_gets_the_command_and_environment_spark_submit_gives_it(recording_java, monkeypatch):
    submitted = _through_spark_submit(_conf(), recording_java)
    launched = _through_launch(_conf(), recording_java)
    assert launched["argv"] == submitted["argv"]
    assert "-Xmx2g" in launched["argv"] and "spark.driver.memory=2g" in launched["argv"]
    theirs = {k: v for k, v in submitted["env"].items() if k not in BASH_SETS}
    ours = {k: v for k, v in launched["env"].items() if k not in BASH_SETS}
    assert ours == theirs
    assert ours["PYTHONHASHSEED"] == "0" and ours["SPARK_HOME"] and ours["SPARK_ENV_LOADED"] == "1"

    # kept: the next launch, with another socket, runs no launcher and gets the same command
    # with its own socket
    monkeypatch.setattr(_launch, "_launcher", lambda *a: pytest.fail("the launcher ran again"))
    env = _launch._spark_class_env(dict(os.environ))
    again = _launch.launch_command(_launch._submit_args(_conf("sockets/b/daemon.sock")), env, (SOCKET,))
    assert again[0] == os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    assert again[1:] == [
        f"{SOCKET}=sockets/b/daemon.sock" if a == f"{SOCKET}=sockets/a/daemon.sock" else a for a in launched["argv"]
    ]


def test_a_kept_command_is_used_only_for_the_same_arguments_environment_and_files(recording_java, monkeypatch, tmp_path):
    env = _launch._spark_class_env(dict(os.environ))
    args = _launch._submit_args(_conf())
    first = _launch.launch_command(args, env, (SOCKET,))
    calls = []
    real = _launch._launcher

    def counted(*a):
        calls.append(a)
        return real(*a)

    monkeypatch.setattr(_launch, "_launcher", counted)
    # another socket: kept
    other = _launch._submit_args(_conf("sockets/elsewhere.sock"))
    got = _launch.launch_command(other, env, (SOCKET,))
    assert not calls
    assert got == [f"{SOCKET}=sockets/elsewhere.sock" if a == f"{SOCKET}=sockets/a/daemon.sock" else a for a in first]
    # another driver memory, an environment variable the launcher reads, a properties file
    # that changed: the launcher again, and its answer
    assert "-Xmx3g" in _launch.launch_command(_launch._submit_args(_conf(memory="3g")), env, (SOCKET,))
    assert len(calls) == 1
    assert _launch.launch_command(args, {**env, "SPARK_SUBMIT_OPTS": "-Dwho=me"}, (SOCKET,)).count("-Dwho=me") == 1
    assert len(calls) == 2
    props = tmp_path / "spark.properties"
    props.write_text("spark.driver.memory 5g\n")
    with_file = [*args[:-1], "--properties-file", str(props), args[-1]]
    assert "-Xmx2g" in _launch.launch_command(with_file, env, (SOCKET,))  # --conf wins over the file
    props.write_text("spark.driver.extraClassPath /opt/x.jar\n")
    assert any(a.startswith("/opt/x.jar") for a in _launch.launch_command(with_file, env, (SOCKET,)))
    assert len(calls) == 4
    # without a volatile key, the socket is part of the key
    _launch.launch_command(other, env)
    assert len(calls) == 5


def test_a_damaged_kept_command_is_made_again(recording_java):
    env = _launch._spark_class_env(dict(os.environ))
    args = _launch._submit_args(_conf())
    first = _launch.launch_command(args, env, (SOCKET,))
    (kept,) = _launch.cache_folder().glob("launch-*.json")
    kept.write_text('{"command": ')
    assert _launch.launch_command(args, env, (SOCKET,)) == first
    assert json.loads(kept.read_text())["command"][0] == first[0]


def test_what_spark_class_would_do_more_of_is_left_to_pyspark(recording_java, monkeypatch, tmp_path):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    assert _launch._spark_class_env(dict(os.environ)) is not None
    (conf_dir / "spark-env.sh").write_text("export SPARK_LOCAL_IP=127.0.0.1\n")
    assert _launch._spark_class_env(dict(os.environ)) is None
    assert _launch.launch(_conf()) is None
    monkeypatch.delenv("SPARK_CONF_DIR")
    for name in ("SPARK_PREPEND_CLASSES", "SPARK_TESTING"):
        monkeypatch.setenv(name, "1")
        assert _launch.launch(_conf()) is None
        monkeypatch.delenv(name)
    # find-spark-home would ask another Python
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/usr/bin/false")
    assert _launch._spark_class_env(dict(os.environ)) is None


def test_what_the_launcher_says_is_shown_and_its_command_not_kept(recording_java, capfd):
    env = _launch._spark_class_env(dict(os.environ))
    command = _launch.launch_command(["--no-such-option", "pyspark-shell"], env)
    assert command is not None and command[-1] == _launch.USAGE_ERROR  # SparkSubmit prints its usage
    assert "Unrecognized option: --no-such-option" in capfd.readouterr().err
    assert not list(_launch.cache_folder().glob("launch-*.json"))
    # and said again the next time
    _launch.launch_command(["--no-such-option", "pyspark-shell"], env)
    assert "Unrecognized option: --no-such-option" in capfd.readouterr().err
    # spark-submit's own debugging output, the launch command, is shown every time
    env["SPARK_PRINT_LAUNCH_COMMAND"] = "1"
    for _ in range(2):
        assert _launch.launch_command(["pyspark-shell"], env) is not None
        assert "Spark Command: " in capfd.readouterr().err
    assert not list(_launch.cache_folder().glob("launch-*.json"))


def test_the_scala_version_is_read_only_from_one_plain_export(tmp_path):
    script = tmp_path / "load-spark-env.sh"
    script.write_text("# export SPARK_SCALA_VERSION=2.12\nexport SPARK_SCALA_VERSION=2.13\n")
    assert _launch._scala_version(script) == "2.13"
    script.write_text('if [ -z "$SPARK_SCALA_VERSION" ]; then\n  export SPARK_SCALA_VERSION=2.13\nfi\n')
    assert _launch._scala_version(script) is None
    script.write_text("export SPARK_SCALA_VERSION=$SCALA_VERSION_1\n")
    assert _launch._scala_version(script) is None
    assert _launch._scala_version(tmp_path / "missing.sh") is None


def test_a_command_run_in_its_own_process_starts_java_itself_with_spark_submits_hash_seed(tmp_path):
    code = textwrap.dedent(
        """\
        import json, os, sys
        import dataclasses
        from webwinnow.config import default_config_files, load_config
        from webwinnow.stages._session import build_session
        cfg = dataclasses.replace(load_config(default_config_files()).spark, class_sharing=False)
        spark, _ = build_session(cfg)
        proc = spark.sparkContext._gateway.proc
        environ = dict(v.split("=", 1) for v in open(f"/proc/{proc.pid}/environ").read().split("\\0") if "=" in v)
        count = spark.sparkContext.parallelize(range(10), 2).map(lambda x: x * 2).sum()
        print(json.dumps({"exe": os.path.realpath(f"/proc/{proc.pid}/exe"), "argv0": proc.args[0],
                          "seed": environ.get("PYTHONHASHSEED"), "sum": count}))
        spark.stop()
        """
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=300)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["argv0"].endswith("/java") and os.path.basename(got["exe"]) == "java"
    assert got["seed"] == "0" and got["sum"] == 90
    assert len(list((tmp_path / "cache" / "webwinnow" / "jvm").glob("launch-*.json"))) == 1


def test_a_jvm_that_ends_before_it_listens_is_reported_as_pyspark_reports_it(tmp_path):
    from pyspark.errors import PySparkRuntimeError

    from webwinnow.errors import _JVM_GONE

    with pytest.raises(PySparkRuntimeError) as raised:
        _launch._start(["/bin/sh", "-c", "exit 3"], dict(os.environ), _conf())
    assert _JVM_GONE.search(str(raised.value))
    # a kept command whose java is gone: pyspark's own launch, which says what is wrong
    assert _launch._start([str(tmp_path / "no-java"), "-version"], dict(os.environ), _conf()) is None
