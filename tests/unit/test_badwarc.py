"""The damaged-crawl catalogue (../shared/data/badwarc): every record accounted for as expected.

For each file: the documents that must be recovered are, byte for byte (sha256 of the decoded
entity body) and with their marker in the text; every other record is counted with the
catalogue's reason; per file parsed + skipped + failed + flagged = records seen.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from webwinnow.config import ExtractConfig
from webwinnow.crawl.records import file_rows

from paths import BADWARC, MALFORMED, REAL, need

CATALOGUE = json.loads((BADWARC / "expected_results.json").read_text())["files"] if BADWARC.exists() else []


def _rows(path):
    rows = list(file_rows(str(path), ExtractConfig()))
    return rows[:-1], rows[-1]


@pytest.mark.parametrize("entry", CATALOGUE, ids=[e["file"][:3] for e in CATALOGUE])
def test_catalogue_file(entry):
    records, summary = _rows(BADWARC / "files" / entry["file"])
    expected = entry["expected"]
    docs = [r for r in records if r["table"] == "documents" and r["status"] == "ok"]
    by_sha = {}
    for d in docs:
        by_sha.setdefault(d["body_sha256"], []).append(d)
    # every record that must be recovered is, with its marker in the extracted text
    for rec in entry["records"]:
        if rec["expect"] == "recover":
            found = by_sha.get(rec["body_sha256"])
            assert found, f"record {rec['n']} ({rec['uri']}) not recovered"
            assert any(rec["marker"] in d["text"] for d in found), f"record {rec['n']}: marker missing"
    lenient = [r for r in entry["records"] if r["expect"] == "recover_or_fail"]
    assert summary["records_seen"] == expected["physical_records"]
    assert summary["parsed"] + summary["skipped"] + summary["failed"] + summary["flagged"] == summary["records_seen"]
    # a lenient record is either recovered or failed, never skipped or silently lost
    assert expected["valid_html_must_recover"] <= summary["parsed"] <= expected["valid_html_must_recover"] + len(lenient)
    assert summary["parsed"] + summary["failed"] == expected["valid_html_must_recover"] + expected["accounted_fail"]
    assert summary["skipped"] == expected["accounted_skip"]
    assert summary["flagged"] == expected["accounted_flag"]
    # ledger reasons: the catalogue's, but for lenient records we recovered (exactly, by sha256)
    got = Counter(r["reason"] for r in records if r["table"] == "ledger")
    want = Counter(r["reason"] for r in entry["records"] if r["expect"] in ("skip", "fail", "flag"))
    for rec in lenient:
        if rec["body_sha256"] in by_sha:
            assert any(rec["marker"] in d["text"] for d in by_sha[rec["body_sha256"]])
        else:
            want[rec["reason"]] += 1
    assert got == want
    assert len(docs) == summary["parsed"]
    if entry["expected"].get("file_level"):
        assert summary["status"] == "empty" and summary["reason"] == "zero_bytes"
    else:
        assert summary["status"] == "read_ok"


def test_duplicate_record_ids_still_give_distinct_documents():
    need(BADWARC)
    entry = next(e for e in CATALOGUE if e["fault_id"] == "f22")
    records, _ = _rows(BADWARC / "files" / entry["file"])
    docs = [r for r in records if r["table"] == "documents"]
    assert len({d["doc_id"] for d in docs}) == len(docs) == 5
    assert len({d["record_id"] for d in docs}) < 5


@pytest.mark.parametrize("name", sorted(p.name for p in MALFORMED.iterdir()) if MALFORMED.exists() else [])
def test_real_damaged_files_lose_nothing(name):
    """Files damaged in the wild: no crash, every record header in the file is accounted for."""
    import gzip

    path = MALFORMED / name
    records, summary = _rows(path)
    assert summary["parsed"] + summary["skipped"] + summary["failed"] + summary["flagged"] == summary["records_seen"]
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            import zlib

            raw = zlib.decompressobj(31).decompress(raw)  # truncated: what is there
    if raw.startswith(b"WARC/"):
        headers = raw.count(b"\nWARC/1.0\r\n") + raw.count(b"\nWARC/1.0\n") + raw.count(b"\nWARC/0.18\n") + 1
        # every record header is a record (possibly failed), or a damaged span reported once
        assert summary["records_seen"] >= headers - 1


PEAK_RSS_SCRIPT = """
import resource, sys
from webwinnow.config import ExtractConfig
from webwinnow.crawl.records import file_rows
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = list(file_rows(sys.argv[1], ExtractConfig()))
print(rows[-1]["flagged"], base // 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.parametrize("fault", ["f18", "f19"])
def test_bounded_memory_on_oversized_record_and_bomb(fault):
    """f18 (100 MiB record) and f19 (1 GiB gzip bomb) are flagged within a stated memory bound:
    two stored-body caps (read, then joined) plus one decoded-body cap above the interpreter's
    own footprint, whatever the record's size or its expansion."""
    import subprocess
    import sys

    need(BADWARC)
    entry = next(e for e in CATALOGUE if e["fault_id"] == fault)
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS_SCRIPT, str(BADWARC / "files" / entry["file"])],
        capture_output=True,
        text=True,
        check=True,
    )
    flagged, base_mib, peak_mib = map(int, done.stdout.split())
    assert flagged == 1
    cfg = ExtractConfig()
    bound = (2 * cfg.max_body_bytes + cfg.max_decoded_bytes) // 2**20 + 64
    assert peak_mib - base_mib < bound, (peak_mib, base_mib)


def test_catalogue_present():
    if not BADWARC.exists():
        pytest.skip(f"{BADWARC} is absent: the damaged-crawl catalogue lives beside the repository")
    assert len(CATALOGUE) == 25 and REAL.exists()
