"""The ledger's reasons are a closed vocabulary: every reason the extractor gives on real and
damaged crawl files is documented in webwinnow.crawl.reasons (and the README), with its outcome."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from webwinnow.config import ExtractConfig
from webwinnow.crawl.inputs import is_crawl_file
from webwinnow.crawl.reasons import REASONS, is_known, outcome
from webwinnow.crawl.records import FLAG_REASONS, file_rows

from paths import MALFORMED, REAL, REPO, need


def _ledger(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(need(folder).iterdir()):
        if path.is_file() and is_crawl_file(path.name):
            rows += [r for r in file_rows(str(path), ExtractConfig()) if r["table"] == "ledger"]
    return rows


@pytest.mark.parametrize("folder", [REAL, MALFORMED], ids=["real", "malformed"])
def test_every_reason_on_real_crawls_is_in_the_vocabulary(folder):
    rows = _ledger(folder)
    assert rows
    for r in rows:
        if r["reason"] is None:
            assert r["kind"] == "file" and r["status"] == "read_ok"
            continue
        assert is_known(r["reason"]), r
        if r["kind"] == "record":
            assert outcome(r["reason"]) == r["status"], r
        else:
            assert outcome(r["reason"]) == "file", r


def test_a_cdx_listing_stored_as_a_response_has_no_http_status():
    # A Wayback CDX listing's timestamps once became 200+ distinct "http_status_2009..." reasons.
    rows = [r for r in _ledger(MALFORMED) if "topic-1" in r["file"]]
    reasons = {r["reason"] for r in rows}
    assert len(reasons) < 10, reasons
    assert not any(re.fullmatch(r"http_status_\d{4,}", x or "") for x in reasons)
    assert "non_http_response" in reasons


def test_vocabulary_is_consistent_and_documented():
    assert FLAG_REASONS == {r for r, (o, _) in REASONS.items() if o == "flagged"}
    assert is_known("http_status_404") and not is_known("http_status_200") and not is_known("http_status_20110125")
    readme = (REPO / "README.md").read_text()
    # the README's table is the vocabulary, outcome by outcome, in order
    table = dict(re.findall(r"^\| (skipped|failed|flagged|file rows) \| (.+) \|$", readme, re.M))
    assert sorted(table) == ["failed", "file rows", "flagged", "skipped"]
    for row, cell in table.items():
        kind = "file" if row == "file rows" else row
        assert re.findall(r"(?:^|, )`([a-zA-Z_]+)`", cell) == [r for r, (o, _) in REASONS.items() if o == kind], row
    # every reason string the extractor can emit is in the vocabulary
    source = "".join(
        (REPO / "lib" / "webwinnow" / "crawl" / name).read_text()
        for name in ("framing.py", "records.py", "httpbody.py", "items.py")
    )
    emitted = (
        set(re.findall(r'(?:error|reason)\s*=\s*"([a-z_]+)"', source))
        | set(re.findall(r'_DecodeFailed\("([a-z_]+)"\)', source))
        | set(re.findall(r'"reason": "([a-z_]+)"', source))
        | {m[1] for m in re.findall(r'status, reason = \(?"([a-z_]+)", "([a-z_]+)"', source)}
    )
    emitted -= {"failed", "empty"}  # file statuses caught by the first pattern in "status, reason = ..."
    assert emitted and emitted <= set(REASONS), emitted - set(REASONS)
