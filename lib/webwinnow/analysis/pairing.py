"""Pairing on sorted arrays: per-hash groups of fingerprints → seeds, per-pair groups of seeds → pairs.

The candidates stage shuffles the fingerprints once by hash and has Spark sort each partition by
(hash, doc_id, pos); every hash's rows are then one run, and the document pairs that share it
are every two rows of the run from different documents (MOSS's pairing, and the partition-aware
MinHash designs on Spark: no self-join, no row per pair of the whole run ever materialized
outside the run). Seeds are then sorted by (doc_a, doc_b, pos_a, pos_b), and each pair's run
gives its shared-hash count and its seed list. Kernels like the winnowing ones: private
``@njit`` functions on typed arrays, no I/O, wrapped by functions that check their input.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..core.distinct import distinct_counts
from ..core.jit import JIT_OPTIONS, njit

#: Seeds emitted per chunk: a run whose pairs alone exceed it is emitted whole.
SEED_CHUNK = 1 << 21


def _runs(*keys: np.ndarray) -> np.ndarray:
    """Start index of every run of equal keys (arrays sorted on them), plus len as the last entry."""
    n = len(keys[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
        for key in keys:
            change[1:] |= key[1:] != key[:-1]
    return np.append(np.flatnonzero(change), n).astype(np.int64)


@njit(**JIT_OPTIONS)
def _fill_seeds(docs, pos, hashes, starts, ends, out_a, out_b, out_h, out_pa, out_pb):
    """Every two rows of each run [starts[g], ends[g]) from different documents, doc_a < doc_b."""
    k = 0
    for g in range(starts.shape[0]):
        for i in range(starts[g], ends[g]):
            for j in range(i + 1, ends[g]):
                if docs[j] != docs[i]:  # sorted by document within the run: docs[j] > docs[i]
                    _put(k, i, j, docs, pos, hashes, out_a, out_b, out_h, out_pa, out_pb)
                    k += 1
    return k


@njit(**JIT_OPTIONS)
def _put(k, i, j, docs, pos, hashes, out_a, out_b, out_h, out_pa, out_pb):
    """Seed k: rows i and j (LLVM inlines it into the loops)."""
    out_a[k] = docs[i]
    out_b[k] = docs[j]
    out_h[k] = hashes[i]
    out_pa[k] = pos[i]
    out_pb[k] = pos[j]


@dataclass(frozen=True)
class HashRuns:
    """The runs of a (hash, doc_id, pos)-sorted chunk of fingerprints."""

    starts: np.ndarray  # run g is rows starts[g]:starts[g + 1]
    docs: np.ndarray  # distinct documents per run (document frequency)
    pairs: np.ndarray  # seeds per run: pairs of rows from different documents

    @property
    def rows(self) -> np.ndarray:
        return np.diff(self.starts)


def hash_runs(hashes: np.ndarray, doc_ids: np.ndarray) -> HashRuns:
    """Runs of equal hashes of fingerprints sorted by (hash, doc_id): document frequency and seeds each."""
    if hashes.shape != doc_ids.shape:
        raise ValueError("hashes and doc_ids must have the same length")
    starts = _runs(hashes)
    per_doc = _runs(hashes, doc_ids)  # (hash, doc) runs nest inside hash runs
    doc_run = np.searchsorted(per_doc, starts)  # index of each hash run's first (hash, doc) run
    docs = np.diff(doc_run)
    sizes = np.diff(per_doc)
    squares = np.concatenate([[0], np.cumsum(sizes * sizes)])
    rows = np.diff(starts)
    pairs = (rows * rows - (squares[doc_run[1:]] - squares[doc_run[:-1]])) // 2
    return HashRuns(starts=starts, docs=docs, pairs=pairs)


@dataclass(frozen=True)
class Seeds:
    doc_a: np.ndarray
    doc_b: np.ndarray
    hash: np.ndarray
    pos_a: np.ndarray
    pos_b: np.ndarray


def partition_seeds(
    hashes: np.ndarray,
    doc_ids: np.ndarray,
    positions: np.ndarray,
    max_df: int,
    runs: HashRuns | None = None,
    chunk: int = SEED_CHUNK,
) -> Iterator[Seeds]:
    """Seeds of fingerprints sorted by (hash, doc_id, pos): for every hash in 2..max_df documents,
    every two of its fingerprints in different documents (doc_a < doc_b), in chunks of about
    `chunk` seeds (a hash's seeds are never split)."""
    if not (hashes.shape == doc_ids.shape == positions.shape):
        raise ValueError("hashes, doc_ids and positions must have the same length")
    if max_df < 1:
        raise ValueError("max_df must be >= 1")
    runs = runs or hash_runs(hashes, doc_ids)
    keep = np.flatnonzero((runs.docs >= 2) & (runs.docs <= max_df))
    if not len(keep):
        return
    starts, ends, cost = runs.starts[keep], runs.starts[keep + 1], runs.pairs[keep]
    hashes = np.ascontiguousarray(hashes, np.int64)
    doc_ids = np.ascontiguousarray(doc_ids, np.int64)
    positions = np.ascontiguousarray(positions, np.int32)
    yield from _seed_chunks(
        cost,
        chunk,
        lambda lo, hi, out: _fill_seeds(
            doc_ids, positions, hashes, starts[lo:hi], ends[lo:hi], out.doc_a, out.doc_b, out.hash, out.pos_a, out.pos_b
        ),
    )


def _seed_chunks(cost: np.ndarray, chunk: int, fill) -> Iterator[Seeds]:
    """The seeds of runs with cost[g] seeds each, in chunks of about `chunk` (a run's never
    split): fill(lo, hi, out) writes the seeds of runs lo:hi into out and returns how many."""
    cumulative = np.cumsum(cost)
    lo = 0
    while lo < len(cost):
        base = cumulative[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(cumulative, base + chunk, side="right")))
        total = int(cumulative[hi - 1] - base)
        out = Seeds(
            np.empty(total, np.int64),
            np.empty(total, np.int64),
            np.empty(total, np.int64),
            np.empty(total, np.int32),
            np.empty(total, np.int32),
        )
        filled = fill(lo, hi, out)
        assert filled == total
        yield out
        lo = hi


