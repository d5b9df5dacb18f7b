"""Parquet files sorted on a key, cut into small row groups, and read back by the row groups that
can hold given keys (the directory of every row group's key range says which).

Why not Spark's reader with a filter: a query's keys are thousands of scattered values, which
Spark pushes down to Parquet as one min..max range (spark.sql.parquet.pushdown.inFilterThreshold),
so it would read every row group of every bucket the keys touch. Here the directory is read on
the driver, each row group kept only when a key falls inside its range, and only those are read
(by tasks, on the executors), then filtered to the keys exactly: what a query reads grows with
its keys, not with the index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import storage

#: One row per row group of a bucket file.
DIRECTORY = pa.schema(
    [
        ("table", pa.string()),
        ("bucket", pa.int32()),
        ("file", pa.string()),
        ("row_group", pa.int32()),
        ("lo", pa.int64()),
        ("hi", pa.int64()),
        ("rows", pa.int64()),
        ("bytes", pa.int64()),
    ]
)
#: Rows per row group of the hash-keyed files: a query reads a whole group for each key it has
#: in it, so smaller groups read less (4,096 fingerprints are about 40 KB on disk); many more
#: groups cost directory rows and one read each.
GROUP_ROWS = 4096
#: Text bytes per row group of the documents files (a few pages each: a check reads the
#: groups of the documents it matched).
GROUP_TEXT_BYTES = 256 << 10


def bucket_of(keys: np.ndarray, bits: int, key_bits: int = 64) -> np.ndarray:
    """The bucket of each key: its top `bits` bits of key_bits (64 for hashes, read unsigned;
    63 for doc_ids, which are non-negative)."""
    if bits == 0:
        return np.zeros(len(keys), np.int32)
    unsigned = np.asarray(keys, np.int64).view(np.uint64)
    return (unsigned >> np.uint64(key_bits - bits)).astype(np.int32)


@dataclass
class _Open:
    bucket: int
    name: str
    writer: pq.ParquetWriter
    groups: int = 0


class BucketWriter:
    """Writes rows sorted by (bucket, key) into one file per bucket, each in row groups of at most
    `group_rows` rows (and, with text_column, about `group_bytes` of text), and returns the
    directory rows of what it wrote. One writer per task; each bucket must come whole to one."""

    def __init__(
        self,
        table: str,
        schema: pa.Schema,
        key: str,
        root: str,
        path_of,
        group_rows: int = GROUP_ROWS,
        text_column: str | None = None,
        group_bytes: int = GROUP_TEXT_BYTES,
    ) -> None:
        """path_of(bucket): the file's path relative to root (what the directory records, so an
        index can be moved or renamed whole)."""
        self.table, self.schema, self.key, self.root, self.path_of = table, schema, key, root, path_of
        self.group_rows, self.text_column, self.group_bytes = group_rows, text_column, group_bytes
        self.directory: dict[str, list] = {f.name: [] for f in DIRECTORY}
        self._open: _Open | None = None
        self._pending: list[pa.Table] = []  # rows of the open bucket not yet in a whole group
        self.written: list[str] = []

    def write(self, rows: pa.Table, buckets: np.ndarray) -> None:
        """rows sorted by (bucket, key); buckets: each row's bucket."""
        if not rows.num_rows:
            return
        cuts = np.flatnonzero(np.diff(buckets)) + 1
        for lo, hi in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(buckets)]]), strict=True):
            self._write_bucket(int(buckets[lo]), rows.slice(int(lo), int(hi - lo)))

    def _write_bucket(self, bucket: int, rows: pa.Table) -> None:
        if self._open is None or self._open.bucket != bucket:
            if self._open is not None and bucket < self._open.bucket:
                raise ValueError("rows must come sorted by bucket")
            self._close()
            name = self.path_of(bucket)
            fs, path = storage.locate(storage.child(self.root, name))
            if storage.is_local(self.root):
                fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
            self._open = _Open(
                bucket, name, pq.ParquetWriter(path, self.schema, filesystem=fs, compression="zstd", write_statistics=[self.key])
            )
            self.written.append(name)
        # rows come in Spark's Arrow batches: held until a whole group is there, so groups have
        # the size asked for whatever the batches' size
        self._pending.append(rows)
        held = pa.concat_tables(self._pending)
        groups = list(self._groups(held))
        for group in groups[:-1]:
            self._write_group(group)
        self._pending = [groups[-1]] if groups else []

    def _write_group(self, group: pa.Table) -> None:
        assert self._open is not None
        keys = group.column(self.key)
        self._open.writer.write_table(group, row_group_size=group.num_rows)
        for col, value in (
            ("table", self.table),
            ("bucket", self._open.bucket),
            ("file", self._open.name),
            ("row_group", self._open.groups),
            ("lo", keys[0].as_py()),
            ("hi", keys[-1].as_py()),
            ("rows", group.num_rows),
            ("bytes", group.nbytes),
        ):
            self.directory[col].append(value)
        self._open.groups += 1

    def _groups(self, rows: pa.Table) -> Iterator[pa.Table]:
        if self.text_column is None:
            for start in range(0, rows.num_rows, self.group_rows):
                yield rows.slice(start, self.group_rows)
            return
        import pyarrow.compute as pc

        sizes = np.asarray(pc.binary_length(rows.column(self.text_column)).fill_null(0), np.int64).cumsum()
        start = 0
        while start < rows.num_rows:
            base = sizes[start - 1] if start else 0
            end = int(np.searchsorted(sizes, base + self.group_bytes, side="right"))
            end = min(max(end, start + 1), start + self.group_rows)
            yield rows.slice(start, end - start)
            start = end

    def _close(self) -> None:
        if self._open is not None:
            for group in self._pending:
                if group.num_rows:
                    self._write_group(group)
            self._pending = []
            self._open.writer.close()
            self._open = None

    def finish(self) -> pa.Table:
        self._close()
        return pa.table(self.directory, schema=DIRECTORY)


