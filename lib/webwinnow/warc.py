"""Crawl-file framing: WARC and ARC records, one gzip member at a time, with their coordinates.

warcio parses each record, but never sees more than one gzip member: warcio (like FastWARC)
loses every record after one corrupt member and accepts a truncated member silently. Reading
members ourselves (zlib ``decompressobj``, ``eof``, ``unused_data``) lets a damaged member cost
only its own records, and names it. Uncompressed files are read as one stream; after a parse
error the reader resynchronizes at the next ``WARC/1.`` line.

Every record, damaged or not, comes out as a :class:`RawRecord`; a damage that hides records
comes out as a RawRecord with ``error`` set, so the caller can count it.
"""

from __future__ import annotations

import hashlib
import base64
import io
import re
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from warcio.archiveiterator import ArchiveIterator

GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16
_WARC_LINE = re.compile(rb"(?:^|\r?\n)(WARC/1\.[01]\r?\n)")


@dataclass
class RawRecord:
    """One record as stored, before HTTP decoding. ``error`` set means the record is damaged."""

    offset: int  # byte offset of the record (its gzip member, for compressed files)
    inner: int = 0  # offset inside the decompressed member (non-zero only for whole-file gzip)
    warc_type: str | None = None
    record_id: str | None = None
    url: str | None = None
    date: str | None = None
    content_length: int | None = None
    payload_digest: str | None = None
    http_status: int | None = None
    http_headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""  # the entity body as stored (possibly chunked and content-coded)
    body_oversized: bool = False  # body longer than the read cap: only a prefix was kept
    error: str | None = None  # machine-readable reason when the record is damaged
    detail: str | None = None  # a short human explanation (never page content)

    def header(self, name: str) -> str | None:
        lname = name.lower()
        for k, v in self.http_headers:
            if k.lower() == lname:
                return v
        return None

    def digest_ok(self) -> bool | None:
        """Whether WARC-Payload-Digest matches the stored body; None when it cannot be checked."""
        if not self.payload_digest or self.body_oversized or ":" not in self.payload_digest:
            return None
        algo, _, value = self.payload_digest.partition(":")
        if algo.lower() != "sha1":
            return None
        actual = hashlib.sha1(self.body).digest()
        value = value.strip()
        try:
            if len(value) == 32:
                return base64.b32decode(value.upper()) == actual
            if len(value) == 40:
                return bytes.fromhex(value) == actual
        except (ValueError, base64.binascii.Error):
            return None
        return None


