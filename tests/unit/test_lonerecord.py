"""The lone-record reader (webwinnow.crawl.lonerecord) against warcio's path (framing._iter_stream):
on every gzip member of the shared crawl files and on seeded mutations of real records, a member
it takes gives exactly the RawRecord warcio's path gives, field for field; it takes the common
member and leaves the odd ones to warcio."""

from __future__ import annotations

import io
import random
import zlib
from collections import Counter
from pathlib import Path

import pytest

from webwinnow.crawl import framing
from webwinnow.crawl.framing import RawRecord, iter_file
from webwinnow.crawl.lonerecord import lone_record

from paths import BADWARC, MALFORMED, REAL, need

BODY_CAPS = (1 << 30, 100)  # a body kept, and one flagged oversized


def gzip_members(path: Path, limit: int = framing._SPOOL_IN_MEMORY):
    """The inflated gzip members of a file that inflate whole, found with zlib alone; members
    larger than framing inflates in memory are left out (it never offers them)."""
    raw = path.read_bytes()
    if raw[:3] != framing.GZIP_MAGIC:
        return
    pos = 0
    while pos < len(raw):
        d = zlib.decompressobj(31)
        try:
            data = d.decompress(raw[pos : pos + (64 << 20)], limit + 1)
        except zlib.error:
            return
        if not d.eof or len(data) > limit:
            return
        yield data
        pos = pos + min(len(raw) - pos, 64 << 20) - len(d.unused_data)


def by_warcio(data: bytes, max_body: int) -> list[RawRecord]:
    return list(framing._iter_stream(io.BytesIO(data), len(data), max_body))


def by_lone(data: bytes, max_body: int) -> RawRecord | None:
    fields = lone_record(data, max_body)
    if fields is None:
        return None
    fields["http_status"] = framing._status(fields["http_status"])
    return RawRecord(offset=0, **fields)


def _shared_files() -> list[Path]:
    need(REAL)
    files = [*sorted(REAL.iterdir()), *sorted(MALFORMED.iterdir())]
    if (BADWARC / "files").is_dir():
        files += [p for p in sorted((BADWARC / "files").iterdir()) if "oversized" not in p.name and "bomb" not in p.name]
    return [p for p in files if p.is_file()]


def test_every_member_of_the_shared_crawl_files_is_read_as_warcio_reads_it():
    taken = Counter()
    for path in _shared_files():
        for data in gzip_members(path):
            for cap in BODY_CAPS:
                lone = by_lone(data, cap)
                taken[lone is not None] += 1
                if lone is not None:
                    assert by_warcio(data, cap) == [lone], f"{path.name}: a member read otherwise than by warcio"
    # the common member is taken (Common Crawl, Heritrix, warcio, jwat writers), the odd ones are not
    assert taken[True] > 3000 and taken[False] > 1000, taken


def _members_of(name: str) -> list[bytes]:
    return list(gzip_members(need(REAL / name)))


def _mutate(data: bytes, rng: random.Random) -> bytes:
    alphabet = b" \t\r\n:<>0123456789AZaz/.%\x00\x0b\x0c\x1f\x80\xc3\xa9\xff"
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        # most edits near the headers, where the reading could go wrong
        head = max(1, min(len(out), data.find(b"\r\n\r\n", data.find(b"\r\n\r\n") + 4) + 8))
        at = rng.randrange(head if rng.random() < 0.9 else len(out))
        kind = rng.random()
        if kind < 0.5:
            out[at] = rng.choice(alphabet)
        elif kind < 0.75:
            out.insert(at, rng.choice(alphabet))
        else:
            del out[at]
    if rng.random() < 0.3:  # an edit where header syntax has its corners
        old, new = rng.choice(EDITS)
        text = bytes(out)
        places = [i for i in range(len(text)) if text.startswith(old, i)][:40]
        if places:
            at = rng.choice(places)
            out = bytearray(text[:at] + new + text[at + len(old) :])
    return bytes(out)


