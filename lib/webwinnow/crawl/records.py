"""Crawl file → rows of the documents table and the ledger: what becomes of every record.

Each record gets exactly one outcome:
  parsed   an HTML response whose text was extracted: a `documents` row with status "ok";
  skipped  a legal record that is not a document (request, non-HTML, redirect, revisit ...);
  failed   a damaged record (truncated, bad coding, unparseable): counted with its reason;
  flagged  a legal but hostile record (oversized, decompression bomb, digest mismatch).
HTML responses that fail or are flagged also get a documents row, status = the reason, no text.
Every record that is not parsed gets a ledger row; every file gets one summary row, so per file
parsed + skipped + failed + flagged = records_seen. Nothing here raises on bad input.
"""

from __future__ import annotations

import datetime
import email.utils
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from .. import schemas, storage
from ..config import ExtractConfig
from ..text.html2text import HtmlRejected, html_code, html_to_text
from ..text.tagstrip import strip_tags_text
from .framing import Piece, RawRecord, iter_file
from .httpbody import body_to_text, charset_from_content_type, decode_body, looks_binary
from .ids import doc_id
from .inputs import is_wet
from .reasons import REASONS

HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml+xhtml", "application/vnd.wap.xhtml+xml")
_HTML_SNIFF = (b"<!doctype html", b"<html", b"<head", b"<body")

#: Reasons that make an outcome "flagged" rather than "failed": the record is intact, its content
#: hostile or unverifiable.
FLAG_REASONS = frozenset(r for r, (outcome, _) in REASONS.items() if outcome == "flagged")


@dataclass
class _Counts:
    seen: int = 0
    parsed: int = 0
    skipped: int = 0
    failed: int = 0
    flagged: int = 0


def _content_type(rec: RawRecord) -> str | None:
    value = rec.header("Content-Type") if rec.warc_type == "response" else rec.warc_content_type
    return value.strip()[:200] if value else None


def _is_html(body: bytes, content_type: str | None) -> bool:
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower()
        return mime in HTML_TYPES
    return body[:512].lstrip().lower().startswith(_HTML_SNIFF)


def _payload_problem(rec: RawRecord, doc: dict[str, Any]) -> dict | None:
    """The outcome of a document record whose stored payload cannot be used as it is, else None."""
    if rec.body_oversized:
        return {**doc, "outcome": "flagged", "reason": "oversized_payload"}
    if not rec.body:
        return {**doc, "outcome": "skipped", "reason": "empty_payload"}
    if rec.digest_ok() is False:
        return {**doc, "outcome": "flagged", "reason": "digest_mismatch"}
    return None


def _judge_text(rec: RawRecord, code: bool = False) -> dict:
    """A WET conversion record: the page's text, already extracted by the crawler (UTF-8). Its
    markup is gone, so the code unit (code=True) finds no code blocks in it: empty text, flagged."""
    doc: dict[str, Any] = {"content_type": _content_type(rec), "document": True}
    problem = _payload_problem(rec, doc)
    if problem is not None:
        return problem
    flags: tuple[str, ...] = ("wet_text",)
    try:
        text = rec.body.decode("utf-8")
    except UnicodeDecodeError:
        text, flags = rec.body.decode("utf-8", errors="replace"), flags + ("charset_replaced",)
    if code:
        text, flags = "", flags + ("no_markup_for_code",)
    return {
        **doc,
        "outcome": "parsed",
        "reason": None,
        "text": text,
        "text_chars": len(text),
        "html_bytes": len(rec.body),
        "charset": "utf-8",
        "flags": flags,
        "body_sha256": hashlib.sha256(rec.body).hexdigest(),
    }


