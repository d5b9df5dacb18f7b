"""Crawl-file framing: WARC and ARC records, one gzip member at a time, with their coordinates.

warcio parses each record, but never sees more than one gzip member: warcio (like FastWARC)
loses every record after one corrupt member and accepts a truncated member silently. Reading
members ourselves (zlib ``decompressobj``, ``eof``, ``unused_data``) lets a damaged member cost
only its own records, and names it. Each member is decompressed into a spool file (memory for
small members, disk past a few MiB), so a member holding many records (a whole file gzipped as
one block) is read like an uncompressed file: with a check of every Content-Length against the
bytes actually there, and resynchronization at the next record header after damage.

Every record, damaged or not, comes out as a :class:`RawRecord`; damage that hides records comes
out as a RawRecord with ``error`` set, so the caller can count it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import logging
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator
from zlib_ng import zlib_ng

from .. import storage
from .lonerecord import lone_record

# zlib-ng inflates the members 1.7-1.8 times as fast as the stdlib's zlib (the docs corpus's
# crawl files: 1.0 -> 0.57 CPU-s), with zlib's API and its behaviour on damaged data (what
# decodes before the damage, the errors), which the member reader relies on. Typed Any: its
# stubs leave out Decompress.copy and type its error as an instance, both as zlib's at run time.
zlib: Any = zlib_ng

# warcio logs invalid target URIs with the URI itself, which after damage is page text: logs and
# the ledger must never hold page content. Our own checks say what was wrong.
logging.getLogger("warcio").setLevel(logging.CRITICAL)

GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16
_SPOOL_IN_MEMORY = 8 << 20
# Where a record can start again after damage: a WARC version line, or an ARC v1 header line
# (URL, IP, 14-digit date, MIME type, length).
# A WARC version line may follow junk on the same line (a crawler that restarted mid-write); an
# ARC header must start a line. Every candidate is confirmed by parsing.
# url ip date mime [v2: status checksum location offset filename] length; the URL has a scheme
# (http://..., dns:host, filedesc://...)
_ARC_LINE = rb"[A-Za-z][A-Za-z0-9+.\-]{0,15}:\S+ \S+ \d{14} \S+ (?:\S+ ){0,5}\d+\r?\n"
_RECORD_START = re.compile(rb"(WARC/[01]\.\d+\r?\n)|\n(" + _ARC_LINE + rb")")
_HEADER_LINE = re.compile(rb"WARC/[01]\.\d+\r?\n|" + _ARC_LINE)
#: What must follow a record's block: CRLF CRLF after a WARC record, one LF after an ARC record.
_WARC_SEPARATOR = b"\r\n\r\n"
_ARC_SEPARATORS = (b"\n", b"\r\n", b"")
#: Errors after which the rest of a stream cannot be trusted to be where the framing says.
RESYNC_ERRORS = frozenset({"content_length_mismatch", "missing_content_length", "invalid_content_length", "not_a_warc_record"})


@dataclass
class RawRecord:
    """One record as stored, before HTTP decoding. ``error`` set means the record is damaged."""

    offset: int  # byte offset of the record (of its gzip member, for compressed files)
    inner: int = 0  # offset inside the decompressed member (non-zero only for multi-record members)
    warc_type: str | None = None
    record_id: str | None = None
    url: str | None = None
    date: str | None = None
    warc_content_type: str | None = None
    content_length: int | None = None
    payload_digest: str | None = None
    http_status: int | None = None
    http_headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""  # the entity body as stored (possibly chunked and content-coded)
    body_oversized: bool = False  # body longer than the read cap: not kept (body is empty)
    error: str | None = None  # machine-readable reason when the record is damaged
    detail: str | None = None  # a short human explanation (never page content)
    flags: tuple[str, ...] = ()  # intact but odd (content_length_slip: see _records)
    arc: bool = False  # an ARC record (warcio converts it; its record id is not the file's)
    end: int | None = None  # offset just after the record and its separator, in the same stream

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
        algo, value = algo.strip().lower(), value.strip()
        if algo not in ("sha1", "sha256"):
            return None
        actual = hashlib.new(algo, self.body).digest()
        try:
            if len(value) * 5 == len(actual) * 8:  # base32, as WARC writers use
                return base64.b32decode(value.upper()) == actual
            if len(value) == 2 * len(actual):
                return bytes.fromhex(value) == actual
        except (ValueError, binascii.Error):
            return None
        return None


class _QuietIterator(ArchiveIterator):
    # warcio prints the bytes that follow a record with a wrong Content-Length to stderr: that
    # is page content, which logs must never hold. The event is still counted (err_count).
    INC_RECORD = ""
    separator = b""  # what _consume_blanklines took as the separator after the last record

    def _consume_blanklines(self):
        # warcio's own logic, keeping the bytes it consumed so the separator can be checked
        # exactly: a blank line after the block followed by text means the Content-Length was
        # short, which warcio accepts.
        taken: list[bytes] = []
        while True:
            line = self.reader.readline()
            if len(line) == 0:
                self.separator = b"".join(taken)
                return None, len(self.separator)
            if not line.rstrip() or not taken:
                if line.rstrip():
                    self.err_count += 1
                taken.append(line)
                continue
            self.separator = b"".join(taken)
            return line, len(self.separator)


class _JunkAfterRecord(Exception):
    """Bytes that are not a record follow an intact record and its exact separator."""


def _status(code) -> int | None:
    """The HTTP status of a status line's code, None unless it is three digits 100–599 (a record
    whose body is not an HTTP message, such as a stored CDX listing, has no status)."""
    code = (code or "").strip() if isinstance(code, str) else code
    if not isinstance(code, str) or len(code) != 3 or not code.isdigit() or not 100 <= int(code) <= 599:
        return None
    return int(code)


def _read_capped(stream, cap: int) -> tuple[bytes, bool]:
    """The stream's bytes, or (b"", True) once they pass cap: an oversized body is flagged, never
    parsed, so none of it is kept (peak memory: cap, not the record's size)."""
    parts: list[bytes] = []
    total = 0
    while True:
        part = stream.read(_CHUNK)
        if not part:
            return b"".join(parts), False
        total += len(part)
        if total > cap:
            return b"", True
        parts.append(part)


def _records(stream: IO[bytes], max_body: int) -> Iterator[tuple[int, int, RawRecord]]:
    """(start, end, record) for the records warcio finds in a seekable plain stream.

    Stops after the first record whose framing is wrong (RESYNC_ERRORS): what follows it is not
    where the framing says, and the caller resynchronizes.
    """
    it = _QuietIterator(stream, arc2warc=True, ensure_http_headers=False)
    for rec in it:
        # it.offset is where this record started; get_record_offset() would read it to the end.
        offset = it.offset
        out = RawRecord(offset=offset)
        h = rec.rec_headers
        out.warc_type = rec.rec_type
        out.record_id = h.get_header("WARC-Record-ID")
        out.url = h.get_header("WARC-Target-URI")
        out.date = h.get_header("WARC-Date")
        out.warc_content_type = h.get_header("Content-Type")
        out.payload_digest = h.get_header("WARC-Payload-Digest")
        declared = h.get_header("Content-Length")
        if declared is None:
            out.error = "missing_content_length"
        elif not declared.strip().isdigit():
            out.error = "invalid_content_length"
        else:
            out.content_length = int(declared)
        if out.error:
            yield offset, offset, out
            return
        if rec.http_headers is not None:
            out.http_status = _status(rec.http_headers.get_statuscode())
            out.http_headers = list(rec.http_headers.headers)
        out.body, out.body_oversized = _read_capped(rec.raw_stream, max_body)
        # warcio's LimitReader counts down what Content-Length promised; anything left when the
        # stream is exhausted means the record was cut short.
        if not out.body_oversized and getattr(rec.raw_stream, "limit", 0) > 0 and not rec.raw_stream.read(1):
            out.error = "record_truncated_eof"
        # Consume the record's end now, so a Content-Length that does not end where the record
        # does is charged to this record, not noticed one record later.
        errors = it.err_count
        it.read_to_end()
        out.arc = _starts_arc(stream, offset)
        exact = it.separator in _ARC_SEPARATORS if out.arc else it.separator == _WARC_SEPARATOR
        following = it.next_line
        junk = following is not None and not _HEADER_LINE.match(following)
        if out.error is None:
            if it.err_count > errors or (junk and not exact):
                # the block does not end where Content-Length says: text where the separator
                # should be (too long), or a blank line and then text (too short at a line end)
                out.error = "content_length_mismatch"
            elif not exact:
                # only whitespace differs: the block is off by a few separator bytes (a
                # Content-Length slip of 1-3 bytes); the record is kept, flagged
                out.flags = ("content_length_slip",)
        out.end = it.offset
        yield offset, it.offset, out
        if out.error in RESYNC_ERRORS:
            return
        if junk:
            raise _JunkAfterRecord()


def _starts_arc(stream: IO[bytes], offset: int) -> bool:
    """Whether the record at offset is an ARC record (warcio reports converted ARC records as WARC)."""
    here = stream.tell()
    try:
        stream.seek(offset)
        return not stream.read(5).startswith(b"WARC/")
    finally:
        stream.seek(here)


def _search(fh: IO[bytes], start: int, pattern: re.Pattern[bytes], lead: bytes = b"") -> int | None:
    """The offset of the first match of pattern at or after start, reading 1 MiB blocks; a match
    may span two blocks. lead: bytes taken to stand just before start (for patterns that look
    back one byte)."""
    tail, pos = lead, start
    while True:
        fh.seek(pos)
        block = fh.read(1 << 20)
        if not block:
            return None
        hay = tail + block
        base = pos - len(tail)
        for m in pattern.finditer(hay):
            at = base + m.start(m.lastindex or 0)
            if at >= start:
                return at
        tail = hay[-512:]
        pos += len(block)


def _find_record_start(fh: IO[bytes], start: int) -> int | None:
    """The offset of the first record header at or after start."""
    # An ARC header must start a line: search with the byte before start in front (a virtual
    # newline at the start of the stream), so a match in the middle of a line is never taken.
    if start > 0:
        fh.seek(start - 1)
        lead = fh.read(1)
    else:
        lead = b"\n"
    return _search(fh, start, _RECORD_START, lead)


_MAGIC = re.compile(re.escape(GZIP_MAGIC))


def _find_magic(fh: IO[bytes], start: int) -> int | None:
    return _search(fh, start, _MAGIC)


def _iter_stream(fh: IO[bytes], size: int, max_body: int) -> Iterator[RawRecord]:
    """Records of a plain (uncompressed) seekable stream; offsets relative to its start.

    After damage the stream is searched for the next record header: from just after a record
    whose framing is wrong (a Content-Length that is too long swallowed the next header, one too
    short left part of the body where a header should be), or from the end of the last good
    record when warcio cannot parse what follows it. Each damaged span is reported once, and no
    record is read twice.
    """
    base = 0
    while base < size:
        fh.seek(base)
        head = fh.read(4096)
        if not head.strip(b"\r\n\t "):
            return  # only blank bytes left
        if not _HEADER_LINE.match(head.lstrip(b"\r\n\t ")):
            # not a record header: never let warcio read junk as an (ARC) header line
            nxt = _find_record_start(fh, base)
            end = nxt if nxt is not None else size
            yield RawRecord(
                offset=base, error="not_a_warc_record", detail=f"no record header; {end - base} bytes skipped", end=end
            )
            if nxt is None:
                return
            base = nxt
            continue
        fh.seek(base)
        last_end = None  # end of the last intact record read from base
        try:
            for start, end, rec in _records(fh, max_body):
                yield rec
                if rec.error in RESYNC_ERRORS:
                    nxt = _find_record_start(fh, start + 1)
                    break
                last_end = end
            else:
                return
        except Exception as exc:  # warcio's parse errors have no common base class
            bad = base if last_end is None else last_end
            nxt = _find_record_start(fh, bad)
            if nxt == bad and last_end is not None:
                # a header where the failure began: read it afresh; if it fails again right
                # away, it is reported then (bad == base, below)
                base = nxt
                continue
            if nxt == bad:
                nxt = _find_record_start(fh, bad + 1)
            span = (nxt if nxt is not None else size) - bad
            what = "bytes that are not a record after an intact one" if isinstance(exc, _JunkAfterRecord) else type(exc).__name__
            yield RawRecord(
                offset=bad,
                error="not_a_warc_record",
                detail=f"{what}; {span} bytes skipped",
                end=nxt if nxt is not None else size,
            )
        if nxt is None:
            return
        base = nxt


@dataclass
class Piece:
    """A byte range of a gzipped crawl file read by one task: the records of the members that
    start in [start, stop). What the reading found is filled in: `first`, the member it began
    at (the first one at or after start that inflates to a record header; None: none), and
    `next`, where reading the file in order would go on (the first member at or after stop; None:
    the reading ended on damage or at the end of the file). Consecutive pieces join when one's
    next is the other's first: then they read exactly the records of one reading in order."""

    start: int
    stop: int
    first: int | None = None
    next: int | None = None


def pieces_join(pieces: list[Piece], size: int) -> bool:
    """Whether consecutive pieces of a file of `size` bytes, read, give exactly the records of
    one reading of it in order: each begins where the one before left off (past the end of the
    file, or after damage that ends the reading, the next must find nothing to read)."""
    ends = [p.next if p.next is not None and p.next < size else None for p in pieces]
    return bool(pieces) and pieces[0].start == 0 and all(pieces[i + 1].first == ends[i] for i in range(len(pieces) - 1))


def iter_file(path: str, *, max_body: int, max_member: int, piece: Piece | None = None) -> Iterator[RawRecord]:
    """Every record of a crawl file, damaged ones included (``error`` set), in file order; with
    `piece`, those of the gzip members that start in its range (a plain file is read whole by
    the piece that starts at 0, and not at all by the others).

    Raises OSError only when the file cannot be opened or read; everything else is records.
    """
    with storage.open_input(path) as fh:
        head = fh.read(3)
        if not head:
            return
        fh.seek(0, io.SEEK_END)
        size = fh.tell()
        if head == GZIP_MAGIC or _gzip_after_junk(fh):
            yield from _iter_gzip(fh, size, max_body, max_member, piece)
        elif piece is None or piece.start == 0:
            if piece is not None:
                piece.first, piece.next = 0, None
            yield from _iter_stream(fh, size, max_body)


def _member_with_record(fh: IO[bytes], start: int) -> int | None:
    """The first gzip member at or after start whose inflated bytes begin with a record header
    (where a piece of a file starts reading)."""
    pos = start
    while True:
        at = _find_magic(fh, pos)
        if at is None:
            return None
        fh.seek(at)
        try:
            head = zlib.decompressobj(31).decompress(fh.read(_CHUNK), 4096)
        except zlib.error:
            head = b""
        if _HEADER_LINE.match(head.lstrip(b"\r\n\t ")):
            return at
        pos = at + 1


def _gzip_after_junk(fh: IO[bytes], limit: int = 1 << 20) -> bool:
    """Whether a file that does not start with a gzip member is gzipped after a few stray bytes
    (a byte, a CRLF, NULs before the first member): a gzip member that inflates cleanly starts
    within the first `limit` bytes, before any record header (a plain file's records may hold
    gzip-encoded bodies, which must not make it a gzipped file)."""
    fh.seek(0)
    if _HEADER_LINE.match(fh.read(4096).lstrip(b"\r\n\t ")):
        return False
    fh.seek(0)
    m = _RECORD_START.search(b"\n" + fh.read(limit))  # bounded: never scan a whole large file
    header = m.start(m.lastindex or 0) - 1 if m else None
    pos = 0
    while pos < limit:
        at = _find_magic(fh, pos)
        if at is None or at >= limit or (header is not None and header < at):
            return False
        fh.seek(at)
        try:
            if zlib.decompressobj(31).decompress(fh.read(_CHUNK), 256):
                return True
        except zlib.error:
            pass
        pos = at + 1
    return False


#: How much of a gzipped file _Ahead holds: many members (most are a few KB) to one read.
_AHEAD = 1 << 20


class _Ahead:
    """A gzipped file read ahead in large blocks for the common member, whose bytes are then
    sliced from memory: reading each member by a seek and a 64 KB read of the file read the docs
    corpus's members of a few KB some twenty times over."""

    def __init__(self, fh: IO[bytes], size: int) -> None:
        self.fh, self.size = fh, size
        self.base = 0
        self.held = memoryview(b"")

    def view(self, at: int, n: int) -> memoryview:
        """Bytes [at, at + n) of the file, fewer at its end."""
        end = min(at + n, self.size)
        if at < self.base or end > self.base + len(self.held):
            self.fh.seek(at)
            self.held = memoryview(self.fh.read(max(_AHEAD, n)))
            self.base = at
        return self.held[at - self.base : end - self.base]


def _inflate_whole(ahead: _Ahead, start: int, limit: int) -> tuple[int, bytes] | None:
    """(offset after it, its bytes) of the gzip member at start when it inflates cleanly to at
    most `limit` bytes; None for anything else (not a member, damaged, cut short, too large),
    which _inflate_member then reads again, with its damage handling."""
    if ahead.view(start, 3) != GZIP_MAGIC:
        return None
    d = zlib.decompressobj(31)
    at = start
    parts = []
    size = 0
    try:
        while not d.eof:
            data = d.unconsumed_tail
            if not data:
                data = ahead.view(at, _CHUNK)
                if not data:
                    return None
                at += len(data)
            out = d.decompress(data, _CHUNK)
            size += len(out)
            if size > limit:
                return None
            parts.append(out)
    except zlib.error:
        return None
    return at - len(d.unused_data), parts[0] if len(parts) == 1 else b"".join(parts)


def _inflate_member(fh: IO[bytes], start: int, spool: IO[bytes], max_member: int) -> tuple[int | None, str | None]:
    """Decompress the gzip member at start into spool; returns (offset after it, error)."""
    fh.seek(start)
    d = zlib.decompressobj(31)
    consumed = start
    written = 0
    while not d.eof:
        data = d.unconsumed_tail or fh.read(_CHUNK)
        if not d.unconsumed_tail:
            consumed += len(data)
        if not data:
            return None, "truncated_gzip_member"
        saved = d.copy()
        try:
            out = d.decompress(data, _CHUNK)
        except zlib.error:
            # zlib gives nothing of a call that fails: replay this piece a byte at a time from
            # the state before it, so what decoded before the damage (all of it, for a member
            # whose only fault is its CRC) reaches the spool and can be judged record by record
            for i in range(len(data)):
                try:
                    piece = saved.decompress(data[i : i + 1])
                except zlib.error:
                    break
                written += len(piece)
                if written > max_member:
                    return None, "member_size_limit"
                spool.write(piece)
            return None, "gzip_data_error"
        written += len(out)
        if written > max_member:
            return None, "member_size_limit"
        spool.write(out)
    return consumed - len(d.unused_data), None


def _member_records(
    spool: IO[bytes], length: int, lone: dict[str, Any] | None, pos: int, error: str | None, max_body: int
) -> Iterator[RawRecord]:
    """The records of the gzip member at byte pos, inflated into spool (length bytes; `error` if
    inflating it failed); `lone` its one record as lonerecord parsed it (None: warcio parses)."""
    held: RawRecord | None = None
    if lone is not None:  # the common member, parsed without warcio (see lonerecord)
        lone["http_status"] = _status(lone["http_status"])
        held = RawRecord(offset=pos, **lone)
    for rec in () if lone is not None else _iter_stream(spool, length, max_body):
        rec.offset, rec.inner = pos, rec.offset
        if error == "gzip_data_error" and rec.error is None:
            if rec.digest_ok() is not True:
                rec.error = error
                rec.detail = f"decoded from the damaged gzip member at byte {pos}; no payload digest verifies it"
            else:
                # the digest vouches for the payload only: the record's WARC and HTTP
                # headers (its URL, its date) came out of the same damaged stream
                rec.flags += ("headers_unverified",)
        if held is not None:
            yield held
        held = rec
    if error:
        reached = held is not None and (held.end is None or held.end >= length or held.error is not None)
        if held is not None and reached:
            held.error = error
            held.detail = f"member at byte {pos}: {error}"
        else:
            if held is not None:
                yield held
            tail = (held.end or 0) if held is not None else 0
            held = RawRecord(
                offset=pos,
                inner=tail,
                error=error,
                detail=f"member at byte {pos}: {error}; {length - tail} bytes decompressed after the last record",
            )
    if held is not None:
        yield held


def _iter_gzip(fh: IO[bytes], size: int, max_body: int, max_member: int, piece: Piece | None = None) -> Iterator[RawRecord]:
    """Records of a gzipped file, member by member.

    A member is inflated whole before its records are read, so its fault, if any, is known first:
    in memory from a block of the file read ahead when it inflates cleanly to at most 8 MiB (the
    common member), else again from the file into a spool (memory up to 8 MiB, disk beyond),
    with the damage handling below. Its records are streamed: at most one record is
    held back (to learn whether it is the one that reached the damage), so memory stays about
    two bodies (2 x max_body) plus 8 MiB of member and 1 MiB read ahead, whatever the member holds.

    - A truncated member (``truncated_gzip_member``): what inflated is exact up to the cut, so the
      records that end before it are intact; the record that reaches the cut, or the partial
      header left after the last record, carries the fault.
    - A corrupt member (``gzip_data_error``: bad deflate data or a CRC that does not match):
      zlib notices only at the CRC, so every record decoded from it is suspect and fails, unless
      its WARC-Payload-Digest verifies its payload; then it keeps the flag ``headers_unverified``
      (no digest covers the headers that name its URL).
    """
    pos, stop = 0, size
    if piece is not None:
        began = piece.start if piece.start == 0 else _member_with_record(fh, piece.start)
        piece.first = piece.next = began
        if began is None:
            return
        pos, stop = began, min(size, piece.stop)
    ahead = _Ahead(fh, size)
    while pos < stop:
        if piece is not None:
            piece.next = None  # until this member is read through
        inflated = _inflate_whole(ahead, pos, min(max_member, _SPOOL_IN_MEMORY))
        if inflated is None:
            fh.seek(pos)
        if inflated is None and fh.read(3) != GZIP_MAGIC:
            nxt = _find_magic(fh, pos)
            yield RawRecord(offset=pos, error="not_gzip_member", detail=f"{(nxt or size) - pos} bytes between members")
            if nxt is None:
                return
            pos = nxt
            if piece is not None:
                piece.next = pos
            continue
        end: int | None
        error: str | None = None
        if inflated is not None:
            end, data = inflated
            yield from _member_records(io.BytesIO(data), len(data), lone_record(data, max_body), pos, None, max_body)
        else:
            with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
                end, error = _inflate_member(fh, pos, spool, max_member)
                length = spool.tell()
                spool.seek(0)
                lone = lone_record(spool.read(), max_body) if error is None and length <= _SPOOL_IN_MEMORY else None
                spool.seek(0)
                yield from _member_records(spool, length, lone, pos, error, max_body)
        if end is None:
            if error == "truncated_gzip_member":
                return
            nxt = _find_magic(fh, pos + 1)  # resynchronize at the next member
            if nxt is None:
                return
            pos = nxt
        else:
            pos = end
        if piece is not None:
            piece.next = pos
