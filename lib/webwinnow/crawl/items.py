"""Item files: texts that are not crawl records (a benchmark, a training shard) as documents.

    .jsonl / .jsonl.gz / .ndjson    one JSON object per line; extract.text_column and id_column
    .parquet                        one row per item; the same two columns
    .txt / .text                    the whole file is one item, its id the file name

An item is a document like a page (doc_id from its file and row, so it is the same every run):
`url` and `record_id` hold its id, `warc_file` its file, `warc_offset` its line (JSONL, from
0) or row (Parquet). The text is taken as it is, line breaks and all: normalization keeps only
letters and digits, so a re-wrapped copy fingerprints the same. A row that is not an item (a
line that is not a JSON object, a missing or non-text text column) is a ledger row with its
reason, never dropped silently. So is one a reader downstream could not take as it is: a line
that is not UTF-8 (nothing is replaced), JSON nested deeper than the reader goes, text or an id
holding a lone surrogate (``"\\ud800"``: not Unicode text), an id that is not a finite number,
or an id an earlier row of the file has (ids name items in the report and the contamination
table). A file cut inside its gzip stream keeps its complete lines; the cut is one failed row.
A byte order mark before the first line is dropped.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from collections.abc import Iterator

from .. import storage
from .ids import doc_id
from .inputs import TEXT_SUFFIXES

BOM = b"\xef\xbb\xbf"


class _Cut(Exception):
    """The file ends inside its gzip stream, after `row` lines."""

    def __init__(self, row: int, why: str) -> None:
        super().__init__(why)
        self.row = row


def item_rows(path: str, text_column: str, id_column: str, max_chars: int) -> Iterator[dict]:
    """EXTRACT_ROWS dicts for every item of one file, then the file's ledger row."""
    counts = {"seen": 0, "parsed": 0, "failed": 0, "flagged": 0}
    status, reason, detail = "read_ok", None, None
    seen_ids: dict[str, int] = {}
    try:
        for row, item in _items(path, text_column, id_column):
            counts["seen"] += 1
            if isinstance(item, tuple) and item[0] in seen_ids:
                item = (
                    f"row {row + 1}: its id {item[0]!r} is also row {seen_ids[item[0]] + 1}'s: ids name items, make them unique"
                )
            if isinstance(item, str):  # why the row is not an item
                counts["failed"] += 1
                yield _ledger_record(path, row, "failed", "bad_item", item)
                continue
            seen_ids.setdefault(item[0], row)
            ident, text = item
            if len(text) > max_chars:
                counts["flagged"] += 1
                yield _ledger_record(
                    path,
                    row,
                    "flagged",
                    "item_too_large",
                    f"{len(text):,} characters (extract.max_decoded_bytes {max_chars:,})",
                    ident,
                )
                continue
            counts["parsed"] += 1
            yield {
                "table": "documents",
                "doc_id": doc_id(path, row),
                "file": path,
                "offset": row,
                "record_id": ident,
                "url": ident,
                "content_type": "text/plain",
                "status": "ok",
                "text": text,
                "html_bytes": len(text.encode("utf-8", "surrogatepass")),
                "text_chars": len(text),
                "charset": "utf-8",
            }
    except _Cut as exc:
        counts["seen"] += 1
        counts["failed"] += 1
        yield _ledger_record(path, exc.row, "failed", "truncated_gzip_member", str(exc)[:300])
    except (OSError, EOFError, ValueError) as exc:
        status, reason, detail = "failed", "unreadable", f"{type(exc).__name__}: {exc}"[:300]
    if status == "read_ok" and counts["seen"] == 0:
        status, reason = "empty", "no_items"
    elif status == "read_ok" and counts["seen"] == counts["failed"]:
        status, reason = "failed", "no_readable_item"
    yield {
        "table": "ledger",
        "kind": "file",
        "file": path,
        "status": status,
        "reason": reason,
        "detail": detail,
        "records_seen": counts["seen"],
        "parsed": counts["parsed"],
        "skipped": 0,
        "failed": counts["failed"],
        "flagged": counts["flagged"],
    }


def _ledger_record(path: str, row: int, outcome: str, reason: str, detail: str, ident: str | None = None) -> dict:
    return {
        "table": "ledger",
        "kind": "record",
        "file": path,
        "offset": row,
        "record_id": ident,
        "warc_type": "item",
        "status": outcome,
        "reason": reason,
        "detail": detail,
    }


