"""Spark Connect for real: a Connect server started from pyspark's own scripts on 127.0.0.1 runs
the whole pipeline (`webwinnow run --remote sc://...`), and every table equals the classic local
run's, schemas included. The run puts its shared arrays through files (a plan cap of 0 bytes), so
both of Connect's ways of sharing an array are used, and leaves none of them behind.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

TABLES = {
    "documents": ["doc_id"],
    "ledger": ["file", "offset", "kind", "reason"],
    "fingerprints": ["doc_id", "pos", "hash"],
    "doc_stats": ["doc_id"],
    "hash_freq": ["hash"],
    "rank_freq": ["rank"],
    "candidate_pairs": ["doc_a", "doc_b"],
    "pair_seeds": ["doc_a", "doc_b"],
    "pairs": ["doc_a", "doc_b"],
    "template_pairs": ["doc_a", "doc_b"],
    "template_kgrams": ["hash"],
    "passages": ["doc_a", "doc_b", "start_a", "start_b"],
    "clusters": ["doc_id"],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client_missing() -> str:
    try:
        import grpc  # noqa: F401
        import zstandard  # noqa: F401
        from google.rpc import status_pb2  # noqa: F401
    except ImportError as exc:
        return f"the Spark Connect client is not installed ({exc.name}): pip install -e '.[connect]'"
    return ""


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server (local[2]) on 127.0.0.1, started and stopped with pyspark's sbin
    scripts; yields its sc:// URL. Skips, saying why, only when it cannot start here."""
    import pyspark

    missing = _client_missing()
    if missing:
        pytest.skip(missing)
    home = Path(pyspark.__file__).parent
    start = home / "sbin" / "start-connect-server.sh"
    if not start.exists() or not list((home / "jars").glob("spark-connect_*.jar")):
        pytest.skip(f"{home} has no Spark Connect server (sbin/start-connect-server.sh, jars/spark-connect_*.jar)")
    port = _free_port()
    state = tmp_path_factory.mktemp("connect")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_PID_DIR": str(state),
        "SPARK_LOG_DIR": str(state),
        "SPARK_IDENT_STRING": f"webwinnow-test-{port}",
        "PYSPARK_PYTHON": sys.executable,  # the server's Python workers import webwinnow from here
    }
    env.pop("SPARK_REMOTE", None)
    conf = ["--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", f"spark.connect.grpc.binding.port={port}"]
    started = subprocess.run(
        ["bash", str(start), "--master", "local[2]", "--conf", "spark.ui.enabled=false", *conf],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    stop = ["bash", str(home / "sbin" / "stop-connect-server.sh")]
    try:
        if started.returncode != 0:
            pytest.skip(f"the Spark Connect server did not start: {(started.stderr or started.stdout)[-500:]}")
        deadline = time.time() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    logs = "".join(p.read_text(errors="replace")[-1500:] for p in state.glob("*.out"))
                    pytest.skip(f"the Spark Connect server did not listen on 127.0.0.1:{port} within 120 s: {logs}")
                time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        subprocess.run(stop, env=env, capture_output=True, timeout=120)


def _webwinnow(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "webwinnow", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
    )


@pytest.fixture(scope="module")
def connect_run(connect_server, sample_dir, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    folder = tmp_path_factory.mktemp("connect-run")
    props = folder / "spark.properties"
    # 0 bytes in the plan: every shared array goes through a file in the run folder
    props.write_text((CONF.parent / "spark-local.properties").read_text() + "\nspark.webwinnow.connectPlanBytes=0\n")
    conf = folder / "connect.toml"
    conf.write_text(f'[spark]\nproperties = "{props}"\n')
    out = folder / "out"
    done = _webwinnow(
        "run",
        str(sample_dir),
        "--out",
        str(out),
        "--remote",
        connect_server,
        "--conf",
        str(CONF),
        "--conf",
        str(QUICK),
        "--conf",
        str(conf),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


def test_the_sample_through_spark_connect_gives_the_classic_runs_tables(connect_run, sample_run):
    out, _ = connect_run
    for table, key in TABLES.items():
        classic, remote = pq.read_table(sample_run / table), pq.read_table(out / table)
        assert remote.schema.remove_metadata() == classic.schema.remove_metadata(), table
        a = classic.to_pandas().sort_values(key).reset_index(drop=True)
        b = remote.to_pandas().sort_values(key).reset_index(drop=True)
        assert a.equals(b), table
    assert pq.read_table(out / "pairs").num_rows and pq.read_table(out / "passages").num_rows  # compared something
    spark = json.loads((out / "summary.json").read_text())["spark"]
    assert spark["remote"].startswith("sc://127.0.0.1:") and spark["master"] == "local[2]"
    assert spark["default_parallelism"] == 2  # asked of the server, which has no SparkContext to ask


def test_a_connect_run_says_how_it_shows_progress_and_leaves_no_shared_arrays(connect_run):
    out, done = connect_run
    said = done.stderr + done.stdout
    assert "Spark Connect: progress counts the tasks the server reports" in said
    assert "Traceback" not in said
    # the properties only the server's application takes are named, not silently dropped
    assert (
        "Spark Connect: the server's application is used as it is; set these on the server instead: spark.driver.extraJavaOptions"
        in said
    )
    assert not [p for p in out.rglob("_shared")], "shared arrays left in the run folder"
