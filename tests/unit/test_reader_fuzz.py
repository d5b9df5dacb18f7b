"""A seeded mutation fuzz of real crawl files, against a ground truth taken with warcio member by
member: flipped bytes in compressed streams and in headers, truncations, deleted and duplicated
members, leading and trailing junk, Content-Length off by 1..1000, files gzipped as one block.

For every mutated file: no crash, the file once in the ledger, counts that reconcile, every
record the mutation did not touch recovered with its original text, and no ok document that is
not an original page unless it carries a flag."""

from __future__ import annotations

import gzip
import io
import random
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from webwinnow.config import ExtractConfig
from webwinnow.crawl.records import file_rows

from paths import REAL, need

CFG = ExtractConfig()
FILES = [
    "dolma__sample-0000.warc.gz",
    "warcat__at.warc.gz",
    "webarchive-commons__IAH-urls-wget.warc.gz",
    "node-warc__parseMe.warc.gz",
    "aut__issue-493.warc",
    "aut__issue-514.warc",
    "jwat__small_BNF.arc",
]
TRIALS = 8  # per file and mutation kind


@dataclass(frozen=True)
class Span:
    start: int  # byte range of a member (gzipped files) or a record (plain files)
    end: int


def members(data: bytes) -> list[Span]:
    """The gzip members of data, found with zlib (independently of the reader under test)."""
    spans, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[pos:])
        end = len(data) - len(d.unused_data)
        spans.append(Span(pos, end))
        pos = end
    return spans


def records(data: bytes) -> list[Span]:
    """Record ranges of a plain file, by warcio."""
    it = ArchiveIterator(io.BytesIO(data), arc2warc=True)
    starts = []
    for _ in it:
        starts.append(it.get_record_offset())
    return [Span(a, b) for a, b in zip(starts, [*starts[1:], len(data)])]


def _ok(path: Path) -> tuple[Counter, list[dict]]:
    rows = list(file_rows(str(path), CFG))
    files = [r for r in rows if r.get("kind") == "file"]
    assert len(files) == 1
    f = files[0]
    assert f["parsed"] + f["skipped"] + f["failed"] + f["flagged"] == f["records_seen"]
    assert sum(r.get("kind") == "record" for r in rows) == f["records_seen"] - f["parsed"]
    docs = [r for r in rows if r["table"] == "documents" and r["status"] == "ok"]
    assert len(docs) == f["parsed"]
    return Counter((d["url"], d["text"]) for d in docs), docs


def _content_length(block: bytes, delta: int) -> bytes | None:
    m = re.search(rb"(?im)^content-length: *(\d+)\r?$", block[:4096])
    if m is None:
        return None
    value = max(0, int(m.group(1)) + delta)
    return block[: m.start(1)] + str(value).encode() + block[m.end(1) :]


def _mutations(data: bytes, gz: bool, rng: random.Random):
    """(kind, mutated bytes, spans left intact) triples."""
    spans = members(data) if gz else records(data)
    n = len(spans)

    def others(i: int) -> list[Span]:
        return [s for j, s in enumerate(spans) if j != i]

    for _ in range(TRIALS):
        i = rng.randrange(n)
        s = spans[i]
        if gz:
            at = rng.randrange(s.start + 10, max(s.start + 11, s.end - 8))
            b = bytearray(data)
            b[at] ^= 1 << rng.randrange(8)
            yield "flip_compressed", bytes(b), others(i)
            yield (
                "delete_member",
                data[: s.start] + data[s.end :],
                [
                    Span(x.start - (s.end - s.start) * (x.start > s.start), x.end - (s.end - s.start) * (x.start > s.start))
                    for x in others(i)
                ],
            )
            size = s.end - s.start
            yield (
                "duplicate_member",
                data[: s.end] + data[s.start : s.end] + data[s.end :],
                [x if x.start < s.end else Span(x.start + size, x.end + size) for x in spans],
            )
            inner = zlib.decompress(data[s.start : s.end], 31)
        else:
            inner = data[s.start : s.end]
        head_end = inner.find(b"\r\n\r\n") if inner.startswith(b"WARC/") else inner.find(b"\n")
        hb = bytearray(inner)
        if head_end > 10:
            hb[rng.randrange(0, head_end)] ^= 1 << rng.randrange(8)
        cl = _content_length(inner, rng.choice([-1000, -37, -3, -2, -1, 1, 2, 3, 41, 1000]))
        for kind, new_inner in (("flip_header", bytes(hb)), ("content_length", cl)):
            if new_inner is None:
                continue
            new = gzip.compress(new_inner) if gz else new_inner
            shifted = len(new) - (s.end - s.start)
            intact = [Span(x.start + shifted * (x.start > s.start), x.end + shifted * (x.start > s.start)) for x in others(i)]
            yield kind, data[: s.start] + new + data[s.end :], intact
        cut = rng.randrange(1, len(data))
        yield "truncate", data[:cut], [x for x in spans if x.end <= cut]
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        yield "leading_junk", junk + data, [Span(x.start + len(junk), x.end + len(junk)) for x in spans]
        yield "trailing_junk", data + junk, spans


