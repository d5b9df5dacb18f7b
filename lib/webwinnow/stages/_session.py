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


def build_session(cfg: SparkConfig, master: str | None = None):
    """A SparkSession whose Python workers run this interpreter (the venv), not whatever is on PATH.

    Without PYSPARK_PYTHON, executors start the system python and fail on a missing pyarrow.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master or cfg.master).appName(cfg.app_name)
    props = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.compression.codec": "zstd",
        "spark.python.worker.reuse": "true",
    }
    if cfg.properties:
        props.update(read_properties(cfg.properties))
    if cfg.shuffle_partitions:
        props["spark.sql.shuffle.partitions"] = str(cfg.shuffle_partitions)
    # Numba caches compiled kernels beside the package; where executors cannot write there
    # (a read-only packed venv), they need a writable cache directory or they recompile per task.
    cache_dir = cfg.numba_cache_dir or os.environ.get("NUMBA_CACHE_DIR", "")
    if cache_dir:
        os.environ.setdefault("NUMBA_CACHE_DIR", cache_dir)
        props.setdefault("spark.executorEnv.NUMBA_CACHE_DIR", cache_dir)
    for key, value in props.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(props.get("webwinnow.logLevel", "WARN"))
    return spark


#: Crawl bytes (as stored, usually gzipped) per shuffle partition when nobody chose the count.
SHUFFLE_INPUT_BYTES = 64 << 20


def size_shuffles(spark, input_bytes: int) -> int:
    """Set spark.sql.shuffle.partitions from the input size, unless it was set (spark-submit
    --conf, a properties file, the config's shuffle_partitions); returns the count in force.

    Spark's default of 200 (or any fixed count) costs a sample run seconds of tiny tasks and
    gives a large crawl too few: one partition per core at least, and one per 64 MiB of crawl.
    """
    key = "spark.sql.shuffle.partitions"
    if spark.sparkContext.getConf().contains(key):
        return int(spark.conf.get(key))
    cores = spark.sparkContext.defaultParallelism
    count = max(cores, -(-max(input_bytes, 0) // SHUFFLE_INPUT_BYTES))
    spark.conf.set(key, str(count))
    return count
