"""The whole pipeline on a real Spark standalone cluster (what `make cluster-demo` does).

Builds the packed environment when it is absent or older than the sources (tests/cluster/package.py
--kernels-from-repo, about a minute), starts a master and two workers on 127.0.0.1, submits with plain spark-submit and
compares every table with the session's local-mode run of the sample.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from paths import CONF, QUICK, REPO

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HERE = Path(__file__).resolve().parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"cluster_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stale(archive: Path) -> bool:
    if not archive.is_file():
        return True
    sources = [REPO / "pyproject.toml", *(REPO / "lib").rglob("*.py")]
    return max(p.stat().st_mtime for p in sources) > archive.stat().st_mtime


def test_the_cluster_runs_the_pipeline_with_the_packed_environment(sample_dir, sample_run, tmp_path):
    demo = _load("demo")
    if _stale(demo.ARCHIVE):
        # sample_run has just run every stage on these sources, so the checkout's Numba cache holds
        # every kernel the executors will call: no warm-up run (a JVM and a pipeline) is needed
        subprocess.run([sys.executable, str(HERE / "package.py"), "--kernels-from-repo"], check=True, stdout=subprocess.DEVNULL)
    # quick.toml draws no figures page: the figures are drawn on the driver, from the tables compared
    # here, and are checked on the session's sample run; the tables are the same either way
    failures = demo.run_demo(sample_dir, tmp_path / "demo", local_out=sample_run, confs=(CONF, QUICK))
    assert failures == [], "\n".join(failures)
