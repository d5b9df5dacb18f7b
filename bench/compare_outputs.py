"""Say whether two webwinnow outputs hold the same tables (rows compared sorted).

    python bench/compare_outputs.py OUT_BEFORE OUT_AFTER

The speed work must not change a row: this compares every table both outputs have (the
report's HTML aside), sorted on all columns, and prints one line per table. Exit 1 on a
difference. A table of more than DIGEST_ROWS rows (a run of gigabytes) is not loaded whole:
each row is hashed, batch by batch, and the two tables' sorted row hashes are compared (the
same rows in any order give the same hashes; a changed value, a lost or a doubled row does not).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

TABLES = (
    "documents",
    "ledger",
    "fingerprints",
    "doc_stats",
    "hash_freq",
    "rank_freq",
    "candidate_pairs",
    "pair_seeds",
    "pairs",
    "template_pairs",
    "passages",
    "template_kgrams",
    "clusters",
)
#: Tables of an optional stage. Any table is compared only when both outputs have it.
OPTIONAL = ("deduped",)


def sorted_table(folder: Path) -> pa.Table:
    table = pq.read_table(folder)
    keys = [(name, "ascending") for name in table.column_names if not pa.types.is_nested(table.schema.field(name).type)]
    return table.sort_by(keys)


#: Above this many rows, or this many bytes of Parquet, a table is compared by its rows' hashes,
#: not loaded and sorted whole (1.4 M pages' texts are over the 2 GiB a string column can sort).
DIGEST_ROWS = 2_000_000
DIGEST_BYTES = 256 << 20
_M = np.uint64(0xFFFFFFFFFFFFFFFF)
_NULL = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer: a bijection of uint64 that spreads every input bit."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def value_hashes(arr: pa.Array) -> np.ndarray:
    """One uint64 per value of arr, nulls included (a null hashes apart from any value)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    kind = arr.type
    if pa.types.is_dictionary(kind):
        return value_hashes(arr.cast(kind.value_type))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = arr.offsets.to_numpy().astype(np.int64)
        values = value_hashes(arr.values[offsets[0] : offsets[-1]]) if offsets[-1] > offsets[0] else np.zeros(0, np.uint64)
        offsets = offsets - offsets[0]
        lengths = np.diff(offsets)
        rank = np.arange(len(values), dtype=np.uint64) - np.repeat(offsets[:-1], lengths).astype(np.uint64)
        with np.errstate(over="ignore"):
            terms = _mix(values ^ _mix(rank + np.uint64(1)))
        sums = np.zeros(len(arr), np.uint64)
        nonempty = lengths > 0
        if nonempty.any():
            with np.errstate(over="ignore"):
                sums[nonempty] = np.add.reduceat(terms, offsets[:-1][nonempty])
        out = _mix(sums ^ lengths.astype(np.uint64))
    elif pa.types.is_struct(kind):
        out = np.zeros(len(arr), np.uint64)
        for i, child in enumerate(arr.flatten()):  # flatten: the children as sliced with arr
            with np.errstate(over="ignore"):
                out += _mix(value_hashes(child) ^ np.uint64(i + 1))
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        data = (arr.cast(pa.large_binary()) if not pa.types.is_large_binary(kind) else arr).fill_null(b"")
        out = np.fromiter(
            (int.from_bytes(hashlib.blake2b(v.as_buffer() or b"", digest_size=8).digest(), "little") for v in data),
            np.uint64,
            len(data),
        )
    elif pa.types.is_boolean(kind):
        out = _mix(np.asarray(arr.fill_null(False), np.uint64) + np.uint64(2))
    elif pa.types.is_floating(kind):
        out = _mix(np.asarray(arr.cast(pa.float64()).fill_null(0.0), np.float64).view(np.uint64))
    else:  # integers, dates, timestamps: their integer values
        out = _mix(np.asarray(pc.cast(arr, pa.int64(), safe=False).fill_null(0), np.int64).view(np.uint64))
    if arr.null_count:
        out[np.asarray(arr.is_null(), bool)] = _NULL
    return out


def row_digest(folder: Path) -> tuple[pa.Schema, int, str]:
    """(schema, rows, a digest of the multiset of rows), read one batch at a time."""
    data = ds.dataset(folder, format="parquet")
    hashes = []
    for batch in data.to_batches(batch_size=65_536):
        row = np.zeros(batch.num_rows, np.uint64)
        for i, column in enumerate(batch.columns):
            with np.errstate(over="ignore"):
                row += _mix(value_hashes(column) ^ _mix(np.full(1, i + 1, np.uint64)))
        hashes.append(row)
    rows = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, np.uint64)
    return data.schema, len(rows), hashlib.sha256(rows.tobytes()).hexdigest()


def _rows(folder: Path) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.rglob("*.parquet")))


def _bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*.parquet"))


def same_table(before: Path, after: Path) -> tuple[bool, str]:
    """Whether two table folders hold the same rows, and the line that says so."""
    if max(_rows(before), _rows(after)) > DIGEST_ROWS or max(_bytes(before), _bytes(after)) > DIGEST_BYTES:
        (sa, na, da), (sb, nb, db) = row_digest(before), row_digest(after)
        if sa.remove_metadata() != sb.remove_metadata():
            return False, f"DIFFERENT schema: {sa} vs {sb}"
        if (na, da) != (nb, db):
            return False, f"DIFFERENT rows: {na:,} vs {nb:,} (by row hashes)"
        return True, f"same ({na:,} rows, by row hashes)"
    a, b = sorted_table(before), sorted_table(after)
    if a.schema != b.schema:
        return False, f"DIFFERENT schema: {a.schema} vs {b.schema}"
    if not a.equals(b):
        return False, f"DIFFERENT rows: {a.num_rows:,} vs {b.num_rows:,}"
    return True, f"same ({a.num_rows:,} rows)"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = map(Path, argv)
    failed = 0
    for name in TABLES + OPTIONAL:
        if not (before / name).is_dir() or not (after / name).is_dir():
            continue
        same, line = same_table(before / name, after / name)
        print(f"{name:<13} {line}", flush=True)
        failed += not same
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