def plan_reads(directory: pa.Table, keys: np.ndarray) -> list[tuple[str, list[int]]]:
    """(file, row groups) that can hold any of the sorted keys: a group is kept when a key falls
    in its [lo, hi] (a directory names one table; keys of that table's type)."""
    if not directory.num_rows or not len(keys):
        return []
    lo = directory.column("lo").to_numpy()
    hi = directory.column("hi").to_numpy()
    hit = np.searchsorted(keys, lo, side="left") < np.searchsorted(keys, hi, side="right")
    chosen = directory.filter(pa.array(hit))
    plan: dict[str, list[int]] = {}
    for name, group in zip(chosen.column("file").to_pylist(), chosen.column("row_group").to_pylist(), strict=True):
        plan.setdefault(name, []).append(group)
    return sorted((name, sorted(groups)) for name, groups in plan.items())


def read_matching(name: str, groups: list[int], keys: np.ndarray, key: str, columns: list[str] | None = None) -> pa.Table:
    """The rows of the given row groups of file `name` (a location) whose key is one of the sorted keys."""
    fs, path = storage.locate(name)
    with fs.open_input_file(path) as fh:
        table = pq.ParquetFile(fh).read_row_groups(groups, columns=columns)
    return table.filter(pa.array(contains(keys, table.column(key).to_numpy())))


def contains(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whether each value is in the sorted array."""
    if not len(sorted_keys):
        return np.zeros(len(values), bool)
    at = np.searchsorted(sorted_keys, values).clip(max=len(sorted_keys) - 1)
    return sorted_keys[at] == values


def read_directory(names: Iterable[str]) -> pa.Table:
    """The directories of the given segments, as one table."""
    parts = []
    for name in names:
        fs, path = storage.locate(name)
        parts.append(pq.read_table(path, filesystem=fs, schema=DIRECTORY))
    return pa.concat_tables(parts) if parts else DIRECTORY.empty_table()
