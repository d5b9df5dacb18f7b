"""A command's classic session makes Spark SQL's session only when a stage first needs it
(stages._lazysession): runtime settings read and set before then are the ones the session gets."""

from __future__ import annotations

import pyarrow as pa
import pytest

from webwinnow.config import SparkConfig
from webwinnow.stages import _session
from webwinnow.stages._frames import spark_schema
from webwinnow.stages._lazysession import LazySession
from webwinnow.stages._tasks import slots

pytestmark = [pytest.mark.spark, pytest.mark.own_spark]

CODEC = "spark.sql.parquet.compression.codec"
BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"


def test_settings_before_the_session_are_the_sessions_settings():
    spark, owned = _session.build_session(SparkConfig(shuffle_partitions=3), "local[2]")
    try:
        assert owned and isinstance(spark, LazySession) and not spark.made
        # an RDD job of Python tasks, and settings read and set: still no SQL session
        tasks = slots(spark, 3).mapInArrow(lambda batches: batches, spark_schema(pa.schema([("id", pa.int64())])))
        assert sorted(r["id"] for r in tasks.collect()) == [0, 1, 2]
        assert spark.sparkContext.parallelize(range(6), 3).mapPartitions(lambda it: [sum(it)]).collect() == [1, 5, 9]
        assert spark.conf.get(CODEC) == "zstd"  # webwinnow's default, set before the session
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"  # from the SparkConf the JVM started with
        assert _session.setting(spark, "spark.master") == "local[2]"
        assert spark.conf.get("spark.webwinnow.nothing", "given") == "given"
        spark.conf.set(BATCH, 7)
        spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
        spark.conf.unset("spark.sql.session.timeZone")
        assert _session.size_shuffles(spark, 1 << 30) == 3  # chosen in the config: kept
        assert not spark.made
        again, owned_again = _session.build_session(SparkConfig(), "local[1]")
        assert again is spark and not owned_again and _session.active_session() is spark

        # a DataFrame: the session is made, with every setting given so far
        assert spark.range(5).count() == 5
        assert spark.made
        sql = spark.session()
        assert sql.conf.get(CODEC) == "zstd" and sql.conf.get(BATCH) == "7"
        assert sql.conf.get("spark.sql.shuffle.partitions") == "3"
        assert sql.conf.get("spark.sql.session.timeZone") != "Asia/Kolkata"  # unset before it was made
        spark.conf.set(BATCH, 9)  # ... and set on it from now on
        assert sql.conf.get(BATCH) == "9" and spark.conf.get(BATCH) == "9"
        assert _session.active_session() is spark  # not the SparkSession it holds
    finally:
        spark.stop()
    assert spark.stopped and _session.active_session() is None


def test_a_session_never_needed_is_never_made_and_its_context_stops():
    spark, owned = _session.build_session(SparkConfig(), "local[1]")
    assert owned and not spark.made
    spark.stop()
    assert spark.stopped and not spark.made and _session.active_session() is None
    fresh, owned = _session.build_session(SparkConfig(), "local[1]")  # a new context, not the stopped one
    try:
        assert fresh is not spark and owned and fresh.sparkContext.parallelize([1, 2]).count() == 2
    finally:
        fresh.stop()
