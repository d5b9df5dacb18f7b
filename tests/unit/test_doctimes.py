"""The documents' ISO 8601 seconds converted on the driver: against Python's datetime (the
proleptic Gregorian calendar), and every other string left to Spark (None)."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from webwinnow.stages._doctimes import iso_second_micros, time_columns

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _micros(when: datetime.datetime) -> int:
    return (when - EPOCH) // datetime.timedelta(microseconds=1)


@given(st.lists(st.one_of(st.none(), st.datetimes(min_value=datetime.datetime(1, 1, 1))), max_size=40))
def test_iso_seconds_are_the_calendars_microseconds(times):
    texts = [None if t is None else t.strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0") for t in times]
    got = iso_second_micros(pa.array(texts, pa.string()))
    assert got is not None and got.type == pa.int64()
    want = [None if t is None else _micros(t.replace(microsecond=0, tzinfo=datetime.UTC)) for t in times]
    assert got.to_pylist() == want


@pytest.mark.parametrize(
    "text",
    [
        "2008-10-294T05:21:46-0700",  # a malformed WARC-Date of the real crawl files
        "2024-01-02T03:04:05.123Z",  # a fraction
        "2024-01-02T03:04:05+00:00",  # an offset
        "2024-01-02 03:04:05Z",
        " 2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05z",
        "2023-02-29T00:00:00Z",  # no such day
        "1900-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-00-10T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-02T24:00:00Z",
        "2016-12-31T23:59:60Z",  # a leap second
        "2024-01-02T03:60:00Z",
        "0000-01-01T00:00:00Z",
        "",
        "yesterday",
    ],
)
def test_any_other_string_is_left_to_spark(text):
    assert iso_second_micros(pa.array(["2024-01-02T03:04:05Z", text, None])) is None


def test_leap_days_nulls_and_chunks():
    got = iso_second_micros(pa.chunked_array([["2000-02-29T12:00:00Z", None], ["1969-12-31T23:59:59Z"]]))
    assert got.to_pylist() == [951825600000000, None, -1000000]
    assert iso_second_micros(pa.chunked_array([], pa.string())).to_pylist() == []
    assert iso_second_micros(pa.array([None, None], pa.string())).to_pylist() == [None, None]
    table = pa.table({"a": ["1970-01-01T00:00:01Z"], "b": ["not a time"]})
    assert time_columns(table, ("a",)) == {"a": pa.array([1000000], pa.int64())}
    assert time_columns(table, ("a", "b")) is None
    with pytest.raises(TypeError):
        iso_second_micros(pa.array([1, 2]))
