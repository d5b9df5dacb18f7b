"""The driver's JVM started with the command spark-submit would start, without spark-submit.

pyspark starts a local run's JVM through `bin/spark-submit`: bash, `bin/spark-class` (bash
again, `load-spark-env.sh` and a `ps`), then a first JVM (`org.apache.spark.launcher.Main`)
whose only work is to print the real JVM's command line, which bash then runs; and it looks for
the file where the real JVM writes its port every 0.1 s. On the docs corpus that chain started
the real JVM 0.15-0.2 s after pyspark's launch, and the poll added 0.05 s on average, all before
the first job (docs/performance.md). The launcher's answer depends only on its arguments, its
environment and a few files, so webwinnow keeps it: the first launch runs the launcher as
spark-class does (the same java, the same environment), and later launches with the same
arguments, environment, Java and Spark installation run the command it printed, directly, and
look for the port file every few milliseconds. The connection is then made by pyspark's own
code, as for a JVM spark-submit started.

Where spark-class would do more than this module does, pyspark launches as before: a
`spark-env.sh` in the configuration folder (it may export anything), SPARK_TESTING or
SPARK_PREPEND_CLASSES set (spark-class then changes the environment or the class path), no jars
folder, a `load-spark-env.sh` that does not set the Scala version the way this module reads it,
a find-spark-home that would ask another Python, not Linux; or a launcher that does not print a
command (pyspark's launch then reports what went wrong, as it always has).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._classcache import UNUSED_DAYS, cache_folder, file_stamp, jvm_stamps

#: Environment variables the launcher or spark-class read (the launcher's own list: its class
#: files name SPARK_*, PYSPARK_*, HADOOP_CONF_DIR, YARN_CONF_DIR, JAVA_HOME, MASTER, the library
#: paths; PATH finds java and env).
KEY_PREFIXES = ("SPARK_", "PYSPARK_", "HADOOP_", "YARN_", "JAVA_")
KEY_NAMES = ("MASTER", "PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")
#: How often the driver looks for the JVM's port file (pyspark: every 0.1 s).
POLL_SECONDS = 0.005
#: The launcher's heap, as spark-class gives it.
LAUNCHER_HEAP = "-Xmx128m"
#: What a conf given as volatile is replaced with in the launcher's arguments and the cache's key.
TOKEN = "@webwinnow-volatile-{}@"
#: The argument the launcher gives SparkSubmit when it could not parse spark-submit's.
USAGE_ERROR = "--usage-error"
#: The cache's format: a new one makes every entry a miss.
FORMAT = "launch-1"


def launch(conf, volatile: tuple[str, ...] = ()):
    """A py4j gateway to a JVM started with spark-submit's command for `conf` (a SparkConf not
    yet bound to a JVM), its process as `proc`, as pyspark's launch_gateway gives it; None where
    this module does not start one (see above), for the caller to let pyspark launch it.
    volatile: conf keys whose values change from run to run (a socket's path) and that the
    launcher passes on as they are: the launcher's command is kept with a token in their place."""
    if not sys.platform.startswith("linux"):
        return None
    args = _submit_args(conf)
    env = _spark_class_env(dict(os.environ))
    if args is None or env is None:
        return None
    command = launch_command(args, env, volatile)
    if command is None:
        return None
    return _start(command, env, conf)


def launch_command(args: list[str], env: dict[str, str], volatile: tuple[str, ...] = ()) -> list[str] | None:
    """The real JVM's command for spark-submit's `args` in spark-class's environment `env`: kept
    from an earlier launch with the same key (cache_key), else the launcher's answer (kept for
    the next one); None where the launcher gave none."""
    keyed, values = _tokens(args, volatile)
    folder = cache_folder()
    path = folder / f"launch-{cache_key(keyed, env)}.json" if folder is not None else None
    command = _read(path) if path is not None else None
    if command is None:
        command, spoke = _launcher(keyed, env)
        if command is None:
            return None
        if path is not None and not spoke:  # a command kept says nothing the next time
            _write(path, command)
    return _filled(command, values)


def cache_key(args: list[str], env: dict[str, str]) -> str:
    """A digest of what the launcher's answer depends on: its arguments (and the files they
    name), the environment it reads, the java it runs, Spark's jars and configuration files."""
    home = env["SPARK_HOME"]
    runner = _runner(env) or ""
    parts = [FORMAT, *args]
    parts += [file_stamp(Path(a)) for a in args if os.path.isfile(a)]
    parts += sorted(f"{k}={v}" for k, v in env.items() if k.startswith(KEY_PREFIXES) or k in KEY_NAMES)
    parts += [runner, *(jvm_stamps(runner) if runner else [])]
    jars = Path(home) / "jars"
    parts += [file_stamp(jars), *(file_stamp(p) for p in sorted(jars.glob("spark-launcher*.jar")))]
    conf_dir = Path(env.get("SPARK_CONF_DIR") or Path(home) / "conf")
    parts += [file_stamp(conf_dir / "spark-defaults.conf"), file_stamp(Path(home) / "RELEASE")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _submit_args(conf) -> list[str] | None:
    """spark-submit's arguments, as pyspark's launch_gateway makes them."""
    if os.environ.get("SPARK_TESTING"):  # pyspark adds an option, spark-class drops variables
        return None
    args = []
    for key, value in conf.getAll():
        args += ["--conf", f"{key}={value}"]
    return args + shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell"))


def _spark_class_env(env: dict[str, str]) -> dict[str, str] | None:
    """The environment bin/spark-submit and bin/spark-class give the launcher and the JVM it
    runs (SPARK_HOME found, load-spark-env.sh's variables, the hash seed), or None where they
    would do what this module does not (module docstring)."""
    if env.get("SPARK_PREPEND_CLASSES"):
        return None
    if not env.get("SPARK_HOME"):
        # find-spark-home asks PYSPARK_DRIVER_PYTHON (else PYSPARK_PYTHON, else python3): only
        # when that is this interpreter is its answer this process's
        asked = env.get("PYSPARK_DRIVER_PYTHON") or env.get("PYSPARK_PYTHON") or "python3"
        found = shutil.which(asked, path=env.get("PATH"))
        if found is None or os.path.abspath(found) != os.path.abspath(sys.executable):
            return None
        from pyspark.find_spark_home import _find_spark_home

        env["SPARK_HOME"] = _find_spark_home()
    home = env["SPARK_HOME"]
    scala = _scala_version(Path(home) / "bin" / "load-spark-env.sh")
    if scala is None or not os.path.isdir(os.path.join(home, "jars")):
        return None
    env["PYTHONHASHSEED"] = "0"
    if not env.get("SPARK_ENV_LOADED"):
        env["SPARK_ENV_LOADED"] = "1"
        env["SPARK_CONF_DIR"] = env.get("SPARK_CONF_DIR") or os.path.join(home, "conf")
        if os.path.isfile(os.path.join(env["SPARK_CONF_DIR"], "spark-env.sh")):
            return None
    env["SPARK_SCALA_VERSION"] = scala
    return env


def _scala_version(script: Path) -> str | None:
    """The Scala version load-spark-env.sh exports, when its one line that names the variable
    exports a plain value."""
    try:
        text = script.read_text(encoding="utf-8")
    except OSError:
        return None
    naming = [ln.strip() for ln in text.splitlines() if "SPARK_SCALA_VERSION" in ln and not ln.lstrip().startswith("#")]
    found = re.fullmatch(r"export SPARK_SCALA_VERSION=([\w.]+)", naming[0]) if len(naming) == 1 else None
    return found.group(1) if found else None


def _runner(env: dict[str, str]) -> str | None:
    """The java spark-class runs the launcher with: JAVA_HOME's, else the one on PATH."""
    if env.get("JAVA_HOME"):
        return os.path.join(env["JAVA_HOME"], "bin", "java")
    return shutil.which("java", path=env.get("PATH"))


def _launcher(args: list[str], env: dict[str, str]) -> tuple[list[str] | None, bool]:
    """What Spark's launcher prints for these arguments: the command (None when it fails or
    prints something else), and whether it said anything besides (shown here as spark-class
    shows it: lines before the command on standard output, its standard error), which a kept
    command would not say again. Spark 4's launcher starts the command with a NUL line;
    Spark 3's printed the command alone."""
    runner = _runner(env)
    if runner is None:
        return None, False
    jars = os.path.join(env["SPARK_HOME"], "jars", "*")
    command = [runner, LAUNCHER_HEAP, *env.get("SPARK_LAUNCHER_OPTS", "").split(), "-cp", jars]
    command += ["org.apache.spark.launcher.Main", "org.apache.spark.deploy.SparkSubmit", *args]
    try:
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    except OSError:
        return None, False
    out = done.stdout.decode("utf-8", "surrogateescape")
    said, marked, rest = out.partition("\0\n")
    if not marked:
        said, rest = "", out
    if said.strip():
        print("\n".join(line for line in said.splitlines() if line), flush=True)
    if done.stderr:
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        sys.stderr.flush()
    spoke = bool(said.strip() or done.stderr)
    if done.returncode != 0 or not rest.endswith("\0"):
        return None, spoke
    printed = rest[:-1].split("\0")
    if not printed[0] or not (printed[0] == "env" or os.path.isabs(printed[0])):
        return None, spoke
    # a usage error is SparkSubmit run to print its usage, after the launcher's complaint
    return printed, spoke or USAGE_ERROR in printed


def _tokens(args: list[str], volatile: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """args with each volatile conf's value replaced by its token, and the values by token."""
    keyed, values = list(args), {}
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if eq and key in volatile and i > 0 and args[i - 1] == "--conf":
            token = TOKEN.format(volatile.index(key))
            keyed[i], values[f"{key}={token}"] = f"{key}={token}", arg
    return keyed, values


def _filled(command: list[str], values: dict[str, str]) -> list[str] | None:
    """The command with each token's argument back to its value (None when a token is not there
    exactly once, as a whole argument)."""
    out = list(command)
    for tokened, arg in values.items():
        at = [i for i, c in enumerate(out) if c == tokened]
        if len(at) != 1 or sum(tokened in c for c in out) != 1:
            return None
        out[at[0]] = arg
    return out


def _read(path: Path) -> list[str] | None:
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
        os.utime(path)  # used now: not one to remove as unused
    except (OSError, ValueError):
        return None
    command = got.get("command") if isinstance(got, dict) else None
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        return None
    return command


def _write(path: Path, command: list[str]) -> None:
    """Kept for the next launch (atomically: a reader never sees half of it); not kept where
    the cache folder cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _clear_unused(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"command": command}, fh)
        os.replace(tmp, path)
    except OSError:
        pass


def _clear_unused(folder: Path) -> None:
    """Remove the commands no launch has used for UNUSED_DAYS (another configuration's, an
    upgraded Spark's), and temporary files a killed process left."""
    limit = time.time() - UNUSED_DAYS * 24 * 3600
    for old in [*folder.glob("launch-*.json"), *folder.glob(".launch-*.tmp")]:
        try:
            if old.stat().st_mtime < limit or (old.name.startswith(".") and old.stat().st_mtime < time.time() - 3600):
                old.unlink()
        except OSError:
            pass


def _start(command: list[str], env: dict[str, str], conf):
    """Run the JVM as pyspark's launch_gateway does (stdin a pipe, whose end ends the JVM;
    SIGINT ignored; where to write its port in the environment), wait for its port, connect."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway
    from pyspark.serializers import UTF8Deserializer, read_int

    folder = tempfile.mkdtemp()
    try:
        info = os.path.join(folder, "connection.info")
        env = {**env, "SPARK_CONNECT_MODE": "0", "_PYSPARK_DRIVER_CONN_INFO_PATH": info}
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
            )
        except OSError:
            return None  # the java it names is gone: pyspark's launch says what is wrong
        while proc.poll() is None and not os.path.isfile(info):
            time.sleep(POLL_SECONDS)
        if not os.path.isfile(info):
            raise PySparkRuntimeError(errorClass="JAVA_GATEWAY_EXITED", messageParameters={})
        with open(info, "rb") as fh:
            port, secret = read_int(fh), UTF8Deserializer().loads(fh)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    # pyspark's own connection to a JVM someone else started (spark-submit's way of handing one
    # over), then this process's handle on it
    before = {k: os.environ.get(k) for k in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
    os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"] = str(port), secret
    try:
        gateway = launch_gateway(conf)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    gateway.proc = proc
    return gateway