@njit(**JIT_OPTIONS)
def _cross_counts(docs, side, starts, ends, with_self, out):
    """Seeds per run: (indexed, new) row pairs, and with_self (new, new) pairs of different documents."""
    for g in range(starts.shape[0]):
        first_new = starts[g]
        while first_new < ends[g] and side[first_new] == 0:
            first_new += 1
        n = (first_new - starts[g]) * (ends[g] - first_new)
        if with_self:
            for i in range(first_new, ends[g]):
                for j in range(i + 1, ends[g]):
                    if docs[j] != docs[i]:
                        n += 1
        out[g] = n


@njit(**JIT_OPTIONS)
def _fill_cross_seeds(docs, pos, hashes, side, starts, ends, with_self, out_a, out_b, out_h, out_pa, out_pb):
    """The seeds _cross_counts counts: doc_a the indexed document, doc_b the new one; new-new
    pairs with doc_a < doc_b."""
    k = 0
    for g in range(starts.shape[0]):
        first_new = starts[g]
        while first_new < ends[g] and side[first_new] == 0:
            first_new += 1
        for i in range(starts[g], first_new):
            for j in range(first_new, ends[g]):
                _put(k, i, j, docs, pos, hashes, out_a, out_b, out_h, out_pa, out_pb)
                k += 1
        if with_self:
            for i in range(first_new, ends[g]):
                for j in range(i + 1, ends[g]):
                    if docs[j] != docs[i]:
                        _put(k, i, j, docs, pos, hashes, out_a, out_b, out_h, out_pa, out_pb)
                        k += 1
    return k