EDITS = [
    (b": ", b" : "),
    (b": ", b"\t:\t"),
    (b": ", b":"),
    (b": ", b" "),
    (b"\r\n", b"\n"),
    (b"\r\n", b"\r\n "),
    (b"\r\n", b"\r\n\r\n"),
    (b"\r\n", b" \r\n"),
    (b"Content-Length: ", b"Content-Length: 1"),
    (b"Content-Length: ", b"content-length: 0"),
    (b" 200 ", b"  200 "),
    (b" 200 ", b" 2000 "),
    (b"HTTP/1.1 ", b"HTTP/1.1"),
    (b"WARC-Type: ", b"WARC-Type: x"),
    (b"WARC-Target-URI: ", b"WARC-Target-URI: <"),
    (b"WARC-Target-URI: http", b"WARC-Target-URI: ftp"),
]


def test_mutated_records_are_taken_only_when_warcio_reads_them_alike():
    rng = random.Random(29)
    seeds = [
        m
        for name in ("whirlwind-python__whirlwind.warc.gz", "warc2zim__main-entry-403.warc.gz", "ipwb__sample-1.warc.gz")
        for m in _members_of(name)[:12]
    ]
    outcome = Counter()
    for trial in range(3000):
        data = _mutate(rng.choice(seeds), rng)
        cap = rng.choice(BODY_CAPS)
        lone = by_lone(data, cap)
        outcome[lone is not None] += 1
        if lone is not None:
            assert by_warcio(data, cap) == [lone], f"trial {trial}: {data[:300]!r}"
    # both ways are exercised: many mutations leave a record warcio reads alike, many are refused
    assert outcome[True] > 500 and outcome[False] > 500, outcome


RESPONSE = (
    b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.test/\r\n"
    b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
    b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n"
)
HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>hello</body></html>"


def _response(http: bytes = HTTP, template: bytes = RESPONSE) -> bytes:
    return template % (len(http), http)


def test_a_plain_response_is_taken_with_its_fields():
    rec = by_lone(_response(), 1 << 20)
    assert rec is not None and rec == by_warcio(_response(), 1 << 20)[0]
    assert (rec.warc_type, rec.url, rec.http_status, rec.body) == ("response", "http://example.test/", 200, HTTP[-31:])
    assert rec.http_headers == [("Content-Type", "text/html")] and rec.end == len(_response())
    small = by_lone(_response(), 10)
    assert small is not None and small.body_oversized and small.body == b""


@pytest.mark.parametrize(
    "data",
    [
        _response(template=RESPONSE.replace(b"WARC/1.0", b"WARC/0.17")),  # an older version
        _response(template=RESPONSE.replace(b"http://example.test/", b"<http://example.test/>")),  # wget 1.19
        _response(template=RESPONSE.replace(b"http://example.test/", b"http://example.test/a b")),  # warcio rewrites it
        _response() + _response(),  # two records in one member
        _response() + b"\r\n",  # a separator that is not exactly CRLF CRLF
        _response(HTTP.replace(b"Content-Type: text/html\r\n", b"Content-Type: text/html\r\n  ; charset=x\r\n")),  # continued
        _response(HTTP.replace(b"text/html", "text/html; é".encode())),  # not ASCII
        _response(HTTP.replace(b"\r\n", b"\n")),  # LF line ends
        _response(template=RESPONSE.replace(b"Content-Length: %d", b"Content-Length: +%d")),
        _response(template=RESPONSE.replace(b"WARC-Type: response\r\n", b"")),
    ],
)
def test_odd_members_are_left_to_warcio(data: bytes):
    assert lone_record(data, 1 << 20) is None


def test_a_file_reads_the_same_records_with_and_without_the_lone_reader(monkeypatch):
    path = need(REAL / "whirlwind-python__whirlwind.warc.gz")
    fast = list(iter_file(str(path), max_body=1 << 24, max_member=1 << 26))
    monkeypatch.setattr(framing, "lone_record", lambda data, max_body: None)
    slow = list(iter_file(str(path), max_body=1 << 24, max_member=1 << 26))
    assert fast == slow and len(fast) == 4