def _items(path: str, text_column: str, id_column: str) -> Iterator[tuple[int, tuple[str, str] | str]]:
    """(row, (id, text)) per item, or (row, why it is not one)."""
    lower = path.lower()
    if lower.endswith(TEXT_SUFFIXES):
        text, why = _utf8((storage.read_bytes(path) or b"").removeprefix(BOM), "the file")
        yield 0, (storage.basename(path), text) if why is None else why
        return
    if lower.endswith(".parquet"):
        yield from _parquet_items(path, text_column, id_column)
        return
    fs, where = storage.locate(path)
    with fs.open_input_stream(where, compression=None) as raw:  # pyarrow would gunzip .gz by itself
        stream = gzip.GzipFile(fileobj=raw) if lower.endswith(".gz") else raw
        lines = io.BufferedReader(stream)
        row = 0
        while True:
            try:
                data = lines.readline()
            except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
                raise _Cut(
                    row, f"the file ends inside its gzip stream after {row} lines ({exc}): the lines before were read"
                ) from None
            if not data:
                return
            line, why = _utf8(data.removeprefix(BOM) if row == 0 else data, f"line {row + 1}")
            if why is not None:
                yield row, why
            elif not line.strip():
                yield row, "a blank line"
            else:
                yield row, _parsed(line, row, text_column, id_column)
            row += 1


def _utf8(data: bytes, what: str) -> tuple[str, str | None]:
    """(data as text, None), or ("", why it is not UTF-8): nothing is replaced, since a replaced
    byte would change what is fingerprinted without a word."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", (
            f"{what} is not UTF-8 (byte 0x{data[exc.start]:02x} at byte {exc.start}): convert it to UTF-8, "
            "e.g. with iconv -f latin1 -t utf-8"
        )


def _parsed(line: str, row: int, text_column: str, id_column: str) -> tuple[str, str] | str:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"line {row + 1} is not JSON ({exc.msg})"
    except RecursionError:
        return f"line {row + 1} nests arrays or objects deeper than the JSON reader goes"
    return _judge(item, row, text_column, id_column)


def _lone_surrogate(text: str) -> int:
    """The index of text's first lone surrogate (-1: none): such a string is not Unicode text."""
    try:
        text.encode("utf-8")
        return -1
    except UnicodeEncodeError as exc:
        return exc.start


def _judge(item, row: int, text_column: str, id_column: str) -> tuple[str, str] | str:
    if not isinstance(item, dict):
        return f"row {row + 1} is not an object"
    text = item.get(text_column)
    if text is None and text_column in item:
        return f"row {row + 1}: its {text_column!r} is null"
    if not isinstance(text, str):
        present = ", ".join(sorted(map(str, item))[:8])
        return (
            f"row {row + 1} has no text column {text_column!r} (it has: {present}; name it with --text-column)"
            if text is None
            else f"row {row + 1}: {text_column!r} is a {type(text).__name__}, not text"
        )
    at = _lone_surrogate(text)
    if at >= 0:
        return f"row {row + 1}: its {text_column!r} holds a lone surrogate (U+{ord(text[at]):04X} at character {at}): not Unicode text"
    ident = item.get(id_column)
    if isinstance(ident, float) and not math.isfinite(ident):
        return f"row {row + 1}: its id {ident!r} is not a finite number: give ids as text"
    if isinstance(ident, (dict, list)):
        return f"row {row + 1}: its id is a JSON {type(ident).__name__}: give ids as text or numbers"
    ident = str(ident) if ident is not None else f"{row}"
    at = _lone_surrogate(ident)
    if at >= 0:
        return f"row {row + 1}: its id holds a lone surrogate (U+{ord(ident[at]):04X}): not Unicode text"
    return ident, text


def _parquet_items(path: str, text_column: str, id_column: str) -> Iterator[tuple[int, tuple[str, str] | str]]:
    import pyarrow.parquet as pq

    fs, where = storage.locate(path)
    with fs.open_input_file(where) as fh:
        f = pq.ParquetFile(fh)
        names = f.schema_arrow.names
        if text_column not in names:
            raise ValueError(f"no column {text_column!r} (it has: {', '.join(names[:8])}; name it with --text-column)")
        columns = [text_column] + ([id_column] if id_column in names and id_column != text_column else [])
        row = 0
        for batch in f.iter_batches(columns=columns, batch_size=4096):
            texts = batch.column(text_column).to_pylist()
            ids = batch.column(id_column).to_pylist() if id_column in columns else [None] * len(texts)
            for text, ident in zip(texts, ids, strict=True):
                yield row, _judge({id_column: ident, text_column: text}, row, text_column, id_column)
                row += 1
