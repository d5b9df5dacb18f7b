from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REAL = SHARED / "data" / "warc" / "real"
MALFORMED = SHARED / "data" / "warc" / "malformed"
BADWARC = SHARED / "data" / "badwarc"
CONF = REPO / "conf" / "webwinnow.toml"

# Spark's Python workers must run this interpreter (the venv), whatever started pytest.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def need(path: Path) -> Path:
    """Skip, saying why, when the shared data set beside the repository is absent."""
    if not path.exists():
        pytest.skip(f"{path} is absent: these tests read the shared crawl files beside the repository")
    return path


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory) -> Path:
    from webwinnow.sample import write_sample

    out = tmp_path_factory.mktemp("sample")
    write_sample(out)
    return out


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory, sample_dir) -> Path:
    """The whole pipeline over the sample crawl, once per test session."""
    from webwinnow.cli import main

    out = tmp_path_factory.mktemp("sample-out") / "out"
    assert main(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF)]) == 0
    return out
