"""Record framing on small synthetic files: damage is reported once, nothing is read twice or lost."""

from __future__ import annotations

import gzip
import io

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from webwinnow.crawl.framing import iter_file


def _record(i: int, gz: bool = False, length_delta: int = 0) -> bytes:
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=gz)
    headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    writer.write_record(
        writer.create_warc_record(
            f"http://x.test/{i}", "response", payload=io.BytesIO(f"<p>page {i}</p>".encode()), http_headers=headers
        )
    )
    data = buf.getvalue()
    if length_delta:
        head, _, rest = data.partition(b"Content-Length: ")
        n, _, tail = rest.partition(b"\r\n")
        data = head + b"Content-Length: " + str(int(n) + length_delta).encode() + b"\r\n" + tail
    return data


def _read(tmp_path, data: bytes, name: str = "x.warc"):
    path = tmp_path / name
    path.write_bytes(data)
    return [(r.url, r.error, r.offset) for r in iter_file(str(path), max_body=1 << 20, max_member=1 << 30)]


def test_junk_between_and_after_records_is_one_row_each(tmp_path):
    parts = [_record(1), _record(2), _record(3), b"GARBAGE LINE\r\nmore junk\r\n\r\n", _record(4), _record(5), b"tail junk\r\n"]
    got = _read(tmp_path, b"".join(parts))
    offsets = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    assert got == [
        ("http://x.test/1", None, offsets[0]),
        ("http://x.test/2", None, offsets[1]),
        ("http://x.test/3", None, offsets[2]),
        (None, "not_a_warc_record", offsets[3]),
        ("http://x.test/4", None, offsets[4]),
        ("http://x.test/5", None, offsets[5]),
        (None, "not_a_warc_record", offsets[6]),
    ]


@pytest.mark.parametrize("delta", [40, -5])
def test_wrong_content_length_fails_one_record_and_resyncs(tmp_path, delta):
    parts = [_record(1), _record(2, length_delta=delta), _record(3), _record(4)]
    got = _read(tmp_path, b"".join(parts))
    assert [u for u, _, _ in got] == ["http://x.test/1", "http://x.test/2", "http://x.test/3", "http://x.test/4"]
    assert [e for _, e, _ in got] == [None, "content_length_mismatch", None, None]


def test_whole_file_gzip_is_read_like_a_plain_file(tmp_path):
    plain = _record(1) + _record(2, length_delta=40) + _record(3)
    got = _read(tmp_path, gzip.compress(plain, mtime=0), "x.warc.gz")
    assert [(u, e) for u, e, _ in got] == [
        ("http://x.test/1", None),
        ("http://x.test/2", "content_length_mismatch"),
        ("http://x.test/3", None),
    ]
    assert {o for _, _, o in got} == {0}  # one member: its records share the member's offset


def test_corrupt_and_truncated_members_cost_only_their_records(tmp_path):
    members = [_record(i, gz=True) for i in range(1, 5)]
    broken = bytearray(members[1])
    broken[len(broken) // 2] ^= 0xFF  # corrupt deflate data in the middle member
    data = members[0] + bytes(broken) + members[2] + members[3][: len(members[3]) - 10]
    got = _read(tmp_path, data, "x.warc.gz")
    starts = [0, len(members[0]), len(members[0]) + len(broken), len(members[0]) + len(broken) + len(members[2])]
    assert [(error, at) for _, error, at in got] == [
        (None, starts[0]),
        ("gzip_data_error", starts[1]),
        (None, starts[2]),
        ("truncated_gzip_member", starts[3]),
    ]
    # what decoded before the damage is replayed, so the damaged record is named when its header
    # came before the damaged byte (the writer's random ids and dates move that byte)
    assert [url for url, _, _ in got] == ["http://x.test/1", got[1][0], "http://x.test/3", "http://x.test/4"]
    assert got[1][0] in (None, "http://x.test/2")


def test_empty_file_has_no_records(tmp_path):
    assert _read(tmp_path, b"", "e.warc.gz") == []


def _big_record(i: int, size: int) -> bytes:
    """A gzipped response whose payload (random bytes, which deflate cannot shrink) is `size` long."""
    import random

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    headers = StatusAndHeaders("200 OK", [("Content-Type", "application/octet-stream")], protocol="HTTP/1.1")
    payload = random.Random(i).randbytes(size)
    writer.write_record(
        writer.create_warc_record(f"http://x.test/big{i}", "response", payload=io.BytesIO(payload), http_headers=headers)
    )
    return buf.getvalue()


def _records(path, **limits):
    return [
        {name: getattr(r, name) for name in r.__dataclass_fields__}
        for r in iter_file(str(path), max_body=limits.get("max_body", 1 << 24), max_member=limits.get("max_member", 1 << 30))
    ]


@pytest.mark.parametrize("limits", [{}, {"max_member": 300_000}, {"max_body": 1000}])
def test_members_read_from_memory_are_the_spools_records_byte_for_byte(tmp_path, monkeypatch, limits):
    """The common member is inflated from a read-ahead block of the file; every other member (past
    the block's end, damaged, cut short, too large) is read again through the spool. Both ways
    give the same records, offsets, bodies and errors, across members larger than the block."""
    from webwinnow.crawl import framing

    monkeypatch.setattr(framing, "_AHEAD", 64 << 10)  # members of 200 KB and 1.5 MB span several blocks
    members = [_record(1, gz=True), _big_record(2, 200_000), _record(3, gz=True), _big_record(4, 1_500_000), _record(5, gz=True)]
    broken = bytearray(_record(6, gz=True))
    broken[len(broken) // 2] ^= 0xFF
    data = b"".join(members) + b"junk between members" + bytes(broken) + _record(7, gz=True) + _record(8, gz=True)[:-12]
    path = tmp_path / "x.warc.gz"
    path.write_bytes(data)
    fast = _records(path, **limits)
    monkeypatch.setattr(framing, "_inflate_whole", lambda *args: None)  # every member through the spool
    assert fast == _records(path, **limits)
    too_large = "member_size_limit" if limits.get("max_member") else None  # the 1.5 MB member, not the 200 KB one
    assert [r["error"] for r in fast][:6] == [None, None, None, too_large, None, "not_gzip_member"]
    assert fast[1]["body_oversized"] == ("max_body" in limits) and fast[1]["url"] == "http://x.test/big2"
    assert fast[0]["offset"] == 0 and fast[1]["offset"] == len(members[0])
