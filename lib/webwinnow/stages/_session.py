"""The SparkSession, built once per command from the run configuration."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..config import SparkConfig
from ._classcache import jvm_options as class_sharing_options
from ._classcache import refused as archive_refused
from ._launch import launch
from ._lazysession import LazySession, context_settings
from ._prestart import FIGURE_MODULES, behind_jvm
from ._prestart import SOCKET_ENV as PRESTART_SOCKET
from ._prestart import start as prestart


def read_properties(path: str | Path) -> dict[str, str]:
    """key=value (or key value) lines of a Spark .properties file; # and ! start comments."""
    props: dict[str, str] = {}
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        if "=" in line:
            key, _, value = line.partition("=")
        else:
            key, _, value = line.partition(" ")
        props[key.strip()] = value.strip()
    return props


def remote_url(cfg: SparkConfig, master: str | None = None) -> str:
    """The Spark Connect endpoint the command runs through ("" for none): --remote or the config's
    `spark.remote`, else SPARK_REMOTE. Raises UserError, before the run's folder is made, when it
    cannot be used: beside a master (pyspark refuses the two with a traceback), not an sc:// URL,
    or without the Connect client's packages."""
    from ..errors import UserError

    remote = cfg.remote or os.environ.get("SPARK_REMOTE", "")
    if not remote:
        return ""
    said = "--remote" if cfg.remote else "SPARK_REMOTE"
    if master or cfg.master:
        raise UserError(
            f"{said}={remote} and a master ({master or cfg.master}) were both given: Spark Connect runs on the "
            "server's master; give one of them"
        )
    if not remote.startswith("sc://"):
        raise UserError(f"{said}={remote}: a Spark Connect endpoint is sc://HOST:PORT (e.g. sc://127.0.0.1:15002)")
    try:
        import grpc  # noqa: F401
        import zstandard  # noqa: F401
        from google.rpc import status_pb2  # noqa: F401
    except ImportError as exc:
        raise UserError(
            f"{said}={remote}: the Spark Connect client is not installed ({exc.name} is missing): "
            "pip install 'webwinnow[connect]'"
        ) from None
    return remote


def check_remote(cfg: SparkConfig, master: str | None = None) -> None:
    """remote_url's checks, and that the endpoint accepts connections."""
    remote = remote_url(cfg, master)
    if remote:
        _reachable(remote)


def is_connect(spark) -> bool:
    """Whether the session speaks Spark Connect: no SparkContext, RDDs, accumulators or broadcasts."""
    # by the class's module: importing Connect's session class needs the client's packages
    return type(spark).__module__.startswith("pyspark.sql.connect")


def setting(spark, key: str, default: str = "") -> str:
    """A Spark setting as the session sees it: its own (spark.conf) or the application's."""
    if not is_connect(spark):
        conf = context_settings(spark.sparkContext)
        if key in conf:
            return conf[key]
    try:
        value = spark.conf.get(key, None)
    except Exception:  # Connect: a key the server does not know raises
        return default
    return default if value is None else value


def default_parallelism(spark) -> int:
    """The cores the application has (SparkContext.defaultParallelism). Spark Connect does not
    say: a range made without a partition count has that many partitions (its leaf parallelism),
    so the count of its partitions answers, in one small job, once per session."""
    if not is_connect(spark):
        return spark.sparkContext.defaultParallelism
    cached = _PARALLELISM.get(id(spark))
    if cached is None:
        from pyspark.sql import functions as F

        row = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).agg(F.max("p").alias("p")).first()
        cached = _PARALLELISM[id(spark)] = int(row["p"]) + 1
    return cached


_PARALLELISM: dict[int, int] = {}
_REMOTES: dict[int, str] = {}  # the endpoint of each Connect session made here
_NOTES: dict[int, list[str]] = {}  # what the command should tell of each session made here


def session_notes(spark) -> list[str]:
    """Lines for the user about how the session was made (properties a Connect session ignored)."""
    return _NOTES.get(id(spark), [])


