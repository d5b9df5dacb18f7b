"""Paths the tests share: the repository, its config, and the shared crawl files beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "lib"
SHARED = REPO.parent / "shared"
REAL = SHARED / "data" / "warc" / "real"
MALFORMED = SHARED / "data" / "warc" / "malformed"
BADWARC = SHARED / "data" / "badwarc"
CONF = REPO / "conf" / "webwinnow.toml"
QUICK = REPO / "tests" / "quick.toml"  # no figures page: for runs that test running, not the report


def need(path: Path) -> Path:
    """Skip, saying why, when the shared data set beside the repository is absent."""
    if not path.exists():
        pytest.skip(f"{path} is absent: these tests read the shared crawl files beside the repository")
    return path