class _MemberReader(io.RawIOBase):
    """The decompressed bytes of the gzip member at ``start``, as a stream; stops at member end."""

    def __init__(self, fh: BinaryIO, start: int, max_out: int):
        self._fh = fh
        self._fh.seek(start)
        self._d = zlib.decompressobj(31)
        self._pending = b""
        self._consumed = start  # file position just after the compressed bytes fed so far
        self._out = 0
        self._max_out = max_out
        self.end: int | None = None  # offset just after the member, once known
        self.error: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        want = len(buf)
        while not self._pending:
            if self._d.eof or self.error:
                return 0
            data = self._d.unconsumed_tail or self._read_compressed()
            if not data:
                self.error = "truncated_gzip_member"
                self.end = self._consumed
                return 0
            try:
                self._pending = self._d.decompress(data, _CHUNK)
            except zlib.error:
                self.error = "gzip_data_error"
                return 0
            if self._d.eof:
                self.end = self._consumed - len(self._d.unused_data)
            self._out += len(self._pending)
            if self._out > self._max_out:
                self.error = "member_size_limit"
                return 0
        n = min(want, len(self._pending))
        buf[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _read_compressed(self) -> bytes:
        data = self._fh.read(_CHUNK)
        self._consumed += len(data)
        return data


def _find(fh: BinaryIO, start: int, needle_re: re.Pattern | None, magic: bytes | None) -> int | None:
    """The first offset >= start where magic (or needle_re's group 1) occurs, scanning in blocks."""
    pos = start
    tail = b""
    while True:
        fh.seek(pos)
        block = fh.read(1 << 20)
        if not block:
            return None
        hay = tail + block
        base = pos - len(tail)
        if magic is not None:
            i = hay.find(magic)
            if i >= 0 and base + i >= start:
                return base + i
        else:
            m = needle_re.search(hay)
            if m and base + m.start(1) >= start:
                return base + m.start(1)
        tail = hay[-16:]
        pos += len(block)


class _QuietIterator(ArchiveIterator):
    # warcio prints the bytes that follow a record with a wrong Content-Length to stderr: that
    # is page content, which logs must never hold. The event is still counted (err_count).
    INC_RECORD = ""


def _records(stream: BinaryIO, base: int, gz: bool, max_body: int) -> Iterator[RawRecord]:
    """Records warcio finds in ``stream`` (one member, or a plain file positioned at ``base``)."""
    it = _QuietIterator(stream, arc2warc=True, ensure_http_headers=False)
    for rec in it:
        # it.offset is where this record started; get_record_offset() would read it to the end.
        offset = it.offset
        out = RawRecord(offset=base if gz else offset, inner=offset if gz else 0)
        h = rec.rec_headers
        out.warc_type = rec.rec_type
        out.record_id = h.get_header("WARC-Record-ID")
        out.url = h.get_header("WARC-Target-URI")
        out.date = h.get_header("WARC-Date")
        out.payload_digest = h.get_header("WARC-Payload-Digest")
        cl = h.get_header("Content-Length")
        try:
            out.content_length = int(cl) if cl is not None else None
        except ValueError:
            out.content_length = None
        if rec.http_headers is not None:
            out.http_status = _status(rec.http_headers.get_statuscode())
            out.http_headers = list(rec.http_headers.headers)
        body = rec.raw_stream.read(max_body + 1)
        if len(body) > max_body:
            out.body_oversized = True
            body = body[:max_body]
        out.body = body
        # warcio's LimitReader counts down what Content-Length promised; anything left when the
        # stream is exhausted means the record was cut short.
        if not out.body_oversized and getattr(rec.raw_stream, "limit", 0) > 0:
            if not rec.raw_stream.read(1):
                out.error = "record_truncated_eof"
        # Consume the record's end now, so a Content-Length that does not end where the record
        # does is charged to this record, not noticed one record later.
        errors = it.err_count
        it.read_to_end()
        if it.err_count > errors and out.error is None:
            out.error = "content_length_mismatch"
        yield out


def _status(code) -> int | None:
    try:
        return int(code)
    except (TypeError, ValueError):
        return None


def iter_file(path: str, *, max_body: int, max_member: int) -> Iterator[RawRecord]:
    """Every record of a crawl file, damaged ones included (``error`` set), in file order.

    Raises OSError only when the file cannot be opened; everything else becomes records.
    """
    with open(path, "rb") as fh:
        head = fh.read(3)
        if not head:
            return
        if head == GZIP_MAGIC:
            yield from _iter_gzip(fh, max_body, max_member)
        else:
            yield from _iter_plain(fh, max_body)


def _iter_gzip(fh: BinaryIO, max_body: int, max_member: int) -> Iterator[RawRecord]:
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    pos = 0
    while pos < size:
        fh.seek(pos)
        if fh.read(3) != GZIP_MAGIC:
            nxt = _find(fh, pos, None, GZIP_MAGIC)
            yield RawRecord(offset=pos, error="not_gzip_member", detail=f"{(nxt or size) - pos} bytes between members")
            if nxt is None:
                return
            pos = nxt
            continue
        reader = _MemberReader(fh, pos, max_member)
        stream = io.BufferedReader(reader, _CHUNK)
        seen = 0
        try:
            for rec in _records(stream, pos, True, max_body):
                seen += 1
                if reader.error and rec.error is None:
                    rec.error = reader.error
                yield rec
        except Exception as exc:  # warcio's parse errors have no common base class
            if not reader.error:
                yield RawRecord(offset=pos, error="not_a_warc_record", detail=type(exc).__name__)
        if reader.error:
            if reader.error != "truncated_gzip_member" or seen == 0:
                yield RawRecord(offset=pos, error=reader.error, detail=f"{seen} records read from the member")
            if reader.end is None or reader.error in ("gzip_data_error", "member_size_limit"):
                # Resynchronize: the next member starts at the next gzip magic after this one.
                nxt = _find(fh, pos + 1, None, GZIP_MAGIC)
                if nxt is None:
                    return
                pos = nxt
                continue
        if reader.end is None:  # warcio stopped before the member's end: drain it to find it
            while reader.end is None and not reader.error:
                if not stream.read(_CHUNK):
                    break
            if reader.end is None:
                return
        pos = reader.end


def _iter_plain(fh: BinaryIO, max_body: int) -> Iterator[RawRecord]:
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    base = 0
    while base < size:
        fh.seek(base)
        last = None
        try:
            for rec in _records(fh, base, False, max_body):
                last = rec.offset
                yield rec
            return
        except Exception as exc:  # warcio's parse errors have no common base class
            where = base if last is None else last
            nxt = _find(fh, where + 1, _WARC_LINE, None)
            yield RawRecord(
                offset=where,
                error="not_a_warc_record",
                detail=f"{type(exc).__name__}; resynchronized at {nxt}" if nxt else type(exc).__name__,
            )
            if nxt is None:
                return
            base = nxt
