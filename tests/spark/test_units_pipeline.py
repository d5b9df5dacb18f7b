"""The word and code units through Spark: an index and a check in words on the sample's halves,
a run in code tokens on pages that copy a program under other names."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from webwinnow.app.cli import main
from webwinnow.core.codetokens import code_tokens
from webwinnow.core.winnowing import units
from webwinnow.index import layout

from codepages import ORIGINAL, PAGES, RENAMED, write_code_warc
from paths import CONF, QUICK

pytestmark = pytest.mark.spark

INDEXED_FILES = ("sample-00000.warc.gz", "sample-00001.warc.gz")
NEW_FILE = "sample-00002.warc.gz"
K, W = 5, 16  # the word unit's defaults
T = W + K - 1


def _rows(folder: Path, table: str) -> list[dict]:
    return pq.read_table(folder / table).to_pylist()


def _words(text: str) -> list[int]:
    return units(text, "word")[0].tolist()


@pytest.fixture(scope="module")
def word_index(tmp_path_factory, sample_dir) -> Path:
    idx = tmp_path_factory.mktemp("word-index") / "idx"
    assert main(["index", *(str(sample_dir / f) for f in INDEXED_FILES), "--out", str(idx), "--unit", "word", "-q"]) == 0
    return idx


@pytest.fixture(scope="module")
def word_check(tmp_path_factory, sample_dir, word_index) -> Path:
    out = tmp_path_factory.mktemp("word-check") / "out"
    assert (
        main(
            [
                "check",
                str(sample_dir / NEW_FILE),
                "--index",
                str(word_index),
                "--out",
                str(out),
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


def test_a_word_index_records_its_unit_and_a_check_uses_it(word_index, word_check):
    settings = layout.read_manifest(str(word_index)).settings
    assert (settings.unit, settings.k, settings.w, settings.lexer) == ("word", K, W, "")
    made = json.loads((word_check / "fingerprints" / "_webwinnow.json").read_text())["config"]["winnow"]
    assert (made["unit"], made["k"], made["w"]) == ("word", K, W)
    stats = _rows(word_check, "doc_stats")
    new = {r["doc_id"]: r["text"] for r in _rows(word_check, "documents") if r["status"] == "ok"}
    for r in stats:  # norm_chars counts words in a word run
        assert r["norm_chars"] == len(_words(new[r["doc_id"]])) and r["kgrams"] == max(r["norm_chars"] - K + 1, 0)


def test_planted_copies_of_t_words_are_found_one_way_with_exact_spans(word_check, sample_dir):
    planted = json.loads((sample_dir / "planted.json").read_text())
    indexed = {r["url"]: r for r in _rows(word_check, "indexed_documents")}
    texts = {r["doc_id"]: r["text"] for r in _rows(word_check, "indexed_documents")}
    new = {r["url"]: r for r in _rows(word_check, "documents") if r["status"] == "ok"}
    texts.update({r["doc_id"]: r["text"] for r in new.values()})
    spans: dict[tuple[int, int], list[dict]] = {}
    for p in _rows(word_check, "passages"):
        spans.setdefault((p["doc_a"], p["doc_b"]), []).append(p)
        a, b = texts[p["doc_a"]][p["start_a"] : p["end_a"]], texts[p["doc_b"]][p["start_b"] : p["end_b"]]
        assert _words(a) == _words(b) and len(_words(a)) == p["length"] >= K  # exact spans of whole words
    pairs = {(p["doc_a"], p["doc_b"]) for p in _rows(word_check, "pairs")}
    found = 0
    for copy in planted["copies"]:
        if copy["kind"] != "passage" or copy["src_file"] not in INDEXED_FILES or copy["dst_file"] != NEW_FILE:
            continue
        wanted = _words(copy["text"])
        if len(wanted) < T:
            continue
        src, dst = indexed[copy["src_url"]], new[copy["dst_url"]]
        assert (src["doc_id"], dst["doc_id"]) in pairs, copy
        covering = []
        for s in spans[(src["doc_id"], dst["doc_id"])]:
            have = _words(src["text"][s["start_a"] : s["end_a"]])
            if any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1)):
                covering.append(s)
        assert len(covering) == 1, copy  # one span holds the whole copy
        found += 1
    assert found >= 4


def test_an_append_in_another_unit_is_refused(word_index, sample_dir, capsys):
    assert main(["index", "--append", str(sample_dir / NEW_FILE), "--index", str(word_index), "--unit", "char"]) == 2
    err = capsys.readouterr().err
    assert "unit word" in err and "Traceback" not in err
    assert len(layout.read_manifest(str(word_index)).segments) == 1


@pytest.fixture(scope="module")
def code_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("code-crawl")
    warc = write_code_warc(folder / "code.warc.gz")
    out = folder / "out"
    assert main(["run", str(warc), "--out", str(out), "--unit", "code", "--conf", str(CONF), "--conf", str(QUICK), "-q"]) == 0
    return out


def test_a_program_copied_under_other_names_is_one_passage_of_code_tokens(code_run):
    docs = {r["url"]: r for r in _rows(code_run, "documents")}
    assert {url: d["text"] for url, d in docs.items()} == {url: blocks for url, (_, blocks) in PAGES.items()}
    a, b = docs["https://a.test/count.html"], docs["https://b.test/copy.html"]
    key = tuple(sorted((a["doc_id"], b["doc_id"])))
    assert key in {(p["doc_a"], p["doc_b"]) for p in _rows(code_run, "pairs")}
    first, second = (a, b) if key[0] == a["doc_id"] else (b, a)
    longest = max((p for p in _rows(code_run, "passages") if (p["doc_a"], p["doc_b"]) == key), key=lambda p: p["length"])
    got = {
        first["url"]: first["text"][longest["start_a"] : longest["end_a"]],
        second["url"]: second["text"][longest["start_b"] : longest["end_b"]],
    }
    assert got == {a["url"]: ORIGINAL, b["url"]: RENAMED}  # exact spans: the whole program on both sides
    assert longest["length"] == len(code_tokens(ORIGINAL)[0])
    stats = {r["doc_id"]: r for r in _rows(code_run, "doc_stats")}
    assert stats[docs["https://c.test/prose.html"]["doc_id"]]["norm_chars"] == 0  # no code: no tokens
    assert (code_run / "report" / "index.html").is_file()


def test_misuse_of_a_code_run_is_refused(code_run, capsys):
    before = (code_run / "fingerprints" / "_webwinnow.json").read_text()
    for args, words in (
        (["dedup", "--out", str(code_run)], "code run"),
        (["fingerprint", "--out", str(code_run)], "add --unit code"),  # the default unit is char
        (
            ["run", str(code_run / "nothing.warc"), "--out", str(code_run.parent / "x"), "--unit", "code", "--dedup"],
            "--dedup with --unit code",
        ),
        (
            ["run", str(code_run / "nothing.warc"), "--out", str(code_run.parent / "x"), "--unit", "code", "--lexer", "klingon"],
            "no Pygments lexer is called 'klingon'",
        ),
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, err
    assert not (code_run / "deduped").exists() and not (code_run.parent / "x").exists()
    assert (code_run / "fingerprints" / "_webwinnow.json").read_text() == before