def build_session(
    cfg: SparkConfig,
    master: str | None = None,
    input_bytes: int | None = None,
    figures: bool = False,
    modules: tuple[str, ...] = (),
):
    """The SparkSession for a command, and whether the command owns it (and so stops it).

    Who decides what, in order: a session already active in this process (a notebook's) is used
    as it is. Through Spark Connect (--remote, SPARK_REMOTE), the server's application is given:
    only the properties a session may set (spark.sql.*, webwinnow's own) are set, and the rest are
    named in a warning. Under spark-submit, its --master, --conf and properties files win: the
    config's properties file only fills the keys it left unset, and a master is set only when the
    user gave --master or the config's `spark.master`. Run directly, the properties file
    configures the JVM pyspark launches, with `local[*]` unless a master was given. Either way
    the command gets a LazySession (stages._lazysession): the SparkContext now, Spark SQL's
    session only when a stage first needs one.

    Python workers run this interpreter unless PYSPARK_PYTHON (or spark.pyspark.python) says
    otherwise: without it, executors start the system python and fail on a missing pyarrow.

    input_bytes: what the command reads (crawl files, or the documents table); a JVM launched
    here in local mode for less than SHORT_RUN_BYTES compiles with C1 only (short_jvm_options).
    figures: the command draws the report's figures (its local daemon imports matplotlib too).
    modules: the command's stages' modules, imported while the JVM starts (import_ahead).
    """
    active = active_session()
    if active is not None:
        return active, False
    remote = remote_url(cfg, master)
    props = dict(read_properties(cfg.properties)) if cfg.properties else {}
    if cfg.shuffle_partitions:
        props["spark.sql.shuffle.partitions"] = str(cfg.shuffle_partitions)
    if remote:
        return _connect(remote, props, cfg), True
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # how spark-submit hands its JVM to Python
    # Numba caches compiled kernels beside the package; where executors cannot write there
    # (a read-only packed venv), they need a writable cache directory or they recompile per task.
    cache_dir = cfg.numba_cache_dir or os.environ.get("NUMBA_CACHE_DIR", "")
    if cache_dir:
        os.environ.setdefault("NUMBA_CACHE_DIR", cache_dir)
        props.setdefault("spark.executorEnv.NUMBA_CACHE_DIR", cache_dir)
    given = master or cfg.master
    creation = None
    mapping = ""  # the options that have the JVM map the class-data archive
    if submitted:
        launched = _launched_conf()
        props = {k: v for k, v in props.items() if k not in launched}
        if not launched.get("spark.pyspark.python") and not os.environ.get("PYSPARK_PYTHON"):
            os.environ["PYSPARK_PYTHON"] = sys.executable
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        props.setdefault("spark.app.name", cfg.app_name)
        given = given or "local[*]"
        key = "spark.driver.extraJavaOptions"
        if given.startswith("local") and input_bytes is not None and input_bytes < SHORT_RUN_BYTES:
            props[key] = short_jvm_options(props.get(key, ""))
        if given.startswith("local"):
            # its workers import pyspark from the installed package, not from Spark's zip
            props.setdefault("spark.python.daemon.module", DAEMON_MODULE)
        if given.startswith("local") and _launches_jvm() and not _chooses_sharing(props.get(key, "")):
            options, creation = class_sharing_options(
                cfg.class_sharing, extra_class_path=props.get("spark.driver.extraClassPath", "")
            )
            if options:
                props[key] = f"{props.get(key, '')} {options}".strip()
                _JVM["class_sharing"] = "writing" if creation else "mapped"
                mapping = "" if creation else options
    from pyspark import SparkConf

    prestarted = None
    if not submitted and props.get("spark.python.daemon.module") == DAEMON_MODULE:
        # its Python daemon loads beside the JVM's start, not after it (stages._prestart)
        prestarted = prestart(also=FIGURE_MODULES if figures else ())
        if prestarted is not None:
            props[f"spark.executorEnv.{PRESTART_SOCKET}"] = prestarted.socket_path
    conf = SparkConf()
    if given:
        conf.setMaster(given)
    for key, value in props.items():
        conf.set(key, value)
    if not submitted:
        import_ahead(AHEAD + modules)
    try:
        spark = LazySession(_context(conf, launched_here=not submitted), prestarted)
    except BaseException:
        if prestarted is not None:
            prestarted.stop()
        raise
    _LAZY[:] = [spark]
    if creation is not None:
        creation.arm(spark)
    elif mapping and archive_refused(spark, mapping):
        _JVM["class_sharing"] = "refused"
    spark.sparkContext.setLogLevel(props.get("webwinnow.logLevel", "WARN"))
    launched_now = context_settings(spark.sparkContext)
    for key, value in DEFAULTS.items():
        if key not in launched_now:
            spark.conf.set(key, value)
    return spark, True