def _fuzz_one(name: str, tmp_path: Path, seed: int, one_block: bool = False) -> Counter:
    """With one_block, the file's records are mutated uncompressed and the result gzipped as one
    block (its CRC then holds, so only the framing checks stand between damage and an ok page)."""
    src = need(REAL) / name
    data = src.read_bytes()
    suffix = "".join(src.suffixes)
    if one_block:
        data, suffix = gzip.decompress(data), ".warc"
        src = _write(tmp_path / f"plain{suffix}", data)
    gz = data[:2] == b"\x1f\x8b"
    clean, clean_docs = _ok(src)
    texts = {text for _, text in clean}
    by_span: dict[Span, Counter] = {}
    spans = members(data) if gz else records(data)
    for d in clean_docs:
        span = next(s for s in spans if s.start <= d["offset"] < s.end)
        by_span.setdefault(span, Counter())[(d["url"], d["text"])] += 1
    kinds: Counter = Counter()
    rng = random.Random(f"{seed}:{name}")
    for n, (kind, mutated, intact) in enumerate(_mutations(data, gz, rng)):
        if one_block:
            path = _write(tmp_path / f"m{n}.warc.gz", gzip.compress(mutated))
        else:
            path = _write(tmp_path / f"m{n}{suffix}", mutated)
        got, docs = _ok(path)
        kinds[kind] += 1
        # every ok page of an untouched member or record is recovered with its original text
        want: Counter = Counter()
        for span in intact:
            # spans are located by content: the intact bytes are identical in the mutated file
            original = next((s for s in spans if data[s.start : s.end] == mutated[span.start : span.end]), None)
            if original is not None:
                want += by_span.get(original, Counter())
        missing = want - got
        assert not missing, (name, n, kind, list(missing)[:2])
        kinds["intact pages"] += sum(want.values())
        # nothing that is not an original page passes as ok without a flag (a flipped header byte
        # may change a URL, never a page's text)
        for d in docs:
            assert d["text"] in texts or d["flags"], (name, n, kind, d["url"])
    return kinds


@pytest.mark.parametrize("name", FILES)
def test_mutated_real_files(name, tmp_path):
    kinds = _fuzz_one(name, tmp_path, seed=2026)
    assert kinds["truncate"] == TRIALS and kinds["leading_junk"] == TRIALS
    print(name, dict(kinds))


ONE_BLOCK = ["dolma__sample-0000.warc.gz", "warcat__at.warc.gz", "webarchive-discovery__transfer_compression_brotli.warc.gz"]


def _suspect_ok(d: dict, clean: Counter) -> bool:
    """A page decoded from a member whose CRC failed is ok only when its payload digest verified
    it: its text is an original's, and the flag says its headers (its URL) are unverified."""
    if (d["url"], d["text"]) in clean:
        return True
    return "headers_unverified" in (d["flags"] or "") and any(text == d["text"] for _, text in clean)


@pytest.mark.parametrize("name", ONE_BLOCK)
def test_mutated_files_gzipped_as_one_block(name, tmp_path):
    kinds = _fuzz_one(name, tmp_path, seed=2026, one_block=True)
    assert kinds["content_length"] == TRIALS and kinds["flip_header"] == TRIALS
    print(name, dict(kinds))


@pytest.mark.parametrize("name", ONE_BLOCK)
def test_files_gzipped_as_one_block_damaged(name, tmp_path):
    data = gzip.decompress((need(REAL) / name).read_bytes())
    clean, clean_docs = _ok(_write(tmp_path / "plain.warc", data))
    block = gzip.compress(data)
    spans = records(data)
    rng = random.Random(f"oneblock:{name}")
    for n in range(20):
        b = bytearray(block)
        b[rng.randrange(10, len(b) - 1)] ^= 1 << rng.randrange(8)
        got, docs = _ok(_write(tmp_path / f"flip{n}.warc.gz", bytes(b)))
        for d in docs:  # decoded before zlib noticed, so suspect: ok only when the digest verifies
            assert _suspect_ok(d, clean), (n, d["url"], d["flags"])
        cut = rng.randrange(20, len(block))
        got, docs = _ok(_write(tmp_path / f"cut{n}.warc.gz", block[:cut]))
        decoded = len(zlib.decompressobj(31).decompress(block[:cut]))
        complete = [s for s in spans if s.end <= decoded]
        want: Counter = Counter()
        for d in clean_docs:
            if any(s.start <= d["offset"] < s.end for s in complete):
                want[(d["url"], d["text"])] += 1
        assert not (want - got), (n, cut)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", ONE_BLOCK)
def test_a_crc_failure_leaves_only_digest_verified_pages_flagged(name, tmp_path):
    """Found by fuzzing one-block files: a flipped bit that changes a WARC-Target-URI while the
    payload digest still verifies the body passed the page as ok under a URL it never had. With
    only the CRC broken every byte is intact, so this pins which pages survive and how."""
    data = gzip.decompress((need(REAL) / name).read_bytes())
    clean, _ = _ok(_write(tmp_path / "plain.warc", data))
    block = bytearray(gzip.compress(data))
    block[-6] ^= 0x10  # the CRC-32 in the trailer
    rows = list(file_rows(str(_write(tmp_path / "crc.warc.gz", bytes(block))), CFG))
    docs = [r for r in rows if r["table"] == "documents" and r["status"] == "ok"]
    failed = [r for r in rows if r.get("kind") == "record" and r.get("reason") == "gzip_data_error"]
    assert docs and failed
    for d in docs:
        assert d["flags"] == "headers_unverified" and (d["url"], d["text"]) in clean, d["url"]
    files = [r for r in rows if r.get("kind") == "file"]
    assert files[0]["parsed"] == len(docs) and files[0]["failed"] == len(failed)
