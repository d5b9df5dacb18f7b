"""The pairing kernels against the definition (tests/naive.py): every seed, every count, chunked or not."""

from __future__ import annotations

import numpy as np
import pytest

from webwinnow.analysis.pairing import first_repeats, hash_runs, kept_hash_counts, pair_runs, partition_seeds

import naive


def _fingerprints(rng, n_rows: int, n_docs: int, n_hashes: int):
    doc = rng.integers(0, n_docs, n_rows)
    h = rng.integers(-n_hashes, n_hashes, n_rows) * 7919  # negative hashes too
    pos = rng.integers(0, 5000, n_rows)
    rows = sorted(set(zip(doc.tolist(), h.tolist(), pos.tolist(), strict=True)), key=lambda r: (r[1], r[0], r[2]))
    return rows


def _arrays(rows):
    doc = np.array([r[0] for r in rows], np.int64)
    h = np.array([r[1] for r in rows], np.int64)
    pos = np.array([r[2] for r in rows], np.int32)
    return h, doc, pos


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk", [1, 7, 1 << 21])
def test_seeds_are_every_two_fingerprints_of_a_hash_below_the_cap(seed, chunk):
    rng = np.random.default_rng(seed)
    rows = _fingerprints(rng, 400, 30, 60)
    max_df = int(rng.integers(1, 8))
    h, doc, pos = _arrays(rows)
    got: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for s in partition_seeds(h, doc, pos, max_df, chunk=chunk):
        assert chunk >= 1 and (len(s.doc_a) <= chunk or len(set(s.hash.tolist())) == 1)
        for a, b, hh, pa, pb in zip(
            s.doc_a.tolist(), s.doc_b.tolist(), s.hash.tolist(), s.pos_a.tolist(), s.pos_b.tolist(), strict=True
        ):
            got.setdefault((a, b), []).append((hh, pa, pb))
    want = naive.pair_seeds(rows, max_df)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}


@pytest.mark.parametrize("seed", range(4))
def test_document_frequencies_and_kept_counts(seed):
    rng = np.random.default_rng(100 + seed)
    rows = _fingerprints(rng, 300, 20, 40)
    h, doc, pos = _arrays(rows)
    runs = hash_runs(h, doc)
    distinct = sorted(set(h.tolist()))
    assert len(runs.docs) == len(distinct)
    for g, value in enumerate(distinct):
        assert runs.docs[g] == len({d for d, hh, _ in rows if hh == value})
    max_df = 3
    docs, counts = kept_hash_counts(h, doc, max_df, runs)
    want: dict[int, int] = {}
    for d in {r[0] for r in rows}:
        kept = {hh for dd, hh, _ in rows if dd == d and len({x for x, y, _ in rows if y == hh}) <= max_df}
        if kept:
            want[d] = len(kept)
    assert dict(zip(docs.tolist(), counts.tolist(), strict=True)) == want


def test_pair_runs_count_distinct_hashes_and_keep_seed_rows():
    # pair (1, 2): hashes 5, 5, 9 → shared 2; pair (1, 3): hash 4 → shared 1; pair (2, 3): 7, 8, 7
    doc_a = np.array([1, 1, 1, 1, 2, 2, 2], np.int64)
    doc_b = np.array([2, 2, 2, 3, 3, 3, 3], np.int64)
    hashes = np.array([5, 9, 5, 4, 7, 8, 7], np.int64)
    runs = pair_runs(doc_a, doc_b, hashes, min_shared=2)
    assert runs.doc_a.tolist() == [1, 2] and runs.doc_b.tolist() == [2, 3]
    assert runs.shared.tolist() == [2, 2]
    assert runs.starts.tolist() == [0, 3, 6]
    assert runs.rows.tolist() == [0, 1, 2, 4, 5, 6]
    everything = pair_runs(doc_a, doc_b, hashes)
    assert everything.shared.tolist() == [2, 1, 2] and everything.rows.tolist() == list(range(7))


