"""Arrays shared with a stage's tasks under Spark Connect (stages._shared): carried in the plan
up to the cap, else a file in the run folder that a worker reads once and that is removed whole."""

from __future__ import annotations

import numpy as np
import pytest

from webwinnow.errors import UserError
from webwinnow.stages import _shared
from webwinnow.stages._shared import FileShared, Held, share


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key, default=None):
        return self.values.get(key, default)


def _connect_session(**conf: str):
    """What share() asks of a Connect session: its class's module, and its settings."""
    cls = type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})
    session = cls()
    session.conf = _Conf(conf)
    return session


def test_a_small_array_travels_in_the_plan():
    array = np.arange(100, dtype=np.int64)
    held = share(_connect_session(), array, "/nowhere")
    assert isinstance(held, Held) and held.value is array


def test_an_array_over_the_cap_goes_through_a_file_removed_whole(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "documents").mkdir()  # the run's own tables are left alone
    array = np.array([5, -3, 2**62, 0], dtype=np.int64)
    shared = share(_connect_session(**{"spark.webwinnow.connectPlanBytes": "8"}), array, str(run))
    assert isinstance(shared, FileShared)
    assert shared.path.startswith(str(run / "_shared")) and shared.path.endswith("array.npy")
    _shared._loaded.clear()  # a worker that has not read it yet
    assert np.array_equal(shared.value, array) and shared.value.dtype == np.int64
    assert shared.value is shared.value  # read once per worker
    shared.unpersist()
    assert sorted(p.name for p in run.iterdir()) == ["documents"]


def test_two_arrays_of_one_stage_keep_their_own_files(tmp_path):
    spark = _connect_session(**{"spark.webwinnow.connectPlanBytes": "0"})
    a, b = share(spark, np.arange(3), str(tmp_path)), share(spark, np.arange(5), str(tmp_path))
    assert a.path != b.path
    a.unpersist()
    _shared._loaded.clear()
    assert list(b.value) == [0, 1, 2, 3, 4]
    b.unpersist()
    assert list(tmp_path.iterdir()) == []


def test_a_worker_keeps_few_arrays(tmp_path):
    spark = _connect_session(**{"spark.webwinnow.connectPlanBytes": "0"})
    _shared._loaded.clear()
    for i in range(10):
        assert share(spark, np.full(4, i), str(tmp_path)).value[0] == i
    assert len(_shared._loaded) == _shared._KEPT


def test_a_missing_file_and_a_bad_cap_are_said(tmp_path):
    _shared._loaded.clear()
    with pytest.raises(FileNotFoundError, match="the stage's shared array is gone"):
        FileShared(str(tmp_path / "_shared" / "x" / "array.npy")).value  # noqa: B018
    with pytest.raises(UserError, match=r"spark.webwinnow.connectPlanBytes=lots: give a number of bytes"):
        share(_connect_session(**{"spark.webwinnow.connectPlanBytes": "lots"}), np.arange(3), str(tmp_path))


def test_broadcast_joins_are_bounded_by_the_executors_heap():
    from webwinnow.stages._session import broadcast_rows, parse_bytes

    assert [parse_bytes(v) for v in ("512m", "4g", "1048576", "1.5G", "lots", "")] == [512 << 20, 4 << 30, 1 << 20, 3 << 29, 0, 0]
    small = _connect_session(**{"spark.master": "local[2]", "spark.driver.memory": "512m"})
    assert broadcast_rows(small, 16, 2_000_000) == (512 << 20) // (64 * 16)  # 1.3 M hosts ran a 512 MiB heap out
    assert (
        broadcast_rows(_connect_session(**{"spark.master": "local[2]", "spark.driver.memory": "4g"}), 16, 2_000_000) == 2_000_000
    )
    cluster = {"spark.master": "spark://h:7077", "spark.driver.memory": "64g", "spark.executor.memory": "1g"}
    assert broadcast_rows(_connect_session(**cluster), 64, 2_000_000) == (1 << 30) // (64 * 64)  # the executors' heap
    assert broadcast_rows(_connect_session(), 16, 2_000_000) == (1 << 30) // (64 * 16)  # unset: 1 GiB
