"""An index of part of a crawl, checked against the rest: what `run` over the whole crawl finds
between the two parts, one way, with exact spans; appends equal an index built at once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import webwinnow
from webwinnow.app.cli import main
from webwinnow.index import layout
from webwinnow.outputs.tables import read_table_config

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

INDEXED_FILES = ("sample-00000.warc.gz", "sample-00001.warc.gz")
NEW_FILE = "sample-00002.warc.gz"


def _rows(folder: Path, table: str) -> list[dict]:
    return pq.read_table(folder / table).to_pylist()


def _max_df(sample_run: Path) -> str:
    return str(read_table_config(str(sample_run), "candidate_pairs")["max_df"])


@pytest.fixture(scope="module")
def index_at_once(tmp_path_factory, sample_dir) -> Path:
    idx = tmp_path_factory.mktemp("index") / "idx"
    assert main(["index", *(str(sample_dir / f) for f in INDEXED_FILES), "--out", str(idx), "-q"]) == 0
    return idx


@pytest.fixture(scope="module")
def check_self(tmp_path_factory, sample_dir, sample_run, index_at_once) -> Path:
    out = tmp_path_factory.mktemp("check") / "out"
    assert (
        main(
            [
                "check",
                str(sample_dir / NEW_FILE),
                "--index",
                str(index_at_once),
                "--out",
                str(out),
                "--self",
                "--max-df",
                _max_df(sample_run),
                "--conf",
                str(CONF),
                "--conf",
                str(QUICK),
                "-q",
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def appended(tmp_path_factory, sample_dir) -> Path:
    idx = tmp_path_factory.mktemp("appended") / "idx"
    assert main(["index", str(sample_dir / INDEXED_FILES[0]), "--out", str(idx), "-q"]) == 0
    assert main(["index", "--append", str(sample_dir / INDEXED_FILES[1]), "--index", str(idx), "-q"]) == 0
    return idx


@pytest.fixture(scope="module")
def check_appended(tmp_path_factory, sample_dir, sample_run, appended) -> Path:
    out = tmp_path_factory.mktemp("check-appended") / "out"
    assert (
        main(
            [
                "check",
                str(sample_dir / NEW_FILE),
                "--index",
                str(appended),
                "--out",
                str(out),
                "--max-df",
                _max_df(sample_run),
                "--conf",
                str(CONF),
                "--conf",
                str(QUICK),
                "-q",
            ]
        )
        == 0
    )
    return out


def _oriented(row: dict, indexed: set[int]) -> dict:
    """A run's pair row with its indexed document as doc_a (a check's orientation)."""
    if row["doc_a"] in indexed or row["doc_b"] not in indexed:
        return row
    out = dict(row)
    for name in row:
        if name.endswith("_a"):
            out[name], out[name[:-2] + "_b"] = row[name[:-2] + "_b"], row[name]
    out["source"] = {"a": "b", "b": "a"}.get(row["source"], row["source"])
    out.pop("boilerplate", None)  # the share of doc_a's fingerprints: of the other side once swapped
    return out


CONTENT = ("content_", "longest_content")


def _key(row: dict) -> tuple:
    return tuple(sorted((k, round(v, 9) if isinstance(v, float) else v) for k, v in row.items()))


def test_a_check_finds_what_run_finds_between_the_new_documents_and_the_indexed_ones(sample_run, check_self):
    new = {r["doc_id"] for r in _rows(check_self, "documents") if r["status"] == "ok"}
    indexed = {r["doc_id"] for r in _rows(check_self, "indexed_documents")}
    assert new and indexed and not new & indexed
    for table in ("candidate_pairs", "pairs", "template_pairs", "passages"):
        want = [_oriented(r, indexed) for r in _rows(sample_run, table) if r["doc_a"] in new or r["doc_b"] in new]
        got = _rows(check_self, table)
        # a run's pairs have doc_a < doc_b: where a check's are the other way round, `boilerplate`
        # (a share of doc_a's fingerprints) is the other side's
        got = [{k: v for k, v in r.items() if not (k == "boilerplate" and r["doc_a"] > r["doc_b"])} for r in got]
        if table == "template_pairs":
            # a check counts template k-grams in the documents it reads, not in the whole index: a
            # template-only pair's content counts may differ from run's; which pairs share content not
            want, got = ([{k: v for k, v in r.items() if not k.startswith(CONTENT)} for r in rows] for rows in (want, got))
        assert sorted(map(_key, got)) == sorted(map(_key, want)), table
        assert all(r["doc_a"] in indexed or (r["doc_a"] in new and r["doc_a"] < r["doc_b"]) for r in got), table
        assert all(r["doc_b"] in new for r in got), table
    cross = [r for r in _rows(check_self, "pairs") if r["doc_a"] in indexed]
    assert len(cross) >= 10 and len(_rows(check_self, "pairs")) > len(cross)  # --self: new ↔ new too


def test_planted_copies_from_indexed_pages_are_found_one_way_with_exact_spans(check_self, sample_dir):
    planted = json.loads((sample_dir / "planted.json").read_text())
    indexed = {r["url"]: r for r in _rows(check_self, "indexed_documents")}
    new = {r["url"]: r for r in _rows(check_self, "documents") if r["status"] == "ok"}
    spans: dict[tuple[int, int], list[dict]] = {}
    for p in _rows(check_self, "passages"):
        spans.setdefault((p["doc_a"], p["doc_b"]), []).append(p)
        assert p["length"] >= 50  # nothing shorter than k
    pairs = {(p["doc_a"], p["doc_b"]) for p in _rows(check_self, "pairs")}
    found = 0
    for copy in planted["copies"]:
        if copy["kind"] != "passage" or copy["src_file"] not in INDEXED_FILES or copy["dst_file"] != NEW_FILE:
            continue
        if copy["normalized_length"] < 149:
            continue
        src, dst = indexed[copy["src_url"]], new[copy["dst_url"]]
        assert (src["doc_id"], dst["doc_id"]) in pairs, copy
        wanted = webwinnow.normalize(copy["text"])[0]
        exact = [
            s
            for s in spans[(src["doc_id"], dst["doc_id"])]
            if wanted in webwinnow.normalize(src["text"][s["start_a"] : s["end_a"]])[0]
            and webwinnow.normalize(src["text"][s["start_a"] : s["end_a"]])[0]
            == webwinnow.normalize(dst["text"][s["start_b"] : s["end_b"]])[0]
        ]
        assert len(exact) == 1, copy
        found += 1
    assert found >= 4


def _index_rows(idx: Path, table: str) -> list[tuple]:
    files = sorted(p for p in (idx / table).rglob("*.parquet"))
    rows = pa.concat_tables([pq.read_table(p) for p in files]).to_pylist()
    if table == "hash_df":
        summed: dict[int, int] = {}
        for r in rows:
            summed[r["hash"]] = summed.get(r["hash"], 0) + r["docs"]
        return sorted(summed.items())
    return sorted(tuple(sorted(r.items())) for r in rows)


def _same_index(a: Path, b: Path) -> None:
    ma, mb = layout.read_manifest(str(a)), layout.read_manifest(str(b))
    assert ma.df_histogram == mb.df_histogram and ma.hashes == mb.hashes
    assert (ma.documents, ma.fingerprints) == (mb.documents, mb.fingerprints)
    for table in ("fingerprints", "hash_df", "documents"):
        assert _index_rows(a, table) == _index_rows(b, table), table


def test_an_index_appended_to_holds_what_one_built_at_once_holds(index_at_once, appended, check_self, check_appended):
    assert len(layout.read_manifest(str(appended)).segments) == 2
    _same_index(appended, index_at_once)
    indexed = {r["doc_id"] for r in _rows(check_self, "indexed_documents")}
    for table in ("candidate_pairs", "pairs", "template_pairs", "passages"):
        one_way = [r for r in _rows(check_self, table) if r["doc_a"] in indexed]
        assert sorted(map(_key, _rows(check_appended, table))) == sorted(map(_key, one_way)), table
    assert not list(appended.glob("_source*")) and not Path(f"{appended}.incomplete").exists()


def test_compaction_merges_the_segments_and_keeps_every_row(index_at_once, appended, check_appended):
    before = sorted(p.relative_to(appended) for p in appended.rglob("*.parquet"))
    assert main(["index", "--compact", "--index", str(appended), "-q"]) == 0
    manifest = layout.read_manifest(str(appended))
    assert len(manifest.segments) == 1
    _same_index(appended, index_at_once)
    after = sorted(p.relative_to(appended) for p in appended.rglob("*.parquet"))
    assert not set(before) & set(after)  # the old segments' files are gone
    assert all(manifest.segments[0].id in p.name for p in after)
    inputs = layout.indexed_inputs(str(appended), manifest)
    assert sorted(Path(p).name for p in inputs) == sorted(INDEXED_FILES)


def test_a_larger_query_window_finds_the_copies_of_its_own_guarantee(tmp_path, sample_dir, sample_run, index_at_once, check_self):
    out = tmp_path / "wide"
    assert (
        main(
            [
                "check",
                str(sample_dir / NEW_FILE),
                "--index",
                str(index_at_once),
                "--out",
                str(out),
                "--query-w",
                "200",
                "--max-df",
                _max_df(sample_run),
                "--conf",
                str(CONF),
                "--conf",
                str(QUICK),
                "-q",
            ]
        )
        == 0
    )
    assert read_table_config(str(out), "fingerprints")["config"]["winnow"]["w"] == 200
    assert len(_rows(out, "fingerprints")) < 0.6 * len(_rows(check_self, "fingerprints"))
    wide = {(p["doc_a"], p["doc_b"]): p for p in _rows(out, "pairs")}
    narrow = [
        p for p in _rows(check_self, "passages") if p["doc_a"] in {r["doc_id"] for r in _rows(check_self, "indexed_documents")}
    ]
    spans = {(p["doc_a"], p["doc_b"], p["start_a"], p["end_a"], p["start_b"], p["end_b"]) for p in _rows(out, "passages")}
    # the guarantee: a shared passage of w_query + k - 1 characters, none of them template
    covered = [p for p in narrow if p["length"] >= 200 + 50 - 1 and p["content_chars_a"] == p["length"] == p["content_chars_b"]]
    missing = [p for p in covered if (p["doc_a"], p["doc_b"]) not in wide]
    assert len(covered) >= 5 and not missing, missing
    # every passage of the guarantee's length is grown to the same exact span
    assert all((p["doc_a"], p["doc_b"], p["start_a"], p["end_a"], p["start_b"], p["end_b"]) in spans for p in covered)


def _refused(args: list[str], capsys, *words: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words) and "Traceback" not in err, err


def test_misuse_is_refused_before_anything_is_written(tmp_path, sample_dir, sample_run, index_at_once, capsys):
    new, old = str(sample_dir / NEW_FILE), str(sample_dir / INDEXED_FILES[0])
    idx = str(index_at_once)
    out = tmp_path / "out"
    _refused(["check", old, "--index", idx, "--out", str(out)], capsys, "already in the index")
    _refused(["check", new, "--out", str(out)], capsys, "--index")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("mine")
    _refused(["check", new, "--index", str(plain), "--out", str(out)], capsys, "not a webwinnow index")
    _refused(["check", new, "--index", idx, "--out", str(out), "--query-w", "50"], capsys, "query window")
    assert not out.exists()
    _refused(["index", new, "--out", str(plain)], capsys, "not a webwinnow index")
    assert [p.name for p in plain.iterdir()] == ["notes.txt"] and (plain / "notes.txt").read_text() == "mine"
    _refused(["index", new, "--out", idx], capsys, "is an index already", "--force")
    _refused(["index", "--append", old, "--index", idx], capsys, "already in the index")
    _refused(["index", "--from", str(sample_run), "--out", str(tmp_path / "i2"), "--k", "40"], capsys, "k=50")
    _refused(["index", "--compact", new, "--index", idx], capsys, "--compact takes no INPUT")
    _refused(["index", "--append", new, "--out", idx], capsys, "--index IDX")
    _refused(["index", "--out", str(tmp_path / "i3")], capsys, "INPUT")
    assert not (tmp_path / "i2").exists() and not (tmp_path / "i3").exists()
    (tmp_path / "i4.incomplete").mkdir()
    (tmp_path / "i4.incomplete" / "user.txt").write_text("mine")
    _refused(["index", new, "--out", str(tmp_path / "i4")], capsys, "i4.incomplete exists and is not an unfinished index")
    assert (tmp_path / "i4.incomplete" / "user.txt").read_text() == "mine" and not (tmp_path / "i4").exists()


def test_a_benchmark_is_checked_item_by_item_and_rewrapped_copies_are_found(tmp_path, sample_dir, index_at_once):
    import random
    import textwrap

    planted = json.loads((sample_dir / "planted.json").read_text())
    copied = [
        c
        for c in planted["copies"]
        if c["kind"] == "passage" and c["src_file"] in INDEXED_FILES and c["normalized_length"] >= 149
    ][:6]
    rng = random.Random(7)
    items = []
    for i, c in enumerate(copied):  # re-wrapped: other line breaks, doubled spaces, tabs, upper case
        text = textwrap.fill(c["text"], width=23 + 5 * i).replace(" ", "  ").replace("\n", " \t\n ")
        items.append({"qid": f"copied-{i}", "question": text.upper() if i % 2 else text, "src_url": c["src_url"]})
    words = sorted({w for c in planted["copies"] if c.get("text") for w in c["text"].split()})
    for i in range(4):  # the crawl's words in a new order: nothing of t characters is shared
        items.append({"qid": f"fresh-{i}", "question": " ".join(rng.choice(words) for _ in range(80))})
    bench = tmp_path / "bench.jsonl"
    lines = [json.dumps(x) for x in items] + ["not json", json.dumps({"qid": "no-text"})]
    bench.write_text("\n".join(lines) + "\n")
    out = tmp_path / "decon"
    assert (
        main(
            [
                "check",
                str(bench),
                "--index",
                str(index_at_once),
                "--out",
                str(out),
                "--text-column",
                "question",
                "--id-column",
                "qid",
                "--conf",
                str(CONF),
                "--conf",
                str(QUICK),
                "-q",
            ]
        )
        == 0
    )
    rows = {r["item_id"]: r for r in _rows(out, "contamination")}
    assert sorted(rows) == sorted(x["qid"] for x in items)
    indexed = {r["doc_id"]: r for r in _rows(out, "indexed_documents")}
    for x in items:
        r = rows[x["qid"]]
        assert r["warc_file"] == str(bench) and r["url"] == x["qid"]
        if x["qid"].startswith("fresh"):
            assert r["indexed_documents"] == 0 and r["covered_chars"] == 0, r
            continue
        assert x["src_url"] in {m["url"] for m in r["matches"]}, x
        assert r["covered_chars"] == r["norm_chars"] and r["covered_share"] == 1.0, x
        for s in r["spans"]:  # exact on both sides
            mine = webwinnow.normalize(x["question"][s["start"] : s["end"]])[0]
            theirs = webwinnow.normalize(indexed[s["doc_id"]]["text"][s["start_indexed"] : s["end_indexed"]])[0]
            assert mine == theirs and len(mine) == s["length"] >= 50
    page = (out / "report" / "contamination.html").read_text()
    assert all(f"copied-{i}" in page for i in range(len(copied))) and "fresh-0" not in page
    ledger = [r for r in _rows(out, "ledger") if r["kind"] == "record"]
    assert sorted((r["offset"], r["reason"]) for r in ledger) == [(len(items), "bad_item"), (len(items) + 1, "bad_item")]
    assert "--text-column" in next(r["detail"] for r in ledger if r["offset"] == len(items) + 1)


def test_report_rows_on_the_driver_equal_sparks_in_a_check(check_self, spark_session, monkeypatch):
    from reportpaths import report_rows_both_ways

    got = report_rows_both_ways(spark_session, check_self, monkeypatch)
    assert got["pages"].contamination and got["pages"].covered  # the most covered new documents
    assert got["top"][0]  # pairs new <-> indexed, their indexed side's WARC coordinates from indexed_documents
    assert all(r["warc_file_a"] and r["warc_file_b"] for r in got["top"][0])
