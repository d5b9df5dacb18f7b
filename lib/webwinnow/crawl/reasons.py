"""The ledger's reasons: a closed vocabulary, each with the outcome it gives and what it means.

Every ``reason`` in the ledger (and every non-ok ``status`` in documents) is a key of
``REASONS`` or ``http_status_NNN`` for a real HTTP status 100–599 other than 2xx. The README's
table is this one; a test checks that the extractor emits nothing else.
"""

from __future__ import annotations

import re

#: reason → (outcome, meaning). File-level reasons have outcome "file".
REASONS: dict[str, tuple[str, str]] = {
    # skipped: legal records that are not documents
    "non_response_record": ("skipped", "warcinfo, request, metadata or another record that is not a page"),
    "revisit_record": ("skipped", "a revisit: the payload is stored elsewhere"),
    "non_html": ("skipped", "the content type (or the sniffed body) is not HTML; in WARC files also conversions"),
    "non_http_response": ("skipped", "a response record whose body is not an HTTP message"),
    "empty_record": ("skipped", "WARC Content-Length 0"),
    "empty_payload": ("skipped", "an HTTP message with an empty body"),
    "binary_payload": ("skipped", "labelled HTML but binary (NULs, control bytes)"),
    "http_status_NNN": ("skipped", "an HTTP status other than 2xx (e.g. http_status_404)"),
    # failed: damaged records
    "truncated_gzip_member": ("failed", "a gzip member ends before its end-of-stream marker"),
    "gzip_data_error": ("failed", "a gzip member's deflate data or CRC is corrupt"),
    "not_gzip_member": ("failed", "bytes between gzip members that are not a member"),
    "member_size_limit": ("failed", "a gzip member decompresses beyond extract.max_member_bytes"),
    "not_a_warc_record": ("failed", "bytes where a record should start that are not a WARC/ARC header"),
    "missing_content_length": ("failed", "a WARC header without Content-Length"),
    "invalid_content_length": ("failed", "a Content-Length that is not a number"),
    "record_truncated_eof": ("failed", "the file ends before the record's Content-Length"),
    "content_length_mismatch": ("failed", "the record does not end where its Content-Length says"),
    "bad_chunk_size": ("failed", "a chunked transfer coding with a bad chunk size line"),
    "content_decoding_error": ("failed", "gzip/deflate/br content coding that does not decode (or is cut short)"),
    "bad_item": (
        "failed",
        "an item file's line or row that is not an item: not JSON, not an object, no text, not UTF-8, a lone "
        "surrogate, nested too deep, an id that is not finite or that an earlier row has (detail says which)",
    ),
    "internal_error": ("failed", "an input nobody foresaw raised an error: please report it (detail names it)"),
    # flagged: intact but hostile or unverifiable
    "oversized_payload": ("flagged", "the stored body exceeds extract.max_body_bytes: dropped, not read"),
    "decoded_size_limit": ("flagged", "the decoded body exceeds extract.max_decoded_bytes (a decompression bomb)"),
    "digest_mismatch": ("flagged", "WARC-Payload-Digest does not match the payload"),
    "html_too_large": ("flagged", "the HTML exceeds extract.max_html_bytes"),
    "html_too_deep": ("flagged", "nesting beyond extract.max_nesting and the fallback extractor failed"),
    "item_too_large": ("flagged", "an item's text is longer than extract.max_decoded_bytes characters"),
    # files
    "unreadable": ("file", "the file could not be opened or read (detail: the OS error)"),
    "zero_bytes": ("file", "an empty file (status empty)"),
    "no_records": ("file", "no record could be found in the file"),
    "no_readable_record": ("file", "every record of the file failed"),
    "no_items": ("file", "an item file without a line or row (status empty)"),
    "no_readable_item": ("file", "every item of the item file failed"),
}

_HTTP = re.compile(r"http_status_([1-5][0-9][0-9])")


def is_known(reason: str) -> bool:
    """True for a reason of the vocabulary (http_status_NNN with a real non-2xx status)."""
    m = _HTTP.fullmatch(reason)
    if m:
        return not 200 <= int(m.group(1)) < 300
    return reason in REASONS and reason != "http_status_NNN"


def outcome(reason: str) -> str:
    return "skipped" if _HTTP.fullmatch(reason) else REASONS[reason][0]
