"""A part written batch by batch (outputs.parts.PartWriter): every row once, in order, and with
group_rows, in row groups of about that many rows instead of one per batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from webwinnow.outputs import parts
from webwinnow.outputs.parts import PartWriter

SCHEMA = pa.schema([("n", pa.int64()), ("s", pa.string())])


def _batches(sizes):
    first = 0
    for size in sizes:
        values = list(range(first, first + size))
        yield pa.RecordBatch.from_pydict({"n": values, "s": [f"row {v}" for v in values]}, schema=SCHEMA)
        first += size


@pytest.mark.parametrize(("group_rows", "groups"), [(0, [3, 0, 5, 7, 2]), (8, [8, 9]), (100, [17])])
def test_rows_in_order_and_row_groups_as_asked(tmp_path, group_rows, groups):
    writer = PartWriter(str(tmp_path), 3, SCHEMA, group_rows)
    for batch in _batches([3, 0, 5, 7, 2]):
        writer.write(batch)
    assert not list(tmp_path.glob("*.parquet"))  # visible once closed
    writer.close()
    (name,) = tmp_path.glob("*.parquet")
    got = pq.ParquetFile(name)
    assert got.read().column("n").to_pylist() == list(range(17)) and writer.rows == 17
    assert [got.metadata.row_group(i).num_rows for i in range(got.num_row_groups)] == [g for g in groups if g]


def test_held_rows_are_written_past_the_byte_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(parts, "GROUP_BYTES", 1)  # every batch is past it
    writer = PartWriter(str(tmp_path), 0, SCHEMA, 10**6)
    for batch in _batches([2, 4]):
        writer.write(batch)
    writer.close()
    (name,) = tmp_path.glob("*.parquet")
    assert pq.ParquetFile(name).num_row_groups == 2


def test_an_aborted_part_leaves_nothing(tmp_path):
    writer = PartWriter(str(tmp_path), 0, SCHEMA, 100)
    for batch in _batches([5]):
        writer.write(batch)
    writer.abort()
    assert not list(tmp_path.iterdir())


def test_a_part_keeps_hashes_positions_and_texts_out_of_dictionaries(tmp_path):
    """Columns whose values seldom repeat are written plain (PLAIN); the others keep Parquet's
    dictionary, and every value reads back as written."""
    from webwinnow import schemas

    rows = 5000
    batch = pa.RecordBatch.from_arrays(
        [pa.array(np.repeat(np.arange(50), 100)), pa.array(np.arange(rows) * 7919), pa.array(np.arange(rows, dtype=np.int32))],
        schema=schemas.FINGERPRINTS,
    )
    writer = PartWriter(str(tmp_path), 0, schemas.FINGERPRINTS)
    writer.write(batch)
    writer.close()
    name = next(tmp_path.glob("*.parquet"))
    meta = pq.ParquetFile(name).metadata.row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).encodings for i in range(meta.num_columns)}
    assert "RLE_DICTIONARY" in encodings["doc_id"]
    assert not {"RLE_DICTIONARY", "PLAIN_DICTIONARY"} & set(encodings["hash"] + encodings["pos"])
    assert pq.read_table(name).equals(pa.Table.from_batches([batch]))
