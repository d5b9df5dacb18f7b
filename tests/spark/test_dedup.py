"""The dedup stage on the sample: planted copies cut from the copy and kept in the source, mirrors
dropped but one, template text stripped but on each host's first page, exact accounting."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import webwinnow
from webwinnow import schemas
from webwinnow.analysis.removal import cut, merge_spans
from webwinnow.app.cli import main
from webwinnow.crawl.hosts import host_of

from paths import CONF, QUICK

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def deduped(sample_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dedup") / "out"
    shutil.copytree(sample_run, out)
    assert main(["dedup", "--out", str(out), "--conf", str(CONF), "--strip-template"]) == 0
    return out


def _rows(out: Path, table: str) -> list[dict]:
    return pq.read_table(out / table).to_pylist()


def _planted(out: Path, sample_dir: Path):
    docs = sorted((d for d in _rows(out, "documents") if d["status"] == "ok"), key=lambda d: d["fetch_time"])
    by_url: dict[str, list[dict]] = {}
    for d in docs:
        by_url.setdefault(d["url"], []).append(d)
    for copy in json.loads((sample_dir / "planted.json").read_text())["copies"]:
        if copy["kind"] == "version":
            yield copy, by_url[copy["src_url"]][0], by_url[copy["src_url"]][-1]
        else:
            yield copy, by_url[copy["src_url"]][0], by_url[copy["dst_url"]][0]


def test_planted_copies_leave_the_copy_and_stay_in_the_source(deduped, sample_dir):
    rows = {r["doc_id"]: r for r in _rows(deduped, "deduped")}
    pairs = {(p["doc_a"], p["doc_b"]): p for p in _rows(deduped, "pairs")}
    norm = lambda text: webwinnow.normalize(text or "")[0]
    checked = Counter()
    for copy, src, dst in _planted(deduped, sample_dir):
        key = tuple(sorted((src["doc_id"], dst["doc_id"])))
        if copy["kind"] == "passage":
            if copy["normalized_length"] < 149:
                continue
            # the planted source is the earlier page, and the pair says so
            assert copy["src_modified"] < copy["dst_modified"]
            assert pairs[key]["source"] == ("a" if key[0] == src["doc_id"] else "b"), copy
            wanted = norm(copy["text"])
            assert wanted in norm(rows[src["doc_id"]]["text"]), copy
            assert wanted not in norm(rows[dst["doc_id"]]["text"]), copy
            assert src["doc_id"] in rows[dst["doc_id"]]["copied_from"]
            checked["passage"] += 1
        else:  # mirrors and versions: the source kept, the copy dropped as its near-duplicate
            assert rows[src["doc_id"]]["dropped_reason"] is None, copy
            assert (rows[dst["doc_id"]]["dropped_reason"], rows[dst["doc_id"]]["duplicate_of"]) == (
                "near_duplicate",
                src["doc_id"],
            ), copy
            checked[copy["kind"]] += 1
    assert checked["passage"] >= 15 and checked["mirror_exact"] >= 3 and checked["version"] >= 2, checked


def test_every_character_is_accounted_for_and_cut_exactly(deduped):
    texts = {d["doc_id"]: d["text"] for d in _rows(deduped, "documents") if d["status"] == "ok"}
    table = pq.read_table(deduped / "deduped")
    assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in schemas.DEDUPED]
    rows = table.to_pylist()
    assert sorted(r["doc_id"] for r in rows) == sorted(texts)  # one row per ok document
    for r in rows:
        spans = [(s["start"], s["end"]) for s in r["removed_spans"]]
        original = texts[r["doc_id"]]
        assert merge_spans(spans, len(original)) == spans  # merged, sorted, inside the text
        assert r["original_chars"] == len(original) == r["removed_chars"] + r["kept_chars"]
        assert r["removed_chars"] == sum(e - s for s, e in spans)
        if r["dropped_reason"] is None:
            assert r["text"] == cut(original, spans)
        else:
            assert r["text"] is None and spans == [(0, len(original))]
    stats = json.loads((deduped / "deduped" / "_webwinnow.json").read_text())["stats"]
    assert stats["removed_chars"] == sum(r["removed_chars"] for r in rows)
    assert stats["kept"] == sum(r["dropped_reason"] is None for r in rows)
    assert stats["copied_chars_removed"] > 10_000 and stats["template_chars_removed"] > 100_000


def test_copy_sides_lose_their_passages_to_kept_sources(deduped):
    """Every passage of at least t with k content characters on its copying side is inside that
    side's removed spans, its source side being kept; the copy is the later page in one order
    of the crawl (Last-Modified, WARC-Date, Date, a missing time last; then crawl order), which
    on the sample, where every page has all three, is the pair's source."""
    rows = {r["doc_id"]: r for r in _rows(deduped, "deduped")}
    docs = {d["doc_id"]: d for d in _rows(deduped, "documents")}
    order = lambda d: (
        tuple(docs[d][c] or "~" for c in ("last_modified", "fetch_time", "http_date"))
        + (docs[d]["warc_file"], docs[d]["warc_offset"], d)
    )
    checked = 0
    for p in _rows(deduped, "passages"):
        if p["length"] < 149:
            continue
        copy = "b" if order(p["doc_a"]) < order(p["doc_b"]) else "a"
        source = "a" if copy == "b" else "b"
        assert p["source"] == source  # the sample dates every page: one order, the pairs' own
        target, origin = rows[p[f"doc_{copy}"]], rows[p[f"doc_{source}"]]
        if origin["dropped_reason"] is not None or target["dropped_reason"] is not None or p[f"content_chars_{copy}"] < 50:
            continue
        spans = [(s["start"], s["end"]) for s in target["removed_spans"]]
        assert any(s <= p[f"start_{copy}"] and p[f"end_{copy}"] <= e for s, e in spans), p
        checked += 1
    assert checked >= 20


