"""Item files: texts that are not crawl records (a benchmark, a training shard) as documents.

    .jsonl / .jsonl.gz / .ndjson    one JSON object per line; extract.text_column and id_column
    .parquet                        one row per item; the same two columns
    .txt / .text                    the whole file is one item, its id the file name

An item is a document like a page (doc_id from its file and row, so it is the same every run):
`url` and `record_id` hold its id, `warc_file` its file, `warc_offset` its line (JSONL, from
0) or row (Parquet). The text is taken as it is, line breaks and all: normalization keeps only
letters and digits, so a re-wrapped copy fingerprints the same. A row that is not an item (a
line that is not a JSON object, a missing or non-text text column) is a ledger row with its
reason, never dropped silently.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator

from .. import storage
from .ids import doc_id
from .inputs import TEXT_SUFFIXES


def item_rows(path: str, text_column: str, id_column: str, max_chars: int) -> Iterator[dict]:
    """EXTRACT_ROWS dicts for every item of one file, then the file's ledger row."""
    counts = {"seen": 0, "parsed": 0, "failed": 0, "flagged": 0}
    status, reason, detail = "read_ok", None, None
    try:
        for row, item in _items(path, text_column, id_column):
            counts["seen"] += 1
            if isinstance(item, str):  # why the row is not an item
                counts["failed"] += 1
                yield _ledger_record(path, row, "failed", "bad_item", item)
                continue
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
        data = storage.read_bytes(path) or b""
        yield 0, (storage.basename(path), data.decode("utf-8", "replace"))
        return
    if lower.endswith(".parquet"):
        yield from _parquet_items(path, text_column, id_column)
        return
    fs, where = storage.locate(path)
    with fs.open_input_stream(where, compression=None) as raw:  # pyarrow would gunzip .gz by itself
        stream = gzip.GzipFile(fileobj=raw) if lower.endswith(".gz") else raw
        for row, line in enumerate(io.TextIOWrapper(stream, encoding="utf-8", errors="replace")):
            if not line.strip():
                yield row, "a blank line"
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                yield row, f"line {row + 1} is not JSON ({exc.msg})"
                continue
            yield row, _judge(item, row, text_column, id_column)


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
    ident = item.get(id_column)
    return (str(ident) if ident is not None else f"{row}"), text


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