def _judge(rec: RawRecord, cfg: ExtractConfig, wet: bool = False, code: bool = False) -> dict:
    """The outcome of one intact record, and its document fields when it is an HTML page.

    HTML comes from `response` records (HTTP envelope) and from `resource` records (the page
    stored bare, as some crawlers and converters do). In a WET file (wet=True) the
    `conversion` records are the documents, their text already extracted; in a WARC file a
    conversion restates a response of the same crawl and is skipped. code=True: the document's
    text is the page's code blocks (the code unit), not its visible text.
    """
    if rec.warc_type == "revisit":
        return {"outcome": "skipped", "reason": "revisit_record"}
    if rec.warc_type == "conversion":
        return _judge_text(rec, code) if wet else {"outcome": "skipped", "reason": "non_html"}
    if rec.warc_type not in ("response", "resource"):
        return {"outcome": "skipped", "reason": "non_response_record"}
    if rec.warc_type == "response":
        if rec.content_length == 0:
            return {"outcome": "skipped", "reason": "empty_record"}
        if rec.http_status is None:
            return {"outcome": "skipped", "reason": "non_http_response"}
        if not 200 <= rec.http_status < 300:
            return {"outcome": "skipped", "reason": f"http_status_{rec.http_status}"}
    content_type = _content_type(rec)
    if not _is_html(rec.body, content_type):
        return {"outcome": "skipped", "reason": "non_html"}
    doc: dict[str, Any] = {"content_type": content_type, "document": True}
    problem = _payload_problem(rec, doc)
    if problem is not None:
        return problem
    headers = rec.http_headers if rec.warc_type == "response" else []
    body = decode_body(rec.body, headers, max_decoded=cfg.max_decoded_bytes)
    if body.reason is None and "content_truncated" in body.flags:
        # a content coding cut short: what decoded is a fragment, not the page
        body = replace(body, body=None, reason="content_decoding_error")
    if body.reason is not None:
        outcome = "flagged" if body.reason in FLAG_REASONS else "failed"
        return {**doc, "outcome": outcome, "reason": body.reason, "flags": body.flags}
    html = body.body or b""
    doc["body_sha256"] = hashlib.sha256(html).hexdigest()
    doc["html_bytes"] = len(html)
    if not html:
        return {**doc, "outcome": "skipped", "reason": "empty_payload"}
    if looks_binary(html):
        return {**doc, "outcome": "skipped", "reason": "binary_payload"}
    decoded = body_to_text(html, charset_from_content_type(content_type))
    flags = tuple(body.flags) + tuple(decoded.flags)
    try:
        extract = html_code if code else html_to_text
        page = decoded.utf8 if decoded.utf8 is not None else decoded.text
        text = extract(page, max_nesting=cfg.max_nesting, max_html_bytes=cfg.max_html_bytes)
    except HtmlRejected as exc:
        if exc.reason != "html_too_deep" or code:  # tag stripping keeps no code blocks apart
            return {**doc, "outcome": "flagged", "reason": exc.reason, "charset": decoded.charset}
        # Too deep for a DOM parser in bounded time: the tag-stripping extractor is linear.
        text = strip_tags_text(decoded.text)
        flags += ("html_too_deep_stripped",)
    return {
        **doc,
        "outcome": "parsed",
        "reason": None,
        "text": text,
        "text_chars": len(text),
        "charset": decoded.charset,
        "flags": flags,
    }


def file_rows(path: str, cfg: ExtractConfig, code: bool = False, piece: Piece | None = None) -> Iterator[dict]:
    """Rows (EXTRACT_ROWS columns) for every record of one file, then the file's summary row;
    code=True: documents hold their pages' code blocks (the code unit). piece: the records of
    that range only (framing.Piece), and a summary row whose status is settled when the pieces
    are joined (settle_status)."""
    counts = _Counts()
    status, reason, detail = "read_ok", None, None
    wet = is_wet(path)
    try:
        for rec in iter_file(path, max_body=cfg.max_body_bytes, max_member=cfg.max_member_bytes, piece=piece):
            counts.seen += 1
            if rec.error is not None:
                result = {"outcome": "flagged" if rec.error in FLAG_REASONS else "failed", "reason": rec.error}
            else:
                try:
                    result = _judge(rec, cfg, wet, code)
                except Exception as exc:  # a bug or an input nobody foresaw: count it, go on
                    result = {"outcome": "failed", "reason": "internal_error", "detail": type(exc).__name__}
            setattr(counts, result["outcome"], getattr(counts, result["outcome"]) + 1)
            yield from _record_rows(path, rec, result)
    except OSError as exc:
        status, reason, detail = "failed", "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}"
    except Exception as exc:  # never let one file take the task down
        status, reason, detail = "failed", "internal_error", type(exc).__name__
    if piece is None:
        status, reason = settle_status(path, status, reason, counts.seen, counts.failed)
    yield {
        "table": "ledger",
        "kind": "file",
        "file": path,
        "status": status,
        "reason": reason,
        "detail": detail,
        "records_seen": counts.seen,
        "parsed": counts.parsed,
        "skipped": counts.skipped,
        "failed": counts.failed,
        "flagged": counts.flagged,
    }


def settle_status(path: str, status: str, reason: str | None, seen: int, failed: int) -> tuple[str, str | None]:
    """A file's status once all its records are counted: read_ok unless it held none, or none
    that could be read."""
    if status == "read_ok" and seen == 0:
        return ("empty", "zero_bytes") if _size(path) == 0 else ("failed", "no_records")
    if status == "read_ok" and seen == failed:
        return "failed", "no_readable_record"
    return status, reason