def cross_seeds(
    hashes: np.ndarray,
    doc_ids: np.ndarray,
    positions: np.ndarray,
    new: np.ndarray,
    with_self: bool = False,
    chunk: int = SEED_CHUNK,
) -> Iterator[Seeds]:
    """Seeds of a check (new documents against indexed ones) from fingerprints sorted by (hash,
    new, doc_id, pos), boilerplate already removed: for every hash, every indexed fingerprint
    with every new one (doc_a indexed, doc_b new), and with_self every two new fingerprints of
    different documents (doc_a < doc_b). Never two indexed ones: the index was compared with
    itself when it was built, if at all. In chunks of about `chunk` seeds (a hash's never split)."""
    if not (hashes.shape == doc_ids.shape == positions.shape == new.shape):
        raise ValueError("hashes, doc_ids, positions and new must have the same length")
    starts_all = _runs(hashes)
    starts, ends = starts_all[:-1], starts_all[1:]
    side = np.ascontiguousarray(new, np.bool_).astype(np.int8)
    if len(side) and np.any(np.diff(side)[np.diff(hashes) == 0] < 0):
        raise ValueError("rows must be sorted by (hash, new, doc_id, pos)")
    doc_ids = np.ascontiguousarray(doc_ids, np.int64)
    cost = np.zeros(len(starts), np.int64)
    _cross_counts(doc_ids, side, starts, ends, with_self, cost)
    keep = np.flatnonzero(cost)
    if not len(keep):
        return
    starts, ends, cost = starts[keep], ends[keep], cost[keep]
    hashes = np.ascontiguousarray(hashes, np.int64)
    positions = np.ascontiguousarray(positions, np.int32)
    yield from _seed_chunks(
        cost,
        chunk,
        lambda lo, hi, out: _fill_cross_seeds(
            doc_ids,
            positions,
            hashes,
            side,
            starts[lo:hi],
            ends[lo:hi],
            with_self,
            out.doc_a,
            out.doc_b,
            out.hash,
            out.pos_a,
            out.pos_b,
        ),
    )


def first_repeats(hashes: np.ndarray, doc_ids: np.ndarray, cap: int) -> np.ndarray:
    """Of rows sorted by (hash, doc_id, ...), the first `cap` of every (hash, document) run: the
    occurrences of a hash in one document that seed passages (0: every one). A hash repeated
    through a page (a table's rows, "NUM , NUM ," in code tokens) otherwise makes occ_a·occ_b
    seeds per pair of pages; the span grown from an early repeat runs over the later ones."""
    if hashes.shape != doc_ids.shape:
        raise ValueError("hashes and doc_ids must have the same length")
    if cap < 0:
        raise ValueError("cap must be >= 0")
    if cap == 0:
        return np.ones(len(hashes), bool)
    starts = _runs(hashes, doc_ids)
    rank = np.arange(len(hashes)) - np.repeat(starts[:-1], np.diff(starts))
    return rank < cap


