"""Item files (benchmarks, corpus shards) as documents: every row an item or a ledger row with its reason."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq

from webwinnow.crawl.ids import doc_id
from webwinnow.crawl.inputs import list_inputs
from webwinnow.crawl.items import item_rows


def _split(rows):
    rows = list(rows)
    docs = [r for r in rows if r["table"] == "documents"]
    ledger = [r for r in rows if r["table"] == "ledger"]
    return docs, [r for r in ledger if r["kind"] == "record"], [r for r in ledger if r["kind"] == "file"]


def test_jsonl_items_become_documents_and_bad_lines_ledger_rows(tmp_path):
    path = tmp_path / "bench.jsonl.gz"
    lines = [
        json.dumps({"id": 7, "text": "Line one\nline two"}),
        "{broken",
        json.dumps([1, 2]),
        json.dumps({"id": "x", "body": "no text"}),
        json.dumps({"text": 5}),
        "",
        json.dumps({"text": "no id"}),
    ]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    docs, bad, (summary,) = _split(item_rows(str(path), "text", "id", 1000))
    assert [(d["record_id"], d["url"], d["text"], d["offset"]) for d in docs] == [
        ("7", "7", "Line one\nline two", 0),
        ("6", "6", "no id", 6),
    ]
    assert docs[0]["doc_id"] == doc_id(str(path), 0) and docs[0]["status"] == "ok"
    assert [(r["offset"], r["reason"]) for r in bad] == [(i, "bad_item") for i in (1, 2, 3, 4, 5)]
    assert "not JSON" in bad[0]["detail"] and "--text-column" in bad[2]["detail"] and "int" in bad[3]["detail"]
    assert (summary["status"], summary["records_seen"], summary["parsed"], summary["failed"]) == ("read_ok", 7, 2, 5)


def test_parquet_items_and_a_missing_text_column(tmp_path):
    path = tmp_path / "bench.parquet"
    pq.write_table(pa.table({"qid": ["a", "b", "c"], "prompt": ["first", None, "third" * 300]}), path)
    docs, bad, (summary,) = _split(item_rows(str(path), "prompt", "qid", 1000))
    assert [(d["record_id"], d["offset"]) for d in docs] == [("a", 0)]
    assert [(r["offset"], r["status"], r["reason"]) for r in bad] == [(1, "failed", "bad_item"), (2, "flagged", "item_too_large")]
    assert summary["parsed"] + summary["failed"] + summary["flagged"] == summary["records_seen"] == 3
    _, _, (failed,) = _split(item_rows(str(path), "text", "id", 1000))
    assert failed["status"] == "failed" and "--text-column" in failed["detail"]


def test_a_text_file_is_one_item_and_a_folder_of_crawl_files_ignores_its_readme(tmp_path):
    (tmp_path / "q.txt").write_text("a whole\nquestion")
    docs, _, _ = _split(item_rows(str(tmp_path / "q.txt"), "text", "id", 1000))
    assert [(d["record_id"], d["text"]) for d in docs] == [("q.txt", "a whole\nquestion")]
    assert [f.path for f in list_inputs([str(tmp_path)])] == [str(tmp_path / "q.txt")]
    (tmp_path / "a.warc.gz").write_bytes(b"")
    assert [f.path for f in list_inputs([str(tmp_path)])] == [str(tmp_path / "a.warc.gz")]
    assert [f.path for f in list_inputs([str(tmp_path / "q.txt")])] == [str(tmp_path / "q.txt")]


def test_hostile_lines_are_ledger_rows_and_every_other_item_is_read(tmp_path):
    """A line a reader downstream could not take as it is never takes the file down with it."""
    from webwinnow.crawl.records import rows_to_batches

    path = tmp_path / "hostile.jsonl"
    lines = [
        b"\xef\xbb\xbf" + json.dumps({"id": "first", "text": "after a byte order mark"}).encode(),
        b'{"id": "s", "text": "lone \\ud800 surrogate"}',
        b'{"id": "\\udc80", "text": "a lone surrogate in the id"}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"id": 1e400, "text": "an infinite id"}',
        json.dumps({"id": "first", "text": "the same id again"}).encode(),
        b'{"id": "latin", "text": "caf\xe9"}',
        json.dumps({"id": "last", "text": "still read"}).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    rows = list(item_rows(str(path), "text", "id", 1000))
    docs, bad, (summary,) = _split(rows)
    assert [(d["record_id"], d["text"]) for d in docs] == [("first", "after a byte order mark"), ("last", "still read")]
    assert [(r["offset"], r["reason"]) for r in bad] == [(i, "bad_item") for i in range(1, 7)]
    details = [r["detail"] for r in bad]
    assert "lone surrogate (U+D800" in details[0] and "lone surrogate (U+DC80)" in details[1]
    assert "deeper" in details[2] and "not a finite number" in details[3]
    assert "also row 1's" in details[4] and "is not UTF-8 (byte 0xe9" in details[5]
    assert (summary["status"], summary["records_seen"], summary["parsed"], summary["failed"]) == ("read_ok", 8, 2, 6)
    for batch in rows_to_batches(iter(rows)):  # what the extract stage does with them: no row breaks it
        assert batch.num_rows


def test_a_cut_gzip_keeps_its_complete_lines(tmp_path):
    whole = gzip.compress(b"".join(json.dumps({"id": i, "text": f"item {i} " * 50}).encode() + b"\n" for i in range(200)))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    docs, bad, (summary,) = _split(item_rows(str(path), "text", "id", 100_000))
    assert 0 < len(docs) < 200 and [d["record_id"] for d in docs] == [str(i) for i in range(len(docs))]
    assert [r["reason"] for r in bad] == ["truncated_gzip_member"] and "the lines before were read" in bad[0]["detail"]
    assert summary["status"] == "read_ok" and summary["records_seen"] == summary["parsed"] + summary["failed"]
