"""The documents' times (Last-Modified, WARC-Date, Date) as microseconds since 1970, as Spark's
`unix_micros(try_cast(column AS timestamp))` gives them, read with pyarrow on the driver.

The candidates and clusters stages compare pages by these times. Nearly every time the extract
stage writes is ISO 8601 in UTC to the second ("2024-01-02T03:04:05Z": `crawl.records.http_time`
writes the HTTP dates so, and WARC-Dates are so by the standard); those are converted here, with
Arrow and NumPy (the proleptic Gregorian calendar, as Spark's). A column with any other string in
it (a malformed WARC-Date, a fraction of a second, an offset, a leap second) is cast by Spark,
whose rules for them the tables have always followed: a Spark SQL job the driver's path of a
local run otherwise never needs (its first costs the JVM 4-5 CPU-seconds).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The strings converted here; any other goes to Spark.
ISO_SECOND = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"
_FIELDS = ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19))  # year, month, day, hour, minute, second
_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def iso_second_micros(values: pa.Array | pa.ChunkedArray) -> pa.Array | None:
    """Microseconds since 1970 (int64, null where the value is) of strings that are all ISO 8601
    UTC seconds (ISO_SECOND) naming a real time of years 1-9999; None when any is not."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise TypeError(f"expected strings, got {values.type}")
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    if not valid.any():
        return pa.nulls(len(values), pa.int64())
    if not pc.all(pc.match_substring_regex(values, ISO_SECOND), skip_nulls=True).as_py():
        return None
    year, month, day, hour, minute, second = (
        pc.utf8_slice_codeunits(values, lo, hi).cast(pa.int64()).fill_null(0).to_numpy()[valid] for lo, hi in _FIELDS
    )
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    in_month = _DAYS[np.clip(month - 1, 0, 11)] + (leap & (month == 2))
    real = (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= in_month)
    real &= (hour <= 23) & (minute <= 59) & (second <= 59)
    if not real.all():
        return None
    days = _days_since_1970(year, month, day)
    micros = np.zeros(len(values), np.int64)
    micros[valid] = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000
    return pa.array(micros, pa.int64(), mask=~valid)


def _days_since_1970(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days from 1970-01-01 to each date of the proleptic Gregorian calendar (H. Hinnant's
    days_from_civil, for years from 1)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def time_columns(table: pa.Table, columns: tuple[str, ...]) -> dict[str, pa.Array] | None:
    """iso_second_micros of each column of `table` named; None when any column has another string."""
    got = {}
    for name in columns:
        micros = iso_second_micros(table.column(name))
        if micros is None:
            return None
        got[name] = micros
    return got
