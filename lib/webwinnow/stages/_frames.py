"""Spark-side helpers the stages share."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark StructType of one of webwinnow.schemas' Arrow schemas."""
    return from_arrow_schema(schema)