def _context(conf, launched_here: bool):
    """The SparkContext for conf: on a JVM this process starts without spark-submit's shell
    chain where it can (stages._launch), else as pyspark's getOrCreate makes it."""
    from pyspark import SparkContext

    if launched_here and _launches_jvm():
        gateway = launch(conf, volatile=(f"spark.executorEnv.{PRESTART_SOCKET}",))
        if gateway is not None:
            # as getOrCreate would, with this JVM: pyspark keeps it for the process's next
            # context even when this one fails
            return SparkContext(conf=conf, gateway=gateway)
    return SparkContext.getOrCreate(conf)


#: What the driver imports the first time it hands the JVM an argument, once the JVM is up:
#: pyspark's numpy converter asks pyspark.testing.utils whether NumPy is there, and that module
#: imports pandas, pyarrow and Google's protocol buffers (0.6-0.7 CPU-s on the docs corpus's
#: run, while the JVM waited for the driver's first SparkConf).
AHEAD = ("pyspark.testing.utils",)


def import_ahead(names: tuple[str, ...] = AHEAD) -> threading.Thread:
    """Import `names` in a thread of their own, while the driver waits for the JVM it launched
    (1.5-2 s, polling a file): the JVM's start, not its first call, pays for them. An import
    that fails here fails again where it is needed, and says so there."""

    def run() -> None:
        import importlib

        behind_jvm()
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - only a head start
                continue

    thread = threading.Thread(target=run, name="webwinnow-import-ahead", daemon=True)
    thread.start()
    return thread


#: The LazySession build_session made last (it is the process's session until stopped).
_LAZY: list[LazySession] = []


def active_session():
    """The session a command in this process runs on, if there is one: a SparkSession made
    elsewhere (a notebook's), or the LazySession a command made and has not stopped."""
    from pyspark.sql import SparkSession

    live = [s for s in _LAZY if not s.stopped]
    return live[0] if live else SparkSession.getActiveSession()


def _connect(remote: str, props: dict[str, str], cfg: SparkConfig):
    """A Spark Connect session on `remote`, with the properties a session may set."""
    from pyspark.sql import SparkSession

    from ..errors import UserError

    _reachable(remote)
    try:
        spark = SparkSession.builder.remote(remote).getOrCreate()
        spark.range(1).collect()  # the session is made lazily: reach the server now, or say it is not there
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UserError(
            f"--remote {remote}: the Spark Connect server did not answer ({first}); check the URL and the server's log"
        ) from None
    _REMOTES[id(spark)] = remote.split(";", 1)[0]  # parameters after ";" may hold a token
    ignored = []
    for key, value in {**DEFAULTS, **props}.items():
        if key in DEFAULTS and key not in props and setting(spark, key) not in ("", "snappy"):
            continue  # the server chose a codec: keep it
        if key.startswith("spark.sql.") or key.startswith("spark.webwinnow."):
            spark.conf.set(key, value)
        elif key != "webwinnow.logLevel":
            ignored.append(key)
    if ignored:
        _NOTES[id(spark)] = [
            "Spark Connect: the server's application is used as it is; set these on the server instead: "
            + ", ".join(sorted(ignored))
        ]
    return spark


