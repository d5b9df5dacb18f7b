"""bench/compare_outputs.py: a table too big to load whole is compared by its rows' hashes; the
same rows in any order and any part files are the same, a changed, lost or doubled row is not."""

from __future__ import annotations

import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from paths import REPO

sys.path.insert(0, str(REPO / "bench"))
import compare_outputs  # noqa: E402

SCHEMA = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("text", pa.string()),
        ("share", pa.float64()),
        ("ok", pa.bool_()),
        ("seeds", pa.list_(pa.struct([("pos_a", pa.int64()), ("pos_b", pa.int64())]))),
        ("tags", pa.list_(pa.string())),
    ]
)


def _rows(seed: int, n: int = 300) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "doc_a": rng.randrange(50),
            "text": rng.choice([None, "", "a", "straße", "x" * rng.randrange(40)]),
            "share": rng.choice([None, 0.0, 0.5, 1.0]),
            "ok": rng.choice([None, True, False]),
            "seeds": rng.choice(
                [None, [], [{"pos_a": rng.randrange(9), "pos_b": rng.randrange(9)} for _ in range(rng.randrange(4))]]
            ),
            "tags": rng.choice([None, [], ["a"], ["a", None], [None, "a"]]),
        }
        for _ in range(n)
    ]


def _write(folder, rows, parts: int, seed: int):
    folder.mkdir()
    rows = rows[:]
    random.Random(seed).shuffle(rows)
    for i in range(parts):
        pq.write_table(pa.Table.from_pylist(rows[i::parts], schema=SCHEMA), folder / f"part-{i:05d}.parquet", row_group_size=7)
    return folder


def test_the_same_rows_in_another_order_and_other_files_are_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(compare_outputs, "DIGEST_ROWS", 10)
    rows = _rows(1)
    a = _write(tmp_path / "a", rows, 1, 1)
    b = _write(tmp_path / "b", rows, 4, 2)
    same, line = compare_outputs.same_table(a, b)
    assert same and "by row hashes" in line
    assert sorted(map(repr, pq.read_table(a).to_pylist())) == sorted(map(repr, pq.read_table(b).to_pylist()))


def test_a_changed_lost_or_doubled_row_is_different(tmp_path, monkeypatch):
    monkeypatch.setattr(compare_outputs, "DIGEST_ROWS", 10)
    rows = _rows(2)
    a = _write(tmp_path / "a", rows, 2, 1)
    changes = {
        "nested value": lambda r: r[5].update(seeds=[{"pos_a": 99, "pos_b": 0}]),
        "order inside a list": lambda r: r[7].update(tags=["b", "a"]) or r[8].update(tags=["a", "b"]),
        "null against empty": lambda r: r[3].update(text=None if r[3]["text"] == "" else ""),
        "lost row": lambda r: r.pop(),
        "doubled row": lambda r: r.__setitem__(0, dict(r[1])),
        "a value moved between rows": lambda r: (r[0].update(doc_a=r[1]["doc_a"]), r[1].update(doc_a=r[0]["doc_a"])),
    }
    tried = 0
    for name, change in changes.items():
        other = [dict(r) for r in rows]
        change(other)
        if other == rows:  # the random rows made the change a no-op
            continue
        b = _write(tmp_path / name.replace(" ", "_"), other, 3, 2)
        same, line = compare_outputs.same_table(a, b)
        assert not same and line.startswith("DIFFERENT"), name
        tried += 1
    assert tried >= 5


def test_a_table_of_few_rows_but_many_bytes_is_compared_by_row_hashes(tmp_path, monkeypatch):
    # 1.4 M pages' texts are more than a string column can sort in one piece (2 GiB)
    monkeypatch.setattr(compare_outputs, "DIGEST_BYTES", 1)
    rows = _rows(3)
    a = _write(tmp_path / "a", rows, 1, 1)
    b = _write(tmp_path / "b", rows, 3, 2)
    same, line = compare_outputs.same_table(a, b)
    assert same and "by row hashes" in line
    c = _write(tmp_path / "c", rows[1:], 2, 3)
    assert not compare_outputs.same_table(a, c)[0]
