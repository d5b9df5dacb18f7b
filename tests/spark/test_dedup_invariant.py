"""Dedup's promise on a crawl made to break it (tests/dedupcrawl.py): after --dedup, no text of t
or more normalized characters is in two kept pages, and every planted passage is whole in exactly
one kept page: past the passage search's span cap, past the seeds' repeat cap, along a chain of
copies, where a passage's head was copied from an earlier page, inside a near-duplicate cluster,
and where the source holds it as its host's template."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import dedupcrawl
import pyarrow.parquet as pq
import pytest

import webwinnow
from webwinnow.app.cli import main

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

T = 149  # w + k - 1 at the default k = 50, w = 100


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("dedupcrawl")
    planted = dedupcrawl.build(folder)
    conf = folder / "max_df.toml"
    conf.write_text(f"[pairing]\nmax_df = {dedupcrawl.MAX_DF}\n")
    out = folder / "out"
    args = ["run", str(folder / "crawl.jsonl"), str(folder / "site.jsonl"), "--out", str(out), "--dedup", "--strip-template"]
    assert main([*args, "--conf", str(CONF), "--conf", str(QUICK), "--conf", str(conf), "-q"]) == 0
    return out, planted


def _kept(out: Path) -> dict[str, str]:
    return {
        r["url"]: webwinnow.normalize(r["text"])[0]
        for r in pq.read_table(out / "deduped").to_pylist()
        if r["dropped_reason"] is None
    }


def test_no_text_of_t_characters_is_left_in_two_kept_pages(run):
    out, _ = run
    holders: dict[str, set[str]] = defaultdict(set)
    for url, text in _kept(out).items():
        for i in range(len(text) - T + 1):
            holders[text[i : i + T]].add(url)
    shared: dict[tuple[str, ...], int] = defaultdict(int)
    for urls in holders.values():
        if len(urls) > 1:
            shared[tuple(sorted(urls))] += 1
    assert not shared, f"t-grams left in two kept pages: {dict(shared)}"


def test_every_planted_passage_is_whole_in_exactly_one_kept_page(run):
    out, planted = run
    kept = _kept(out)
    where = {name: [url for url, text in kept.items() if webwinnow.normalize(p)[0] in text] for name, p in planted.items()}
    assert {name: urls for name, urls in where.items() if len(urls) != 1} == {}
    # and in the page it should be: the earliest holder that is kept
    assert where["cap-0"] == where["cap-1499"] == ["cap-a"]
    assert where["repeated"] == ["rep-a"] and where["chain"] == ["chain-a"]
    assert where["overlap-head"] == ["overlap-e"] and where["overlap-tail"] == ["overlap-r"]
    # the cluster keeps one member (its earliest: undated, the smallest doc_id) and drops the other
    member = [url for url in kept if url.startswith("near-")]
    assert len(member) == 1 and where["cluster-both"] == member
    dropped = "near-1" if member == ["near-2"] else "near-2"
    assert where[f"cluster-{member[0]}"] == member and where[f"cluster-{dropped}"] == ["cluster-x"]
    assert where["template+content"] == ["http://d.example/source"]


def test_the_caps_are_said(run):
    import json

    out, _ = run
    stats = json.loads((out / "deduped" / "_webwinnow.json").read_text())["stats"]
    # the 1,500-paragraph pair hit passages.max_spans and was grown again whole
    assert stats["regrown_pairs"] == 1 and stats["incomplete_pairs"] == 0
    passages = pq.read_table(out / "passages").to_pylist()
    assert sum(p["capped"] for p in passages) == 1000
