"""Parquet part files a Spark task writes itself, into a table the driver staged.

A stage whose rows are made in Python (extract reads the crawl, fingerprints its texts) writes
them where they are made: handing them to the JVM to write would convert every row (the page
texts above all) into Spark's rows and back to Parquet, which cost more CPU than reading and
parsing the crawl (docs/performance.md, issue 29). The driver stages the folder
(outputs.tables.stage_table) and publishes it whole (finish_table); each task writes one part per
table, named by its task so a retried task rewrites the same part, never adds a second.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .. import storage

#: Parts are zstd: the same codec as the tables the driver writes (outputs.tables.write_arrow).
COMPRESSION = "zstd"


#: Columns written without a dictionary: values that seldom repeat (hashes, positions, page
#: texts, digests), where Parquet's writer builds a dictionary page, finds it too large and falls
#: back to plain, after the work. Plain, the docs corpus's fingerprints are written in 0.13
#: CPU-s instead of 0.21 and take 11.2 MB instead of 13.6.
PLAIN = frozenset({"hash", "pos", "pos_a", "pos_b", "text", "body_sha256", "snippet", "seeds"})


def dictionary_columns(schema: pa.Schema) -> list[str] | bool:
    """What ParquetWriter's use_dictionary takes for a part of this schema."""
    names = [name for name in schema.names if name not in PLAIN]
    return names if len(names) < len(schema.names) else True


def part_name(task: int) -> str:
    return f"part-{task:05d}.{COMPRESSION}.parquet"


#: The most a held row group of a PartWriter takes in memory before it is written.
GROUP_BYTES = 32 << 20


class PartWriter:
    """One part file of a staged table, written batch by batch and visible only once closed.

    Locally the part is written under a hidden name (which Spark and pyarrow readers skip) and
    renamed into place; on an object store one upload is atomic already. A part is written even
    when empty, so every table has a schema on disk for any reader.
    """

    def __init__(self, folder: str, task: int, schema: pa.Schema, group_rows: int = 0) -> None:
        """group_rows > 0: batches are held and written as row groups of about that many rows
        (at most GROUP_BYTES), not a row group per batch: a task that writes a small batch per
        chunk of its input (the passages stage's grow tasks) made thousands of row groups, each
        a Parquet write call to make and a read call for every reader."""
        self.schema = schema
        self.group_rows = group_rows
        self._held: list[pa.RecordBatch] = []
        self._held_rows = self._held_bytes = 0
        self.final = storage.child(folder, part_name(task))
        fs, path = storage.locate(self.final)
        self._local = not storage.is_uri(storage.canonical(self.final))
        if self._local:
            self._path = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
            self._writer = pq.ParquetWriter(
                self._path, schema, compression=COMPRESSION, use_dictionary=dictionary_columns(schema)
            )
        else:
            self._path = path
            self._writer = pq.ParquetWriter(
                path, schema, compression=COMPRESSION, filesystem=fs, use_dictionary=dictionary_columns(schema)
            )
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        self.rows += batch.num_rows
        if not self.group_rows:
            self._writer.write_batch(batch)
            return
        self._held.append(batch)
        self._held_rows += batch.num_rows
        self._held_bytes += batch.nbytes
        if self._held_rows >= self.group_rows or self._held_bytes >= GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._held:
            table = pa.Table.from_batches(self._held, schema=self.schema)
            self._writer.write_table(table, row_group_size=table.num_rows)
        self._held, self._held_rows, self._held_bytes = [], 0, 0

    def close(self) -> None:
        self._flush()
        self._writer.close()
        if self._local:
            os.replace(self._path, storage.locate(self.final)[1])

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            if self._local:
                try:
                    os.unlink(self._path)
                except FileNotFoundError:
                    pass


def ensure_part(folder: str, schema: pa.Schema) -> None:
    """An empty part in a staged table no task wrote to (a stage whose tasks had no rows), so
    the table has its schema on disk."""
    if not any(e.name.endswith(".parquet") for e in storage.walk(folder, recursive=False)):
        PartWriter(folder, 0, schema).close()


def drop_unfinished_parts(folder: str) -> None:
    """Remove the hidden parts failed task attempts left unfinished in a staged folder (finish_table
    does so in the table's own folder; this, in a folder inside it)."""
    if storage.is_uri(storage.canonical(folder)):
        return  # an object store: a part is one upload, never left half-written
    for leftover in Path(storage.locate(folder)[1]).glob(".part-*.tmp"):
        leftover.unlink()