def kept_hash_counts(
    hashes: np.ndarray, doc_ids: np.ndarray, max_df: int, runs: HashRuns | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per document: its distinct hashes in at most max_df documents, among these sorted rows."""
    runs = runs or hash_runs(hashes, doc_ids)
    per_doc = _runs(hashes, doc_ids)[:-1]
    run_of = np.searchsorted(runs.starts, per_doc, side="right") - 1
    docs = doc_ids[per_doc[runs.docs[run_of] <= max_df]]
    return distinct_counts(docs)


@dataclass(frozen=True)
class PairRuns:
    """Pairs of a (doc_a, doc_b, pos_a, pos_b)-sorted chunk of seeds, each with its seed rows."""

    doc_a: np.ndarray
    doc_b: np.ndarray
    shared: np.ndarray  # distinct hashes the pair shares
    starts: np.ndarray  # pair i's seeds are rows starts[i]:starts[i + 1] of `rows`
    rows: np.ndarray  # indices into the input seeds, pair by pair


def pair_runs(doc_a: np.ndarray, doc_b: np.ndarray, hashes: np.ndarray, min_shared: int = 1) -> PairRuns:
    """Pairs of seeds sorted by (doc_a, doc_b, ...) that share at least min_shared distinct hashes."""
    if not (doc_a.shape == doc_b.shape == hashes.shape):
        raise ValueError("doc_a, doc_b and hashes must have the same length")
    starts = _runs(doc_a, doc_b)
    shared = _distinct_valid_per_run(np.ascontiguousarray(hashes, np.int64), np.ones(len(hashes), np.bool_), starts)
    keep = np.flatnonzero(shared >= min_shared)
    lengths = np.diff(starts)[keep]
    first = starts[keep]
    new_starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = (np.repeat(first - new_starts[:-1], lengths) + np.arange(new_starts[-1])).astype(np.int64)
    return PairRuns(doc_a=doc_a[first], doc_b=doc_b[first], shared=shared[keep], starts=new_starts, rows=rows)


@njit(**JIT_OPTIONS)
def _distinct_valid_per_run(values, valid, starts):
    """Distinct values among the valid rows of each run values[starts[g]:starts[g + 1]]."""
    out = np.zeros(starts.shape[0] - 1, dtype=np.int64)
    for g in range(starts.shape[0] - 1):
        lo, hi = starts[g], starts[g + 1]
        m = 0
        for i in range(lo, hi):
            if valid[i]:
                m += 1
        run = np.empty(m, dtype=np.int64)
        m = 0
        for i in range(lo, hi):
            if valid[i]:
                run[m] = values[i]
                m += 1
        run.sort()
        n = 1 if m else 0
        for i in range(1, m):
            if run[i] != run[i - 1]:
                n += 1
        out[g] = n
    return out


@dataclass(frozen=True)
class HashCounts:
    """Per hash of a (hash, doc_id, pos)-sorted chunk: how widespread, and its first occurrence."""

    hash: np.ndarray
    docs: np.ndarray
    occurrences: np.ndarray
    hosts: np.ndarray  # distinct hosts (rows without one not counted)
    doc_id: np.ndarray  # smallest document, and its first position
    pos: np.ndarray
    row: np.ndarray  # the chunk's row of that occurrence


def hash_counts(
    hashes: np.ndarray, doc_ids: np.ndarray, positions: np.ndarray, hosts: np.ndarray, has_host: np.ndarray
) -> HashCounts:
    """Document frequency, occurrences, distinct hosts and first (doc_id, pos) of every hash."""
    if not (hashes.shape == doc_ids.shape == positions.shape == hosts.shape == has_host.shape):
        raise ValueError("hashes, doc_ids, positions, hosts and has_host must have the same length")
    runs = hash_runs(hashes, doc_ids)
    first = runs.starts[:-1]
    host_counts = _distinct_valid_per_run(
        np.ascontiguousarray(hosts, np.int64), np.ascontiguousarray(has_host, np.bool_), runs.starts
    )
    return HashCounts(
        hash=hashes[first],
        docs=runs.docs.astype(np.int64),
        occurrences=runs.rows.astype(np.int64),
        hosts=host_counts,
        doc_id=doc_ids[first],
        pos=positions[first],
        row=first,
    )


#: The largest pair bitmap pair_min_df keeps (bits: one per ordered pair of documents).
PAIR_BITMAP_BITS = 1 << 31


def pair_min_df(doc_a: np.ndarray, doc_b: np.ndarray, df: np.ndarray, n_docs: int) -> np.ndarray | None:
    """The smallest document frequency among each document pair's shared hashes, one value per
    distinct pair (in no particular order), from rows (doc_a, doc_b, df) once per (pair, shared
    hash) with documents numbered 0..n_docs-1; None when the n_docs² bitmap of pairs it keeps is
    larger than PAIR_BITMAP_BITS (group the rows instead).

    The rows are visited in increasing df and a pair counted the first time it is seen: no
    grouping of the rows (a hash aggregation of 8 M seed rows took 2 CPU-s on the docs corpus)."""
    if not (doc_a.shape == doc_b.shape == df.shape):
        raise ValueError("doc_a, doc_b and df must have the same length")
    if n_docs * n_docs > PAIR_BITMAP_BITS:
        return None
    if len(df) and (min(int(doc_a.min()), int(doc_b.min())) < 0 or max(int(doc_a.max()), int(doc_b.max())) >= n_docs):
        raise ValueError("documents must be numbered 0..n_docs-1")
    small = len(df) and int(df.max()) < 1 << 16 and int(df.min()) >= 0
    order = np.argsort(df.astype(np.uint16) if small else df, kind="stable")  # a radix sort for 16 bits
    return _first_seen(
        np.ascontiguousarray(doc_a, np.int64),
        np.ascontiguousarray(doc_b, np.int64),
        np.ascontiguousarray(df, np.int64),
        order,
        n_docs,
    )


@njit(**JIT_OPTIONS)
def _first_seen(doc_a, doc_b, df, order, n_docs):
    seen = np.zeros((n_docs * n_docs + 63) // 64, np.uint64)
    out = np.empty(len(order), np.int64)
    n = 0
    for i in order:
        key = doc_a[i] * n_docs + doc_b[i]
        word = key >> 6
        bit = np.uint64(1) << np.uint64(key & 63)
        if seen[word] & bit == 0:
            seen[word] |= bit
            out[n] = df[i]
            n += 1
    return out[:n]


def pairs_by_min_df(docs: np.ndarray, df: np.ndarray, max_df: int, n_docs: int) -> np.ndarray | None:
    """How many distinct document pairs have each value 0..max_df as the smallest document
    frequency among the hashes they share (counts[m]; pairs sharing only hashes above max_df are
    not counted), from the distinct (hash, document) rows sorted by hash then document: `docs`
    their documents numbered 0..n_docs-1, `df` the documents of each hash, in hash order (its
    rows are the next df[g] of docs). None when the n_docs² bitmap of pairs is larger than
    PAIR_BITMAP_BITS.

    What pair_min_df gives from the seeds, without the seeds: each hash's documents are paired
    where they lie, hashes visited in increasing df, so no row per (pair, hash) is made, sorted
    or kept (10 M seeds took 2 CPU-s of the report's max_df sweep)."""
    if docs.ndim != 1 or df.ndim != 1:
        raise ValueError("docs and df must be one-dimensional")
    if int(df.sum()) != len(docs) or (len(df) and int(df.min()) < 1):
        raise ValueError("df must give every hash's documents: positive, summing to len(docs)")
    if max_df < 1:
        raise ValueError("max_df must be >= 1")
    if n_docs * n_docs > PAIR_BITMAP_BITS:
        return None
    if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= n_docs):
        raise ValueError("documents must be numbered 0..n_docs-1")
    df = np.ascontiguousarray(df, np.int64)
    starts = np.concatenate([[0], np.cumsum(df)[:-1]]).astype(np.int64) if len(df) else np.zeros(0, np.int64)
    paired = np.flatnonzero((df >= 2) & (df <= max_df))
    order = paired[np.argsort(df[paired], kind="stable")]
    return _pairs_by_min_df(np.ascontiguousarray(docs, np.int64), starts, df, order, max_df, n_docs)


@njit(**JIT_OPTIONS)
def _pairs_by_min_df(docs, starts, df, order, max_df, n_docs):
    seen = np.zeros((n_docs * n_docs + 63) // 64, np.uint64)
    counts = np.zeros(max_df + 1, np.int64)
    for g in order:
        m = df[g]
        s = starts[g]
        for i in range(s, s + m):
            base = docs[i] * n_docs  # documents ascend within a hash: docs[i] < docs[j]
            for j in range(i + 1, s + m):
                key = base + docs[j]
                word = key >> 6
                bit = np.uint64(1) << np.uint64(key & 63)
                if seen[word] & bit == 0:
                    seen[word] |= bit
                    counts[m] += 1
    return counts