def _size(path: str) -> int:
    try:
        entry = storage.info(path)
    except OSError:
        return -1
    return entry.size if entry is not None else -1


#: A target URI worth keeping: a scheme, then no whitespace, quotes or angle brackets. After
#: damage the "URI" can be page text, which must not reach the tables.
_PLAUSIBLE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,15}:[^\s<>\"\x00-\x1f\x7f]{0,8000}")


def plausible_url(url: str | None) -> str | None:
    return url if url is not None and _PLAUSIBLE_URL.fullmatch(url) else None


def _record_id(path: str, rec: RawRecord) -> str | None:
    # warcio gives converted ARC records a fresh random UUID: derive one from the coordinates,
    # so two runs over the same file agree.
    if rec.arc:
        return f"<urn:webwinnow:arc:{doc_id(path, rec.offset, rec.inner):016x}>"
    return rec.record_id


_MONTHS = {
    name: i for i, name in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}
#: IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the form RFC 9110 has senders use, with a year
#: of four digits from 1000 (email.utils reads 0000-0099 as two-digit years).
_IMF_FIXDATE = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([1-9]\d{3}) (\d\d):(\d\d):(\d\d) GMT",
    re.ASCII,
)


def http_time(value: str | None) -> str | None:
    """An HTTP date header (RFC 9110: IMF-fixdate, RFC 850, asctime) as ISO 8601 UTC
    ("2003-04-05T06:07:08Z"), comparable as a string; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    fixdate = _IMF_FIXDATE.fullmatch(value)
    if fixdate is None:
        return _parsed_http_time(value)
    # the common form, read as email.utils reads it without its parser and two datetimes: 1.9
    # against 6.4 microseconds, two headers a page
    day, name, year, hour, minute, second = fixdate.groups()
    try:
        datetime.datetime(int(year), _MONTHS[name], int(day), int(hour), int(minute), int(second))
    except ValueError:
        return None
    return f"{year}-{_MONTHS[name]:02d}-{day}T{hour}:{minute}:{second}Z" if int(year) >= 1970 else None


def _parsed_http_time(value: str) -> str | None:
    """http_time of any form email.utils reads."""
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or not 1970 <= when.year <= 9999:
        return None
    if when.tzinfo is None:  # asctime carries no zone: HTTP dates are GMT
        when = when.replace(tzinfo=datetime.UTC)
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_rows(path: str, rec: RawRecord, result: dict) -> Iterator[dict]:
    url = plausible_url(rec.url)
    common = {
        "file": path,
        "offset": rec.offset,
        "record_id": _record_id(path, rec),
        "warc_type": rec.warc_type,
        "url": url,
    }
    outcome = result["outcome"]
    withheld = "; target URI withheld: not a URI" if rec.url is not None and url is None else ""
    if result.get("document"):
        flags = tuple(result.get("flags") or ()) + rec.flags
        yield {
            **common,
            "table": "documents",
            "doc_id": doc_id(path, rec.offset, rec.inner),
            "fetch_time": rec.date,
            "last_modified": http_time(rec.header("Last-Modified")),
            "http_date": http_time(rec.header("Date")),
            "content_type": result.get("content_type"),
            "http_status": rec.http_status,
            "status": "ok" if outcome == "parsed" else result["reason"],
            "text": result.get("text"),
            "html_bytes": result.get("html_bytes", len(rec.body)),
            "text_chars": result.get("text_chars", 0),
            "charset": result.get("charset"),
            "body_sha256": result.get("body_sha256"),
            "flags": ",".join(flags) if flags else None,
        }
    if outcome != "parsed":
        yield {
            **common,
            "table": "ledger",
            "kind": "record",
            "status": outcome,
            "reason": result["reason"],
            "detail": ((result.get("detail") or rec.detail or "") + withheld).lstrip("; ") or None,
        }


def rows_to_batches(rows: Iterator[dict], max_rows: int = 1000, max_text: int = 64 << 20) -> Iterator[pa.RecordBatch]:
    """Arrow batches of EXTRACT_ROWS, bounded in rows and text bytes so a task's memory is too."""
    names = schemas.EXTRACT_ROWS.names
    pending: list[dict] = []
    text_bytes = 0
    for row in rows:
        pending.append(row)
        text_bytes += len(row.get("text") or "")
        if len(pending) >= max_rows or text_bytes >= max_text:
            yield _batch(pending, names)
            pending, text_bytes = [], 0
    if pending:
        yield _batch(pending, names)


def _batch(rows: list[dict], names: list[str]) -> pa.RecordBatch:
    columns = {name: [row.get(name) for row in rows] for name in names}
    return pa.RecordBatch.from_pydict(columns, schema=schemas.EXTRACT_ROWS)