#: Seconds to wait for a Connect endpoint to accept a connection (a server just started takes a
#: few to listen): the client itself retries for minutes, silently, when nothing listens.
CONNECT_TIMEOUT = 15


def _reachable(remote: str) -> None:
    """Raise UserError unless something accepts connections at the endpoint's host and port."""
    import socket
    import time
    from urllib.parse import urlparse

    from ..errors import UserError

    where = urlparse("http://" + remote.removeprefix("sc://").split(";", 1)[0].split("/", 1)[0])
    try:
        host, port = where.hostname or "localhost", where.port or 15002  # Spark Connect's default port
    except ValueError:
        raise UserError(f"{remote}: a Spark Connect endpoint is sc://HOST:PORT (e.g. sc://127.0.0.1:15002)") from None
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
            return
        except ConnectionRefusedError as exc:  # a server just started takes seconds to listen
            if time.monotonic() + 1 >= deadline:
                problem = exc.strerror or str(exc)
                break
            time.sleep(1)
        except OSError as exc:
            problem = exc.strerror or str(exc)
            break
    raise UserError(
        f"{remote}: no Spark Connect server at {host}:{port} ({problem}, for {CONNECT_TIMEOUT} s); start one "
        "($SPARK_HOME/sbin/start-connect-server.sh) or check the URL"
    )


def daemon_facts(spark) -> dict:
    """Whether the Python daemon the driver started beside the JVM (stages._prestart) became
    Spark's: "prestarted", or "own" where the JVM's daemon loaded everything itself (it was
    refused, or no Python task ran); nothing for a session that started none."""
    prestarted = getattr(spark, "prestarted", None)
    if prestarted is None:
        return {}
    return {"daemon": "prestarted" if prestarted.handed_over() else "own"}


def session_facts(spark) -> dict:
    """What the run's summary says of the Spark it ran on."""
    facts = {
        "master": setting(spark, "spark.master"),
        "app_id": setting(spark, "spark.app.id"),
        "default_parallelism": default_parallelism(spark),
        # a short local run's JVM compiles with C1 only (SHORT_RUN_BYTES)
        "c1_only": "TieredStopAtLevel=1" in setting(spark, "spark.driver.extraJavaOptions"),
        "serial_gc": "UseSerialGC" in setting(spark, "spark.driver.extraJavaOptions"),
        # the JVM this process started mapped the class-data archive, or writes it at its exit
        # (stages._classcache); "" when it has none, or was not started here
        "class_sharing": _JVM["class_sharing"],
    }

    if is_connect(spark):
        facts["remote"] = _REMOTES.get(id(spark), "")
    return facts


#: A broadcast join side may take this share of an executor's heap at most (a side is held by
#: each executor, built on the driver, and copied while it is: many times its raw row bytes).
BROADCAST_HEAP_SHARE = 64


def heap_bytes(spark) -> int:
    """An executor's heap: spark.executor.memory, or in local mode the driver's (1 GiB unset)."""
    local = setting(spark, "spark.master").startswith("local")
    value = setting(spark, "spark.driver.memory" if local else "spark.executor.memory", "1g")
    return parse_bytes(value) or (1 << 30)


#: Seconds to wait for a JVM whose SparkContext shut down under a job to exit with its status.
JVM_EXIT_WAIT = 15.0


def jvm_exit_code(wait: float = 0.0) -> int | None:
    """The exit status of the JVM this process launched, once it has ended (52: out of memory),
    waiting up to `wait` seconds for a JVM that is shutting down; None while it runs, under
    Spark Connect, or when pyspark did not launch it."""
    try:
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
        if proc is None:
            return None
        deadline = time.monotonic() + wait
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        return proc.poll()
    except Exception:  # a broken gateway is what the caller is already explaining
        return None


