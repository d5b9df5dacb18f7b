"""A passage that runs past its pair's windows: the pair is grown again from its whole texts, on
the driver's path (the window pass's files) and on Spark's (its shuffle), to the same one span
over the whole copied text.

The copy is a short shared text followed by a long block that is in more than max_df pages: the
block's fingerprints are boilerplate, so the pair's seeds are the short text's alone, and its
span grows from them through the block, past the windows' margin (8(w + k) characters)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dedupcrawl
import pyarrow.parquet as pq
import pytest

import webwinnow
from webwinnow.app.cli import main

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

MAX_DF = 5


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("regrowth")
    c = dedupcrawl.Crawl(seed=29)
    block = c.words(6000)  # five times the margin at the default k and w
    for i in range(MAX_DF + 2):
        c.page(f"http://host.example/p{i}", block)
    copied = c.words(300) + " " + block
    c.page("http://a.example/copy", copied)
    c.page("http://b.example/copy", copied)
    (folder / "crawl.jsonl").write_text("".join(json.dumps(item) + "\n" for item in c.items))
    (folder / "max_df.toml").write_text(f"[pairing]\nmax_df = {MAX_DF}\n")
    return folder, copied


def _run(folder: Path, out: Path) -> dict:
    conf = ["--conf", str(CONF), "--conf", str(QUICK), "--conf", str(folder / "max_df.toml")]
    assert main(["run", str(folder / "crawl.jsonl"), "--out", str(out), *conf, "-q"]) == 0
    return json.loads((out / "summary.json").read_text())


def _copy_pair(out: Path) -> tuple[dict, list[dict]]:
    pairs = pq.read_table(out / "pairs").to_pylist()
    hosts = {r["url"]: r["doc_id"] for r in pq.read_table(out / "documents", columns=["doc_id", "url"]).to_pylist()}
    ids = {hosts["http://a.example/copy"], hosts["http://b.example/copy"]}
    (pair,) = [r for r in pairs if {r["doc_a"], r["doc_b"]} == ids]
    spans = [r for r in pq.read_table(out / "passages").to_pylist() if (r["doc_a"], r["doc_b"]) == (pair["doc_a"], pair["doc_b"])]
    return pair, spans


def test_a_passage_past_its_windows_is_grown_again_from_the_whole_texts(crawl, tmp_path, monkeypatch):
    from webwinnow.stages import passages

    folder, copied = crawl
    out = tmp_path / "driver"
    summary = _run(folder, out)
    assert summary["passages"]["pairs_grown_from_whole_texts"] >= 1
    pair, spans = _copy_pair(out)
    assert len(spans) == 1 and spans[0]["length"] == len(webwinnow.normalize(copied)[0]), "the whole copy in one span"

    # the pairs too many for the driver: Spark's shuffle brings the sides, and the whole texts
    spark = tmp_path / "spark"
    shutil.copytree(out, spark)
    monkeypatch.setattr(passages, "BROADCAST_ROWS", -1)
    assert main(["passages", "--out", str(spark), "--conf", str(CONF), "--conf", str(QUICK), "-q"]) == 0
    assert json.loads((spark / "summary.json").read_text())["passages"]["pairs_grown_from_whole_texts"] >= 1
    assert _copy_pair(spark) == (pair, spans), "the same pair and span on both paths"
