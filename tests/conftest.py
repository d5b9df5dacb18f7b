"""Fixtures shared by every test folder (paths are in paths.py, slow references in naive.py)."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

from paths import CONF

# Spark's Python workers must run this interpreter (the venv), whatever started pytest.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory) -> Path:
    from webwinnow.sample import write_sample

    out = tmp_path_factory.mktemp("sample")
    write_sample(out)
    return out


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory, sample_dir) -> Path:
    """The whole pipeline over the sample crawl, once per test session."""
    from webwinnow.app.cli import main

    out = tmp_path_factory.mktemp("sample-out") / "out"
    frozen = gc.get_freeze_count()
    assert main(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF)]) == 0
    # a run in a process webwinnow does not own pauses collection while Spark starts, and
    # freezes nothing: a frozen cycle of this test session would never be collected
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    return out
