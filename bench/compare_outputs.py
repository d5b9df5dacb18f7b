"""Say whether two webwinnow outputs hold the same tables (rows compared sorted).

    python bench/compare_outputs.py OUT_BEFORE OUT_AFTER

The speed work must not change a row: this compares every table both outputs have (the
report's HTML aside), sorted on all columns, and prints one line per table. Exit 1 on a
difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
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


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = map(Path, argv)
    failed = 0
    for name in TABLES + OPTIONAL:
        if not (before / name).is_dir() or not (after / name).is_dir():
            continue
        a, b = sorted_table(before / name), sorted_table(after / name)
        if a.schema != b.schema:
            print(f"{name:<13} DIFFERENT schema: {a.schema} vs {b.schema}")
            failed += 1
        elif not a.equals(b):
            print(f"{name:<13} DIFFERENT rows: {a.num_rows:,} vs {b.num_rows:,}")
            failed += 1
        else:
            print(f"{name:<13} same ({a.num_rows:,} rows)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
