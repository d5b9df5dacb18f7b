"""--out on another filesystem and as a file:// URI: the staging folder is built beside OUT (so
the swap is a rename within one filesystem), and the tables equal a run into the test's tmp."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from paths import CONF, REPO

pytestmark = pytest.mark.spark

sys.path.insert(0, str(REPO / "bench"))
import compare_outputs  # noqa: E402


@pytest.fixture()
def other_filesystem(tmp_path):
    """A folder on a filesystem other than tmp_path's (tmpfs at /dev/shm), removed afterwards."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm on a filesystem of its own")
    folder = shm / f"webwinnow-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_out_as_a_file_uri_on_another_filesystem(sample_dir, sample_run, other_filesystem):
    from webwinnow.cli import main

    out = other_filesystem / "nested" / "out"
    assert main(["run", str(sample_dir), "--out", f"file://{out}", "--conf", str(CONF), "-q"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["out"] == str(out) and summary["report"] == str(out / "report" / "index.html")
    assert sorted(p.name for p in other_filesystem.iterdir()) == ["nested"]  # no staging, no lock left
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]
    for name in compare_outputs.TABLES:
        a, b = compare_outputs.sorted_table(sample_run / name), compare_outputs.sorted_table(out / name)
        assert a.schema == b.schema and a.equals(b), name
    # a stage run alone replaces its table in place on that filesystem too
    assert main(["clusters", "--out", f"file://{out}", "--conf", str(CONF), "-q"]) == 0
    assert compare_outputs.sorted_table(out / "clusters").equals(compare_outputs.sorted_table(sample_run / "clusters"))
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".") and p.name != ".webwinnow-output") == []


def test_an_object_store_out_is_refused_before_any_work(sample_dir, tmp_path, capsys):
    from webwinnow.cli import main

    for out in ("s3a://bucket/run", "gs://bucket/run", "hdfs://namenode:8020/run"):
        assert main(["run", str(sample_dir), "--out", out, "--conf", str(CONF)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "write --out locally, then copy it" in err[0], err