def test_empty_and_bad_input():
    empty = np.empty(0, np.int64)
    assert list(partition_seeds(empty, empty, np.empty(0, np.int32), 5)) == []
    assert len(pair_runs(empty, empty, empty).doc_a) == 0
    with pytest.raises(ValueError):
        list(partition_seeds(empty, empty, np.empty(0, np.int32), 0))
    with pytest.raises(ValueError):
        hash_runs(np.zeros(2, np.int64), np.zeros(3, np.int64))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("with_self", [False, True])
@pytest.mark.parametrize("chunk", [1, 5, 1 << 21])
def test_cross_seeds_pair_every_indexed_fingerprint_with_every_new_one_and_never_two_indexed(seed, with_self, chunk):
    from webwinnow.analysis.pairing import cross_seeds

    rng = np.random.default_rng(100 + seed)
    rows = _fingerprints(rng, 300, 24, 40)
    new_docs = set(rng.choice(24, 10, replace=False).tolist())
    rows = sorted(rows, key=lambda r: (r[1], r[0] in new_docs, r[0], r[2]))
    h, doc, pos = _arrays(rows)
    new = np.array([r[0] in new_docs for r in rows])
    got = sorted(
        (a, b, hh, pa, pb)
        for s in cross_seeds(h, doc, pos, new, with_self, chunk=chunk)
        for a, b, hh, pa, pb in zip(
            s.doc_a.tolist(), s.doc_b.tolist(), s.hash.tolist(), s.pos_a.tolist(), s.pos_b.tolist(), strict=True
        )
    )
    want = sorted(
        (d1, d2, h1, p1, p2)
        for d1, h1, p1 in rows
        for d2, h2, p2 in rows
        if h1 == h2
        and d1 != d2
        and ((d1 not in new_docs and d2 in new_docs) or (with_self and d1 in new_docs and d2 in new_docs and d1 < d2))
    )
    assert got == want and len(want) > 0


def test_cross_seeds_refuse_rows_not_sorted_by_side():
    from webwinnow.analysis.pairing import cross_seeds

    h = np.array([5, 5], np.int64)
    with pytest.raises(ValueError, match="sorted"):
        list(cross_seeds(h, np.array([1, 2], np.int64), np.zeros(2, np.int32), np.array([True, False])))


@pytest.mark.parametrize("cap", [0, 1, 2, 5])
def test_a_hash_seeds_from_its_first_repeats_in_each_document(cap):
    """first_repeats keeps, of every (hash, document), its first `cap` rows in position order
    (0: all), and the seeds of the kept rows are the definition's over those rows."""
    rng = np.random.default_rng(cap)
    rows = sorted(
        (int(d), int(h), int(p))
        for d, h, p in zip(rng.integers(0, 6, 600), rng.integers(0, 4, 600), rng.integers(0, 10_000, 600))
    )
    by_hash = sorted(rows, key=lambda r: (r[1], r[0], r[2]))
    h, doc, pos = _arrays(by_hash)
    keep = first_repeats(h, doc, cap)
    seen: dict[tuple[int, int], int] = {}
    want = []
    for d, hh, _ in by_hash:
        seen[(hh, d)] = seen.get((hh, d), 0) + 1
        want.append(cap == 0 or seen[(hh, d)] <= cap)
    assert keep.tolist() == want
    kept = [r for r, k in zip(by_hash, keep.tolist(), strict=True) if k]
    got: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for s in partition_seeds(h[keep], doc[keep], pos[keep], 10):
        for a, b, hh, pa, pb in zip(
            s.doc_a.tolist(), s.doc_b.tolist(), s.hash.tolist(), s.pos_a.tolist(), s.pos_b.tolist(), strict=True
        ):
            got.setdefault((a, b), []).append((hh, pa, pb))
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in naive.pair_seeds(kept, 10).items()}
    if cap:
        assert all(len(v) <= 4 * cap * cap for v in got.values())  # 4 hashes, at most cap² seeds each
