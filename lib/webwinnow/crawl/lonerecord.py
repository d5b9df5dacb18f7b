"""The common case of a gzipped WARC file, read without warcio: one record alone in its member.

Common Crawl, Heritrix and most writers put each record in a gzip member of its own, with ASCII
headers ending in CRLF and the block followed by exactly CRLF CRLF. warcio parses such a record
through a buffered reader, a limit reader and a line-by-line header parser, then tries to parse
a second record and meets the end: a third of the whole extraction's CPU on the sample crawl.
Here a member's bytes are split with a few `bytes.find` calls instead.

Only records whose every byte leaves no room for interpretation are taken: the WARC/1.0 or 1.1
line, headers that are ASCII `Name: value` lines with no continuation and no blank-looking line,
a Content-Length that ends the block exactly where CRLF CRLF and the member end, a target URI
warcio would leave as it is, and HTTP headers (for the records warcio parses them of) that are
ASCII CRLF lines ending at a CRLF CRLF. Everything else returns None and goes through warcio as
before (framing._records), with its checks and its damage handling. On what is taken, the fields
are those warcio's path gives, value for value: `tests/unit/test_lonerecord.py` holds the two to each
other on every member of the real, malformed and generated crawl files and on mutated records.
"""

from __future__ import annotations

from typing import Any

from warcio.recordloader import ArcWarcRecordLoader

_VERSIONS = (b"WARC/1.0\r\n", b"WARC/1.1\r\n")
_END = b"\r\n\r\n"
_HTTP_RECORDS = ArcWarcRecordLoader.HTTP_RECORDS
_HTTP_SCHEMES = ArcWarcRecordLoader.HTTP_SCHEMES


def _header_lines(block: bytes) -> list[tuple[str, str]] | None:
    """warcio's (name, value) pairs of CRLF-separated header lines; None where a line could be
    read another way (a continuation, a bare CR or LF, a line blank but for spaces, non-ASCII)."""
    bare = block.replace(b"\r\n", b"")
    if not block.isascii() or b"\n" in bare or b"\r" in bare:
        return None
    headers = []
    for raw in block.split(b"\r\n"):
        line = raw.decode("ascii").rstrip()
        if not line or raw[:1] in (b" ", b"\t"):
            return None
        name, colon, value = line.partition(":")
        if colon:  # warcio drops a line without a colon
            headers.append((name.rstrip(" \t"), value.lstrip()))
    return headers


def _first(headers: list[tuple[str, str]]) -> dict[str, str]:
    """Header lookup as warcio's get_header: case-insensitive, the first of repeated names."""
    found: dict[str, str] = {}
    for name, value in headers:
        found.setdefault(name.lower(), value)
    return found


def lone_record(data: bytes, max_body: int) -> dict[str, Any] | None:
    """RawRecord's fields (but offset) of a member whose bytes are one plain WARC record, as
    warcio's path would give them, but for `http_status`: the HTTP status line's code as written
    (framing._status reads it); None for anything else."""
    if not data.startswith(_VERSIONS):
        return None
    head_end = data.find(_END)
    if head_end < 0:
        return None
    headers = _header_lines(data[10:head_end])
    if not headers:
        return None
    get = _first(headers)
    warc_type, url, declared = get.get("warc-type"), get.get("warc-target-uri"), get.get("content-length")
    if warc_type is None or declared is None or not declared.isdigit():
        return None
    if url is not None and (" " in url or (url.startswith("<") and url.endswith(">"))):
        return None  # warcio rewrites these
    length = int(declared)
    http = length > 0 and warc_type in _HTTP_RECORDS
    if http and url is None:
        return None  # warcio fails on it
    start = head_end + 4
    if len(data) != start + length + 4 or not data.endswith(_END):
        return None
    block = data[start : start + length]
    http_code, http_headers, body = None, [], block
    if http and url is not None and url.startswith(_HTTP_SCHEMES):
        http_end = block.find(_END)
        if http_end < 0:
            return None
        status_line, _, rest = block[:http_end].partition(b"\r\n")
        parsed = _header_lines(rest) if rest else []
        if parsed is None or not status_line.isascii() or b"\n" in status_line or b"\r" in status_line:
            return None
        line = status_line.decode("ascii").rstrip()
        if not line:
            return None
        # warcio does not verify HTTP status lines: the word after the first space is the code
        parts = line.split(" ", 1)
        status = parts[1].strip() if len(parts) > 1 else ""
        http_code = status.split(" ", 1)[0]
        http_headers = parsed
        body = block[http_end + 4 :]
    oversized = len(body) > max_body
    return {
        "warc_type": warc_type,
        "record_id": get.get("warc-record-id"),
        "url": url,
        "date": get.get("warc-date"),
        "warc_content_type": get.get("content-type"),
        "content_length": length,
        "payload_digest": get.get("warc-payload-digest"),
        "http_status": http_code,
        "http_headers": http_headers,
        "body": b"" if oversized else body,
        "body_oversized": oversized,
        "end": len(data),
    }