#: Under this much heap a cached table is kept on disk only: a block unrolled in memory ran a
#: 512 MiB heap out in the passages stage of a 5.7 GB crawl (Spark's storage memory is then about
#: 127 MiB, shared with the tasks' execution memory).
SMALL_HEAP_BYTES = 1 << 30


def cache_level(spark):
    """The storage level of the tables a stage reads twice: in memory with a spill to disk, or on
    disk only when the executors' heap is small."""
    from pyspark import StorageLevel

    return StorageLevel.DISK_ONLY if heap_bytes(spark) < SMALL_HEAP_BYTES else StorageLevel.MEMORY_AND_DISK


def parse_bytes(value: str) -> int:
    """A JVM size ("512m", "4g", "1048576"): bytes; 0 when unreadable."""
    text = value.strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in "kmgt" and text[-1:] else text
    try:
        return int(float(number) * scale) if number else 0
    except ValueError:
        return 0


def broadcast_rows(spark, row_bytes: int, most: int) -> int:
    """How many rows of `row_bytes` a join may broadcast: at most `most`, and no more than a
    1/BROADCAST_HEAP_SHARE share of an executor's heap holds (a run given 512 MiB broadcast
    1.3 M hosts and ran out of heap)."""
    return min(most, heap_bytes(spark) // (BROADCAST_HEAP_SHARE * max(1, row_bytes)))


#: Below this much input (crawl files as stored, usually gzipped) a local run's JVM compiles with
#: C1 only. HotSpot's C2 compiler threads spent 31 of the JVM's 84 CPU-seconds of a run on the
#: docs corpus (57 MB of WARC, 328 MB of HTML); with C1 only they spend 4, and the tasks' code,
#: less optimized, 16 more: a fixed saving against a cost that grows with the input, even near
#: 100 MB of input (docs/performance.md, issue 29). A cluster's executors live long: C2 pays there.
SHORT_RUN_BYTES = 96 << 20


#: The Python daemon of a local run webwinnow starts (stages/_daemon.py).
DAEMON_MODULE = "webwinnow.stages._daemon"

#: What the JVM this process started was given: pyspark starts one per process, and a session
#: made later (a notebook's, the test suite's) runs on it with whatever it was started with.
_JVM = {"class_sharing": ""}


def _launches_jvm() -> bool:
    """Whether getOrCreate starts a JVM (pyspark keeps one per process, started once)."""
    from pyspark import SparkContext

    return SparkContext._gateway is None


def _chooses_sharing(options: str) -> bool:
    """Whether the user's JVM options choose class-data sharing themselves."""
    return any(flag in options for flag in ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit"))


def short_jvm_options(options: str) -> str:
    """The JVM options of a short local run: C1 only, unless they already choose the JIT, and
    the serial collector, unless they choose one. G1's concurrent and parallel threads cost a
    run of a few GiB of heap on two cores 1-2.5 JVM CPU-seconds more than the serial
    collector's pauses, for the same wall time (docs/performance.md)."""
    added = []
    if "TieredStopAtLevel" not in options and "TieredCompilation" not in options:
        added.append("-XX:TieredStopAtLevel=1")
    if not re.search(r"-XX:\+Use\w*GC\b", options):
        added.append("-XX:+UseSerialGC")
    return " ".join([options.strip(), *added]).strip()


#: Runtime settings webwinnow takes when nobody chose otherwise (tables are written with zstd).
DEFAULTS = {"spark.sql.parquet.compression.codec": "zstd"}


def _launched_conf() -> dict[str, str]:
    """The settings spark-submit gave the JVM it started (command line, properties files,
    spark-defaults.conf), read before the SparkContext exists."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


#: Crawl bytes (as stored, usually gzipped) per shuffle partition when nobody chose the count.
SHUFFLE_INPUT_BYTES = 64 << 20
#: ... and at most this many: shuffle blocks grow as map tasks x partitions, and past some tens of
#: thousands the driver's map-output tracking, not the data, is the cost (docs/scaling.md).
MAX_AUTO_SHUFFLE_PARTITIONS = 20_000


def size_shuffles(spark, input_bytes: int) -> int:
    """Set spark.sql.shuffle.partitions from the input size, unless it was set (spark-submit
    --conf, a properties file, the config's shuffle_partitions); returns the count in force.

    Spark's default of 200 (or any fixed count) costs a sample run seconds of tiny tasks and
    gives a large crawl too few: one partition per core at least, one per 64 MiB of crawl, and
    no more than MAX_AUTO_SHUFFLE_PARTITIONS.
    """
    key = "spark.sql.shuffle.partitions"
    if _was_set(spark, key):
        return int(spark.conf.get(key))
    cores = default_parallelism(spark)
    count = max(cores, min(MAX_AUTO_SHUFFLE_PARTITIONS, -(-max(input_bytes, 0) // SHUFFLE_INPUT_BYTES)))
    spark.conf.set(key, str(count))
    return count


def shuffle_partitions(spark) -> int:
    """The session's count of shuffle partitions (spark.sql.shuffle.partitions)."""
    return int(setting(spark, "spark.sql.shuffle.partitions", SPARK_DEFAULTS["spark.sql.shuffle.partitions"]))


#: What a store's tables need in Spark, by the scheme Hadoop did not know (the Python side reads
#: and writes through pyarrow and needs none of it). {hadoop} is the Hadoop version Spark runs.
CONNECTORS = {
    "s3a": "add --packages org.apache.hadoop:hadoop-aws:{hadoop} (it brings the AWS SDK bundle it was built with)",
    "s3": "outside EMR, write s3a://BUCKET/... (Hadoop's S3 connector; --packages org.apache.hadoop:hadoop-aws:{hadoop})",
    "gs": "add --jars gcs-connector-3.1.7-shaded.jar (GoogleCloudDataproc/hadoop-connectors releases; Dataproc has it installed)",
    "abfs": "add --packages org.apache.hadoop:hadoop-azure:{hadoop}",
    "abfss": "add --packages org.apache.hadoop:hadoop-azure:{hadoop}",
}


def _was_set(spark, key: str) -> bool:
    """Whether someone chose `key`. A Connect client sees values, not who set them: a value other
    than Spark's default is taken as chosen (a chosen 200 partitions is then sized anew)."""
    if not is_connect(spark):
        return key in context_settings(spark.sparkContext)
    return setting(spark, key, SPARK_DEFAULTS.get(key, "")) != SPARK_DEFAULTS.get(key)


#: Spark's own defaults of the settings webwinnow sizes when nobody chose them.
SPARK_DEFAULTS = {"spark.sql.shuffle.partitions": "200"}


def check_filesystem(spark, uri: str) -> None:
    """Raise UserError, before any stage, when Spark has no Hadoop filesystem for --out's scheme."""
    from ..errors import UserError

    if is_connect(spark):  # the server decides; its error reaches the user as it is
        return
    jvm: Any = getattr(spark, "_jvm", None) or spark.sparkContext._jvm
    try:
        jvm.org.apache.hadoop.fs.Path(uri).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    except Exception as exc:  # py4j's Py4JJavaError, whatever the JVM threw
        text = str(exc)
        if "UnsupportedFileSystemException" not in text and "ClassNotFoundException" not in text:
            raise
        scheme = uri.split("://", 1)[0].lower()
        hadoop = jvm.org.apache.hadoop.util.VersionInfo.getVersion()
        hint = CONNECTORS.get(scheme, "add the Hadoop connector for it to spark-submit (--packages or --jars)")
        raise UserError(
            f"--out {uri}: Spark (Hadoop {hadoop}) has no filesystem for {scheme}:// to write the "
            f"tables with: {hint.format(hadoop=hadoop)}; nothing was committed"
        ) from None
