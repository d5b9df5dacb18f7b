"""The SparkSession, built once per command from the run configuration."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..config import SparkConfig


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


def refuse_remote() -> None:
    """Raise UserError when SPARK_REMOTE asks for Spark Connect: pyspark would refuse it beside a
    master with a traceback, and the stages still use the SparkContext (task lists, broadcasts,
    progress), which Spark Connect has not."""
    remote = os.environ.get("SPARK_REMOTE", "")
    if remote:
        from ..errors import UserError

        raise UserError(
            f"SPARK_REMOTE={remote}: webwinnow does not run through Spark Connect yet; unset SPARK_REMOTE "
            "and give --master (or spark-submit) for the cluster behind it"
        )


def build_session(cfg: SparkConfig, master: str | None = None, input_bytes: int | None = None):
    """The SparkSession for a command, and whether the command owns it (and so stops it).

    Who decides what, in order: a session already active in this process (a notebook's) is used
    as it is. Under spark-submit, its --master, --conf and properties files win: the config's
    properties file only fills the keys it left unset, and a master is set only when the user
    gave --master or the config's `spark.master`. Run directly, the properties file configures
    the JVM pyspark launches, with `local[*]` unless a master was given.

    Python workers run this interpreter unless PYSPARK_PYTHON (or spark.pyspark.python) says
    otherwise: without it, executors start the system python and fail on a missing pyarrow.

    input_bytes: what the command reads (crawl files, or the documents table); a JVM launched
    here in local mode for less than SHORT_RUN_BYTES compiles with C1 only (short_jvm_options).
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    refuse_remote()
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # how spark-submit hands its JVM to Python
    props = dict(read_properties(cfg.properties)) if cfg.properties else {}
    if cfg.shuffle_partitions:
        props["spark.sql.shuffle.partitions"] = str(cfg.shuffle_partitions)
    # Numba caches compiled kernels beside the package; where executors cannot write there
    # (a read-only packed venv), they need a writable cache directory or they recompile per task.
    cache_dir = cfg.numba_cache_dir or os.environ.get("NUMBA_CACHE_DIR", "")
    if cache_dir:
        os.environ.setdefault("NUMBA_CACHE_DIR", cache_dir)
        props.setdefault("spark.executorEnv.NUMBA_CACHE_DIR", cache_dir)
    given = master or cfg.master
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
        if given.startswith("local") and input_bytes is not None and input_bytes < SHORT_RUN_BYTES:
            key = "spark.driver.extraJavaOptions"
            props[key] = short_jvm_options(props.get(key, ""))
    builder = SparkSession.builder
    if given:
        builder = builder.master(given)
    for key, value in props.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(props.get("webwinnow.logLevel", "WARN"))
    launched_now = spark.sparkContext.getConf()
    for key, value in DEFAULTS.items():
        if not launched_now.contains(key):
            spark.conf.set(key, value)
    return spark, True


#: Below this much input (crawl files as stored, usually gzipped) a local run's JVM compiles with
#: C1 only. HotSpot's C2 compiler threads spent 31 of the JVM's 84 CPU-seconds of a run on the
#: docs corpus (57 MB of WARC, 328 MB of HTML); with C1 only they spend 4, and the tasks' code,
#: less optimized, 16 more: a fixed saving against a cost that grows with the input, even near
#: 100 MB of input (docs/performance.md, issue 29). A cluster's executors live long: C2 pays there.
SHORT_RUN_BYTES = 96 << 20


def short_jvm_options(options: str) -> str:
    """The JVM options of a short local run: C1 only, unless they already choose the JIT."""
    if "TieredStopAtLevel" in options or "TieredCompilation" in options:
        return options
    return f"{options} -XX:TieredStopAtLevel=1".strip()


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
    if spark.sparkContext.getConf().contains(key):
        return int(spark.conf.get(key))
    cores = spark.sparkContext.defaultParallelism
    count = max(cores, min(MAX_AUTO_SHUFFLE_PARTITIONS, -(-max(input_bytes, 0) // SHUFFLE_INPUT_BYTES)))
    spark.conf.set(key, str(count))
    return count


#: What a store's tables need in Spark, by the scheme Hadoop did not know (the Python side reads
#: and writes through pyarrow and needs none of it). {hadoop} is the Hadoop version Spark runs.
CONNECTORS = {
    "s3a": "add --packages org.apache.hadoop:hadoop-aws:{hadoop} (it brings the AWS SDK bundle it was built with)",
    "s3": "outside EMR, write s3a://BUCKET/... (Hadoop's S3 connector; --packages org.apache.hadoop:hadoop-aws:{hadoop})",
    "gs": "add --jars gcs-connector-3.1.7-shaded.jar (GoogleCloudDataproc/hadoop-connectors releases; Dataproc has it installed)",
    "abfs": "add --packages org.apache.hadoop:hadoop-azure:{hadoop}",
    "abfss": "add --packages org.apache.hadoop:hadoop-azure:{hadoop}",
}


def check_filesystem(spark, uri: str) -> None:
    """Raise UserError, before any stage, when Spark has no Hadoop filesystem for --out's scheme."""
    from ..errors import UserError

    jvm = getattr(spark, "_jvm", None) or getattr(spark.sparkContext, "_jvm", None)
    if jvm is None:  # Spark Connect: the server decides; its error reaches the user as it is
        return
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
