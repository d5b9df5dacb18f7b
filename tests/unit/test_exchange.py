"""Blob shuffles (stages._exchange): every row packed lands once, in a blob of its partition, and
unpacks to the same values; and the pair tasks' result does not depend on the order the seeds
arrive in (a blob shuffle delivers them in any order)."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.stages import _exchange
from webwinnow.stages._exchange import BLOBS, packed, partitions_for, spread, unpacked
from webwinnow.stages.candidates import SEED_ROWS, in_seed_order, pair_arrow

SCHEMA = pa.schema([("key", pa.int64()), ("text", pa.string()), ("values", pa.list_(pa.int32()))])


def _batches(rows: list[tuple[int, str, list[int]]], cuts: list[int]) -> list[pa.RecordBatch]:
    bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    return [
        pa.RecordBatch.from_pylist([{"key": k, "text": t, "values": v} for k, t, v in rows[lo:hi]], schema=SCHEMA)
        for lo, hi in zip(bounds, bounds[1:], strict=False)
    ]


def _by_key(batch: pa.RecordBatch) -> np.ndarray:
    return batch.column("key").to_numpy()


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(-(2**62), 2**62), st.text(max_size=8), st.lists(st.integers(-5, 5), max_size=4)), max_size=120
    ),
    cuts=st.lists(st.integers(0, 120), max_size=5),
    parts=st.integers(1, 7) | st.sampled_from([300, 70_000]),  # 16-bit partition numbers and wider
    gather=st.sampled_from([1, 200, 1 << 20]),
    batch_bytes=st.sampled_from([1, 500, 1 << 28]),
)
def test_every_row_lands_once_in_a_blob_of_its_partition(rows, cuts, parts, gather, batch_bytes):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_exchange, "GATHER_BYTES", gather)
        patch.setattr(_exchange, "BATCH_BYTES", batch_bytes)
        blobs = list(packed(iter(_batches(rows, cuts)), _by_key, parts))
    got = []
    by_part: dict[int, list] = {}
    for batch in blobs:
        assert batch.schema == BLOBS
        for part, blob in zip(batch.column("part").to_pylist(), batch.column("blob"), strict=True):
            assert 0 <= part < parts
            for unpacked_batch in unpacked(
                [pa.RecordBatch.from_arrays([pa.array([part], pa.int32()), pa.array([blob.as_py()])], schema=BLOBS)]
            ):
                assert unpacked_batch.schema == SCHEMA
                keys = unpacked_batch.column("key").to_numpy()
                assert ((keys.astype(np.uint64) % np.uint64(parts)) == part).all()  # the row's own partition
                found = list(zip(keys.tolist(), *(unpacked_batch.column(c).to_pylist() for c in ("text", "values")), strict=True))
                got.extend(found)
                by_part.setdefault(part, []).extend(found)
    assert sorted(got) == sorted((k, t, v) for k, t, v in rows)
    for part, found in by_part.items():  # a partition's rows come in the order they were given
        assert found == [(k, t, v) for k, t, v in rows if k % 2**64 % parts == part]
    if batch_bytes == 1:
        assert all(b.num_rows == 1 for b in blobs)  # past BATCH_BYTES a batch of blobs is cut


def test_nothing_packs_to_nothing():
    assert list(packed(iter([]), _by_key, 3)) == []
    assert (
        list(packed(iter([SCHEMA.empty_table().to_batches() or pa.RecordBatch.from_pylist([], schema=SCHEMA)]), _by_key, 3)) == []
    )


def test_spread_mixes_keys_evenly_and_the_same_every_time():
    ids = np.arange(200_000, dtype=np.int64) * 1024  # ids with no low bits: their own residues would pile up
    mixed = spread(ids, ids + 1)
    assert np.array_equal(mixed, spread(ids, ids + 1))
    counts = np.bincount((mixed % np.uint64(16)).astype(np.int64), minlength=16)
    assert counts.min() > 0.9 * len(ids) / 16 and counts.max() < 1.1 * len(ids) / 16
    assert not np.array_equal(spread(ids, ids + 1), spread(ids + 1, ids))  # the order of the keys counts


@pytest.mark.parametrize(
    ("row_bytes", "rows", "least", "want"),
    [
        (32, 0, 4, 4),
        (32, 10, 0, 1),
        (32, (256 << 20) // 32 * 3, 2, 3),
        (32, (256 << 20) // 32 * 3 + 1, 2, 4),
        (32, (256 << 20) // 32 * 20_000, 2, 20_000),
        (32, (256 << 20) // 32 * 20_000 + 1, 2, None),
    ],
)
def test_partitions_are_sized_so_each_holds_a_bounded_share(row_bytes, rows, least, want):
    assert partitions_for(row_bytes, rows, least) == want


def _seeds(rng, n: int) -> pa.RecordBatch:
    doc_a = rng.integers(0, 6, n)
    doc_b = doc_a + rng.integers(1, 4, n)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(doc_a, pa.int64()),
            pa.array(np.where(rng.random(n) < 0.1, -1, doc_b), pa.int64()),  # a document's count rows among them
            pa.array(rng.integers(0, 50, n), pa.int64()),
            pa.array(rng.integers(0, 400, n), pa.int32()),
            pa.array(rng.integers(0, 400, n), pa.int32()),
        ],
        schema=SEED_ROWS,
    )


def _pairs(batches) -> list[tuple]:
    out = []
    for rows in pair_arrow(in_seed_order(batches), 2):
        for a, b, shared, seeds in zip(*(rows.column(c).to_pylist() for c in ("doc_a", "doc_b", "shared", "seeds")), strict=True):
            out.append((a, b, shared, [tuple(s.values()) for s in seeds]))
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


@pytest.mark.parametrize("seed", range(5))
def test_pair_tasks_give_the_same_pairs_whatever_order_the_seeds_come_in(seed):
    rng = np.random.default_rng(seed)
    table = pa.Table.from_batches([_seeds(rng, 600)])
    shuffled = table.take(pa.array(rng.permutation(table.num_rows)))
    cut = rng.integers(1, table.num_rows)
    got = _pairs([*shuffled.slice(0, cut).to_batches(), *shuffled.slice(cut).to_batches()])
    assert got == _pairs(table.to_batches())
    # a slow reference: per pair, its distinct hashes and its seeds in order of position
    seeds = [r for r in table.to_pylist() if r["doc_b"] >= 0]
    want = {}
    for r in seeds:
        want.setdefault((r["doc_a"], r["doc_b"]), []).append(r)
    expected = sorted(
        (a, b, len({r["hash"] for r in rs}), sorted((r["pos_a"], r["pos_b"]) for r in rs))
        for (a, b), rs in want.items()
        if len({r["hash"] for r in rs}) >= 2
    )
    pairs = [(a, b, n, s) for a, b, n, s in got if b >= 0]
    assert pairs == expected
    counts = sorted((a, n) for a, b, n, _ in got if b < 0)
    assert counts == sorted((r["doc_a"], r["hash"]) for r in table.to_pylist() if r["doc_b"] < 0)
