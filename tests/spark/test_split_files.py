"""Large gzipped WARC files read in pieces, a task each: the same tables as reading them whole,
the file's ledger row joined from its pieces; a file whose pieces do not join (damage at a
boundary) is read again whole, and its pieces' rows leave no trace."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from webwinnow.app.cli import main

from paths import CONF, QUICK

pytestmark = pytest.mark.spark

KEYS = {
    "documents": ["doc_id"],
    "ledger": ["file", "offset", "kind", "reason"],
    "fingerprints": ["doc_id", "pos", "hash"],
    "doc_stats": ["doc_id"],
    "candidate_pairs": ["doc_a", "doc_b"],
    "pairs": ["doc_a", "doc_b"],
    "passages": ["doc_a", "doc_b", "start_a", "start_b"],
    "clusters": ["doc_id"],
}


def _same(a: Path, b: Path, tables=KEYS) -> None:
    for table, key in tables.items():
        x = pq.read_table(a / table).to_pandas().sort_values(key).reset_index(drop=True)
        y = pq.read_table(b / table).to_pandas().sort_values(key).reset_index(drop=True)
        assert x.equals(y), table


def _split_conf(tmp_path: Path, split: int) -> Path:
    conf = tmp_path / f"split-{split}.toml"
    conf.write_text(f"[extract]\nsplit_bytes = {split}\n")
    return conf


def test_files_read_in_pieces_give_the_tables_of_files_read_whole(tmp_path, sample_dir, sample_run):
    out = tmp_path / "pieces"
    conf = _split_conf(tmp_path, 64 << 10)
    assert main(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK), "--conf", str(conf)]) == 0
    sizes = [p.stat().st_size for p in sample_dir.glob("*.warc.gz")]
    summary = json.loads((out / "summary.json").read_text())["extract"]
    assert summary["tasks"] == sum(-(-s // (64 << 10)) for s in sizes) > 3 * 3  # every file in pieces
    whole = json.loads((sample_run / "summary.json").read_text())["extract"]
    assert {k: v for k, v in summary.items() if k != "tasks"} == {k: v for k, v in whole.items() if k != "tasks"}
    _same(sample_run, out)
    files = [r for r in pq.read_table(out / "ledger").to_pylist() if r["kind"] == "file"]
    assert len(files) == 3 and all(r["status"] == "read_ok" for r in files)  # one row a file, joined


def _damaged_at_the_middle(path: Path) -> None:
    """Pages, one large record spanning the file's middle, junk after it (no gzip member), pages:
    a piece cut inside the large record ends where the junk starts; the next begins after it."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)

        def page(i: int) -> None:
            body = (f"<html><body><p>page {i} " + " ".join(f"word{i}x{j}" for j in range(400)) + "</p></body></html>").encode()
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(f"http://split.test/{i}", "response", payload=io.BytesIO(body), http_headers=headers)
            )

        for i in range(3):
            page(i)
        blob = os.urandom(400_000)  # incompressible: the member is as large as the payload
        headers = StatusAndHeaders("200 OK", [("Content-Type", "application/octet-stream")], protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record("http://split.test/blob", "response", payload=io.BytesIO(blob), http_headers=headers)
        )
        fh.write(b"junk between members, no gzip magic in it\r\n" * 20)
        for i in range(3, 6):
            page(i)


def test_a_file_whose_pieces_do_not_join_is_read_again_whole(tmp_path):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    _damaged_at_the_middle(crawl / "damaged.warc.gz")
    size = (crawl / "damaged.warc.gz").stat().st_size
    whole, pieces = tmp_path / "whole", tmp_path / "pieces"
    base = ["--conf", str(CONF), "--conf", str(QUICK)]
    assert main(["run", str(crawl), "--out", str(whole), *base]) == 0
    assert main(["run", str(crawl), "--out", str(pieces), *base, "--conf", str(_split_conf(tmp_path, size // 2 + 1))]) == 0
    assert json.loads((pieces / "summary.json").read_text())["extract"]["tasks"] == 3  # 2 pieces, then the file whole
    _same(whole, pieces, {t: KEYS[t] for t in ("documents", "ledger", "fingerprints", "doc_stats")})
    ledger = pq.read_table(pieces / "ledger").to_pylist()
    assert [r["reason"] for r in ledger if r["kind"] == "record" and r["status"] == "failed"] == ["not_gzip_member"]
    assert sum(r["kind"] == "file" for r in ledger) == 1
    assert len([r for r in pq.read_table(pieces / "documents").to_pylist() if r["status"] == "ok"]) == 6
