"""The extract stage's task list is data: one row and one partition (one task) per file group."""

from __future__ import annotations

import pytest

from webwinnow.config import SparkConfig
from webwinnow.stages._session import build_session
from webwinnow.stages.extract import task_list

pytestmark = [pytest.mark.spark, pytest.mark.own_spark]  # other masters, spark-submit's own sessions


@pytest.mark.parametrize("n", [1, 3, 7])
@pytest.mark.parametrize("dataframe", [False, True])  # an RDD job's batches; Spark's rows (Spark Connect's way)
def test_one_group_per_partition_in_order(n, dataframe):
    spark, owned = build_session(SparkConfig(), "local[2]")
    try:
        groups = [[(f"/crawl/{g}-{i}.warc.gz", 100 * g + i) for i in range(g % 3 + 1)] for g in range(n)]
        tasks = task_list(spark, groups, dataframe=dataframe)
        assert tasks.rdd.getNumPartitions() == n
        per_partition = tasks.rdd.glom().collect()
        if not dataframe:  # a batch of one row a partition
            per_partition = [[row for batch in p for row in batch.to_pylist()] for p in per_partition]
        assert [len(p) for p in per_partition] == [1] * n
        rows = [p[0] for p in per_partition]
        assert [r["group"] for r in rows] == list(range(n))
        assert [list(zip(r["paths"], r["sizes"])) for r in rows] == groups
    finally:
        if owned:
            spark.stop()
