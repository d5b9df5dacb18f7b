"""The documents' times converted on the driver (stages._doctimes) against Spark's own
unix_micros(try_cast(... AS timestamp)), which the tables have always followed."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from webwinnow.stages._doctimes import iso_second_micros
from webwinnow.stages._pairtable import _times, driver_times

pytestmark = pytest.mark.spark


def _spark_micros(spark, texts: list[str | None]) -> list[int | None]:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame(pa.table({"i": pa.array(range(len(texts)), pa.int64()), "t": pa.array(texts, pa.string())}))
    got = frame.select("i", F.unix_micros(F.col("t").try_cast("timestamp")).alias("m")).toArrow().sort_by("i")
    return got.column("m").to_pylist()


def test_iso_seconds_convert_as_spark_casts_them(spark_session):
    rng = random.Random(29)
    texts: list[str | None] = [
        "0001-01-01T00:00:00Z",
        "1582-10-04T23:59:59Z",  # the Julian calendar's last day elsewhere: Spark's is proleptic Gregorian
        "1582-10-15T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z",
        "2000-02-29T12:34:56Z",
        "2038-01-19T03:14:08Z",
        "9999-12-31T23:59:59Z",
        None,
    ]
    for _ in range(3000):
        texts.append(
            f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            f"T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
        )
    got = iso_second_micros(pa.array(texts, pa.string()))
    assert got is not None
    assert got.to_pylist() == _spark_micros(spark_session, texts)


def test_the_driver_reads_the_documents_times_as_spark_casts_them(spark_session, sample_run):
    out = str(sample_run)
    mine = driver_times(spark_session, out).sort_by("doc_id")
    spark = _times(spark_session, out, micros=True).toArrow().sort_by("doc_id")
    assert mine.column_names == spark.column_names
    for name in mine.column_names:
        assert mine.column(name).to_pylist() == spark.column(name).to_pylist(), name
    assert mine.column("fetch_time").null_count < mine.num_rows  # the sample's times were converted, not all null
