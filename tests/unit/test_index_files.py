"""The index's files without Spark: sorted bucket files and their directory, reading by keys, the
manifest, the DF histogram after appends."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from webwinnow.index import layout
from webwinnow.index.sortedfiles import BucketWriter, bucket_of, contains, plan_reads, read_matching

SCHEMA = pa.schema([("hash", pa.int64()), ("doc_id", pa.int64())])


def _write(tmp_path, hashes: np.ndarray, bits: int, group_rows: int):
    order = np.lexsort((hashes, bucket_of(hashes, bits)))
    hashes = hashes[order]
    rows = pa.table({"hash": hashes, "doc_id": np.arange(len(hashes), dtype=np.int64)}, schema=SCHEMA)
    writer = BucketWriter(
        "fingerprints",
        SCHEMA,
        "hash",
        str(tmp_path),
        lambda b: layout.bucket_file("fingerprints", b, "seg"),
        group_rows=group_rows,
    )
    writer.write(rows, bucket_of(hashes, bits))
    return rows, writer.finish()


def test_buckets_are_the_top_bits_of_the_unsigned_hash():
    h = np.array([0, 1, -1, np.iinfo(np.int64).min, np.iinfo(np.int64).max], np.int64)
    assert bucket_of(h, 0).tolist() == [0] * 5
    assert bucket_of(h, 1).tolist() == [0, 0, 1, 1, 0]
    assert bucket_of(h, 4).tolist() == [0, 0, 15, 8, 7]
    assert bucket_of(np.array([2**62, 2**63 - 1]), 2, key_bits=63).tolist() == [2, 3]  # doc ids


@pytest.mark.parametrize("bits", [0, 3])
def test_reading_by_keys_reads_only_row_groups_that_can_hold_them_and_finds_every_row(tmp_path, bits):
    rng = np.random.default_rng(bits)
    hashes = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 5000, dtype=np.int64)
    hashes[:50] = hashes[50:100]  # repeated keys: all their rows come back
    rows, directory = _write(tmp_path, hashes, bits, group_rows=64)
    assert directory.num_rows == sum(-(-n // 64) for n in np.bincount(bucket_of(hashes, bits)) if n)
    for lo, hi, bucket in zip(
        directory.column("lo").to_pylist(),
        directory.column("hi").to_pylist(),
        directory.column("bucket").to_pylist(),
        strict=True,
    ):
        assert lo <= hi and set(bucket_of(np.array([lo, hi]), bits).tolist()) == {bucket}
    keys = np.unique(np.concatenate([rng.choice(hashes, 10), rng.integers(-(2**62), 2**62, 10)]))
    plan = plan_reads(directory, keys)
    # 20 keys, 79+ groups: a key is in one group's range (two when its rows straddle a cut)
    assert sum(len(g) for _, g in plan) <= len(keys) + 2 < directory.num_rows / 3
    found = pa.concat_tables([read_matching(str(tmp_path / name), groups, keys, "hash") for name, groups in plan])
    want = rows.filter(pa.array(np.isin(rows.column("hash").to_numpy(), keys)))
    assert sorted(found.to_pylist(), key=str) == sorted(want.to_pylist(), key=str) and want.num_rows >= 10
    for name, _ in plan:  # each file sorted by key, with statistics
        keys_in_file = pq.read_table(tmp_path / name).column("hash").to_numpy()
        assert np.all(np.diff(keys_in_file) >= 0)


def test_rows_must_come_sorted_by_bucket(tmp_path):
    writer = BucketWriter("fingerprints", SCHEMA, "hash", str(tmp_path), lambda b: f"f/{b}.parquet")
    writer.write(pa.table({"hash": [5], "doc_id": [1]}, schema=SCHEMA), np.array([2]))
    with pytest.raises(ValueError, match="sorted by bucket"):
        writer.write(pa.table({"hash": [1], "doc_id": [1]}, schema=SCHEMA), np.array([1]))


def test_text_row_groups_are_cut_by_bytes(tmp_path):
    schema = pa.schema([("doc_id", pa.int64()), ("text", pa.string())])
    rows = pa.table({"doc_id": np.arange(40, dtype=np.int64), "text": ["x" * 1000] * 40}, schema=schema)
    writer = BucketWriter(
        "documents", schema, "doc_id", str(tmp_path), lambda b: "d.parquet", text_column="text", group_bytes=4000
    )
    for start in range(0, 40, 7):  # in batches of any size: groups of the size asked for
        writer.write(rows.slice(start, 7), np.zeros(min(7, 40 - start), np.int32))
    assert writer.finish().column("rows").to_pylist() == [4] * 10


def test_groups_are_whole_whatever_the_batches(tmp_path):
    hashes = np.arange(1000, dtype=np.int64)
    rows = pa.table({"hash": hashes, "doc_id": hashes}, schema=SCHEMA)
    writer = BucketWriter("fingerprints", SCHEMA, "hash", str(tmp_path), lambda b: f"f/{b}.parquet", group_rows=64)
    buckets = (hashes >= 600).astype(np.int32)
    for start in range(0, 1000, 37):
        writer.write(rows.slice(start, 37), buckets[start : start + 37])
    directory = writer.finish()
    assert directory.column("rows").to_pylist() == [64] * 9 + [24] + [64] * 6 + [16]
    assert pq.read_table(tmp_path / "f/0.parquet").column("hash").to_pylist() == list(range(600))


def test_contains():
    keys = np.array([-5, 3, 9], np.int64)
    assert contains(keys, np.array([-5, 0, 9, 10, -6])).tolist() == [True, False, True, False, False]
    assert contains(np.array([], np.int64), np.array([1])).tolist() == [False]


def test_the_histogram_after_an_append_counts_each_hash_at_its_summed_frequency():
    # index: hashes A (2 docs), B (1 doc); the append: A in 1 doc, C in 3 docs
    after = layout.merged_histogram([(2, 1), (1, 1)], [(2, 3, 1), (0, 3, 1)])
    assert after == ((1, 1), (3, 2))
    with pytest.raises(ValueError, match="rebuild"):
        layout.merged_histogram([(1, 1)], [(2, 3, 1)])


def _settings(**kw):
    base = dict(k=50, w=100, robust=True, mod_p=0, unit="char", unicode="15.0.0")
    return layout.Settings(**{**base, **kw})


def test_settings_mismatch_names_what_differs_and_allows_a_larger_query_window():
    index = _settings()
    assert index.mismatch(_settings()) == ""
    assert "k 40 (the index has 50)" in index.mismatch(_settings(k=40))
    assert index.mismatch(_settings(w=200), query_w=True) == ""
    assert "w 50" in index.mismatch(_settings(w=50), query_w=True)
    assert "w 200" in index.mismatch(_settings(w=200))
    assert "unit 'word'" in index.mismatch(_settings(unit="word"))


def test_a_code_index_records_its_tokenizer_and_refuses_another():
    """Code fingerprints depend on the tokenizer's normalization and on the Pygments release;
    an index made by another (or before the tokenizer was recorded: "") refuses a code query."""
    from webwinnow.config import load_config
    from webwinnow.core.codetokens import tokenizer

    code = layout.Settings.of(load_config([], {"winnow": {"unit": "code"}}).winnow)
    assert (code.unit, code.lexer, code.tokens) == ("code", "c", tokenizer())
    assert tokenizer().startswith("webwinnow-code-3 pygments-")
    for older in ("", "webwinnow-code-2 pygments-2.17.2"):
        assert f"tokens {tokenizer()!r} (the index has {older!r})" in replace(code, tokens=older).mismatch(code)
    char = layout.Settings.of(load_config([]).winnow)
    assert char.tokens == "" and char.lexer == ""
    manifest = layout.Manifest(settings=char, bits={})
    assert "tokens" not in manifest.identity()["settings"]  # checks against char indexes keep their tags
    assert "tokens" in layout.Manifest(settings=code, bits={}).identity()["settings"]
    # a code run's tables name the tokenizer too: a run made by another is stale, never mixed
    assert load_config([], {"winnow": {"unit": "code"}}).winnow.identity()["tokens"] == tokenizer()
    assert "tokens" not in load_config([], {"winnow": {"unit": "word"}}).winnow.identity()


def test_the_manifest_round_trips_and_refuses_what_is_not_an_index(tmp_path):
    m = layout.Manifest(
        settings=_settings(),
        bits={"fingerprints": 2, "hash_df": 2, "documents": 0},
        segments=(layout.new_segment("20261202T000000-0123abcd", 3, 40, 30, "x"),),
        df_histogram=((1, 25), (2, 5)),
    )
    layout.write_manifest(str(tmp_path), m)
    back = layout.read_manifest(str(tmp_path))
    assert back.settings == m.settings and back.segments == m.segments and back.df_histogram == m.df_histogram
    assert (back.documents, back.fingerprints, back.hashes) == (3, 40, 30)
    with pytest.raises(layout.NotAnIndex, match="does not exist"):
        layout.read_manifest(str(tmp_path / "nothing"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(layout.NotAnIndex, match="not a webwinnow index"):
        layout.read_manifest(str(tmp_path / "plain"))
    (tmp_path / "plain" / layout.MANIFEST).write_text("{")
    with pytest.raises(layout.NotAnIndex, match="damaged"):
        layout.read_manifest(str(tmp_path / "plain"))


def test_owned_files_lists_only_segment_files_of_other_segments(tmp_path):
    keep, other = "20261202T000000-0123abcd", "20261202T000001-89abcdef"
    for name in (
        f"fingerprints/b=0000/{keep}.parquet",
        f"fingerprints/b=0000/{other}.parquet",
        f"directory/{other}.parquet",
        f"segments/{other}.json",
        "fingerprints/b=0000/notes.parquet",
        "fingerprints/user-file.txt",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = sorted(p.removeprefix(str(tmp_path) + "/") for p in layout.owned_files(str(tmp_path), [keep]))
    assert found == [f"directory/{other}.parquet", f"fingerprints/b=0000/{other}.parquet", f"segments/{other}.json"]


def test_bucket_bits_leave_room_to_grow():
    assert layout.choose_bits(0, 1 << 20) == 2
    assert layout.choose_bits(3 << 20, 1 << 20) == 4
    assert layout.choose_bits(1 << 60, 1 << 20) == layout.MAX_BITS
