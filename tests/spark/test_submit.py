"""spark-submit governs Spark: its --master and --conf reach the session; webwinnow's own
settings only fill what it left unset, and --master after the script still wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import CONF, QUICK, REPO

pytestmark = pytest.mark.spark

SUBMIT = Path(sys.executable).parent / "spark-submit"


def _submit(spark_args: list[str], script_args: list[str], tmp_path: Path) -> dict:
    if not SUBMIT.exists():
        pytest.skip(f"{SUBMIT} is absent: pyspark's spark-submit is installed beside the interpreter")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            str(SUBMIT),
            *spark_args,
            str(REPO / "jobs" / "submit.py"),
            *script_args,
            "--out",
            str(out),
            "--conf",
            str(CONF),
            "--conf",
            str(QUICK),
            "-q",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


def test_spark_submit_master_and_conf_reach_the_session(sample_dir, tmp_path):
    summary = _submit(
        ["--master", "local[1]", "--conf", "spark.sql.shuffle.partitions=3"], ["extract", str(sample_dir)], tmp_path
    )
    assert summary["spark"]["master"] == "local[1]"  # not the config's local[*]
    assert summary["spark"]["default_parallelism"] == 1
    assert summary["spark"]["shuffle_partitions"] == 3  # spark-submit's, not sized from the input
    assert summary["extract"]["parsed"] == 311


def test_master_after_the_script_overrides_spark_submit(sample_dir, tmp_path):
    summary = _submit(["--master", "local[1]"], ["extract", str(sample_dir), "--master", "local[2]"], tmp_path)
    assert summary["spark"]["master"] == "local[2]"
    assert summary["spark"]["shuffle_partitions"] == 2  # nobody set it: one per core at least


@pytest.mark.own_spark
def test_run_directly_takes_local_mode_on_every_core(sample_dir, tmp_path):
    from webwinnow.app.cli import main
    from webwinnow.stages import _session

    out = tmp_path / "direct"
    assert main(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "-q"]) == 0
    # every stage of a local run on the driver's paths runs RDD jobs: no Spark SQL session made
    assert [(s.stopped, s.made) for s in _session._LAZY] == [(True, False)]
    spark = json.loads((out / "summary.json").read_text())["spark"]
    assert spark["master"] == "local[*]" and spark["default_parallelism"] == os.cpu_count()
    assert spark["c1_only"]  # a short local run: its JVM spends no CPU on C2 compilations
    assert spark["serial_gc"]  # ... nor on G1's concurrent threads
    assert spark["class_sharing"] in ("mapped", "writing")  # nor on loading Spark's classes, once it has the archive
    assert spark["daemon"] == "prestarted"  # its Python daemon loaded beside the JVM's start, not after it


@pytest.mark.own_spark
def test_an_active_session_is_used_as_it_is_and_left_running(sample_dir, tmp_path):
    """A notebook's session: its master stays, and the command does not stop it."""
    from webwinnow.app.cli import main
    from webwinnow.config import SparkConfig
    from webwinnow.stages._session import build_session

    spark, owned = build_session(SparkConfig(), "local[1]")
    try:
        out = tmp_path / "in-notebook"
        assert main(["extract", str(sample_dir), "--out", str(out), "--conf", str(CONF), "-q"]) == 0
        assert json.loads((out / "summary.json").read_text())["spark"]["master"] == "local[1]"
        assert spark.range(3).count() == 3  # still running
        again, owned_again = build_session(SparkConfig(), "local[2]")
        assert again is spark and not owned_again
    finally:
        spark.stop()


def test_a_local_jvm_writes_the_class_archive_once_and_the_next_one_maps_it(sample_dir, tmp_path):
    """The first run's JVM writes the archive at its exit, checked before it is put in place; the
    second run's JVM maps it (a damaged archive would kill it) and gives the same documents."""
    if not sys.platform.startswith("linux"):
        pytest.skip("class sharing is set up on Linux only")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.pop("NUMBA_CACHE_DIR", None)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    folder = tmp_path / "cache" / "webwinnow" / "jvm"

    def extract(name: str) -> dict:
        out = tmp_path / name
        done = subprocess.run(
            [sys.executable, "-m", "webwinnow", "extract", str(sample_dir), "--out", str(out), "--conf", str(CONF), "-q"],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert "cds" not in done.stdout + done.stderr  # the JVM says nothing of the archive
        return json.loads((out / "summary.json").read_text())

    def kept() -> list:  # besides the launcher's commands (stages._launch)
        return sorted(p for p in folder.iterdir() if not p.name.startswith("launch-"))

    first = extract("first")
    assert first["spark"]["class_sharing"] == "writing"
    archives = kept()
    assert [p.name[-4:] for p in archives] == [".jsa", "jars"] and archives[0].stat().st_size > 1 << 20
    assert os.path.isdir(archives[1].read_text())  # the installation it is for: Spark's jars
    second = extract("second")
    assert second["spark"]["class_sharing"] == "mapped"  # found among the JVM's mapped files
    assert kept() == archives
    assert second["extract"] == first["extract"]


def test_local_workers_import_pyspark_where_it_is_installed(spark_session):
    """Not from Spark's zip, where Python compiles every module again in every worker."""
    import pyarrow as pa
    import pyspark

    if ".zip" in pyspark.__file__:
        pytest.skip("this interpreter's pyspark is not installed in a folder")
    assert spark_session.sparkContext.getConf().get("spark.python.daemon.module") == "webwinnow.stages._daemon"

    def where(batches):
        import py4j
        import pyspark

        for _ in batches:
            yield pa.RecordBatch.from_pylist([{"where": f"{pyspark.__file__} {py4j.__file__}"}])

    found = {r["where"] for r in spark_session.range(2, numPartitions=2).mapInArrow(where, "where string").collect()}
    assert found and all(".zip" not in w for w in found), found