def test_template_text_stays_on_each_hosts_first_page_only(deduped):
    docs = {d["doc_id"]: d for d in _rows(deduped, "documents") if d["status"] == "ok"}
    rows = [r for r in _rows(deduped, "deduped") if r["dropped_reason"] is None]
    by_host: dict[str, list[dict]] = {}
    for r in rows:
        by_host.setdefault(host_of(r["url"]), []).append(r)
    stripped = 0
    for host, members in by_host.items():
        first = min(members, key=lambda r: (r["warc_file"], r["warc_offset"], r["doc_id"]))
        assert first["template_chars"] == 0, host
        stripped += sum(r["template_chars"] > 0 for r in members)
    assert stripped > 100
    # the sample's navigation bar: on the first page of its host, and on no other kept page
    nav = "Log in · Create account"
    holders = [r for r in rows if nav in docs[r["doc_id"]]["text"]]
    assert holders and sum(nav in r["text"] for r in holders) == 1


def test_the_jsonl_is_the_kept_documents_in_the_dolma_shape(deduped):
    rows = {str(r["doc_id"]): r for r in _rows(deduped, "deduped") if r["dropped_reason"] is None}
    lines = [
        json.loads(line)
        for f in sorted((deduped / "deduped_jsonl").glob("part-*.json.gz"))
        for line in gzip.open(f, "rt", encoding="utf-8")
    ]
    assert sorted(line["id"] for line in lines) == sorted(rows)
    for line in lines:
        r = rows[line["id"]]
        assert line["text"] == r["text"] and line["source"] == "webwinnow" and line["created"] == r["fetch_time"]
        meta = line["metadata"]
        assert (meta["url"], meta["warc_file"], meta["warc_offset"]) == (r["url"], r["warc_file"], r["warc_offset"])
        assert meta["kept_chars"] == r["kept_chars"] and meta["cluster_size"] == r["cluster_size"]


def test_the_report_shows_content_sources_and_the_dedup_summary(deduped):
    import html
    import re

    assert main(["report", "--out", str(deduped), "--conf", str(CONF), "--conf", str(QUICK)]) == 0
    report = deduped / "report"
    text = lambda name: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", (report / name).read_text())))
    stats = json.loads((deduped / "deduped" / "_webwinnow.json").read_text())["stats"]
    dedup = text("dedup.html")
    assert f"documents kept {stats['kept']:,} of {stats['documents']:,}" in dedup
    assert f"dropped as near-duplicates {stats['near_duplicates']:,}" in dedup
    index = text("index.html")
    pairs = pq.read_table(deduped / "pairs").to_pandas()
    best = pairs.assign(c=pairs[["content_chars_a", "content_chars_b"]].min(axis=1)).sort_values("c").iloc[-1]
    assert f"Pairs 1–{min(50, len(pairs))} of {len(pairs):,}" in index and f"{int(best['c']):,}" in index and " source " in index
    cross = text("cross-host.html")
    hosts = pairs.url_a.str.split("/").str[2] != pairs.url_b.str.split("/").str[2]
    assert f"of {int(hosts.sum()):,}" in cross


def test_report_rows_on_the_driver_equal_sparks_after_dedup(deduped, spark_session, monkeypatch):
    from reportpaths import report_rows_both_ways

    pages = report_rows_both_ways(spark_session, deduped, monkeypatch)["pages"]
    assert pages.dedup and pages.trimmed  # the most trimmed pages, the same both ways
    removed = [t[3] for t in pages.trimmed]
    assert removed == sorted(removed, reverse=True) and all(removed)
