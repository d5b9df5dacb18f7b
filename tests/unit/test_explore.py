"""webwinnow.explore's arithmetic against brute force: the max_df sweep's pair thresholds, curves
from document frequencies, the fit's residuals, robust against standard winnowing."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.analysis.powerlaw import freq_of_freq_from_runs
from webwinnow.explore import Curve, fit_quality, pair_thresholds, robust_vs_standard
from webwinnow.explore.density import LOW_ENTROPY

from naive import doc_frequency_counts, pairs_under_cap


def _seeds(rows: list[tuple[int, int]]):
    """(doc_a, doc_b, df) once per (pair, shared hash), as max_df_sweep feeds pair_thresholds."""
    docs_of: dict[int, set[int]] = {}
    for h, d in rows:
        docs_of.setdefault(h, set()).add(d)
    a, b, df = [], [], []
    for docs in docs_of.values():
        for x in docs:
            for y in docs:
                if x < y:
                    a.append(x)
                    b.append(y)
                    df.append(len(docs))
    return np.array(a, np.int64), np.array(b, np.int64), np.array(df, np.int64)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 12)), max_size=150), st.integers(1, 4))
def test_pair_thresholds_give_the_pairs_of_every_cap(rows, min_shared):
    a, b, df = _seeds(rows)
    q = np.sort(pair_thresholds(a, b, df, min_shared))
    # documents numbered 0..12: pairs counted in a bitmap in order of frequency (min_shared 1)
    assert np.array_equal(np.sort(pair_thresholds(a, b, df, min_shared, n_docs=13)), q)
    for cap in range(1, 15):
        assert int(np.searchsorted(q, cap, side="right")) == len(pairs_under_cap(rows, cap, min_shared)), cap


def test_pair_min_df_keeps_no_bitmap_past_its_limit_and_checks_the_numbering():
    from webwinnow.analysis.pairing import PAIR_BITMAP_BITS, pair_min_df

    a, b, df = np.array([0, 1]), np.array([2, 2]), np.array([5, 3])
    assert sorted(pair_min_df(a, b, df, 3).tolist()) == [3, 5]
    assert pair_min_df(a, b, df, int(PAIR_BITMAP_BITS**0.5) + 1) is None
    with pytest.raises(ValueError, match="numbered"):
        pair_min_df(a, b, df, 2)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 12)), max_size=150), st.integers(1, 14))
def test_pairs_by_min_df_pair_each_hashs_documents_as_the_seeds_do(rows, top):
    from webwinnow.analysis.pairing import pairs_by_min_df

    distinct = sorted(set(rows))  # by hash, then document, once each
    docs = np.array([d for _, d in distinct], np.int64)
    df = np.array(list(Counter(h for h, _ in distinct).values()), np.int64)  # hash order: Counter keeps it
    counts = pairs_by_min_df(docs, df, top, 13)
    assert counts.shape == (top + 1,) and counts[:2].sum() == 0
    reached = np.cumsum(counts)
    for cap in range(1, top + 1):
        assert reached[cap] == len(pairs_under_cap(rows, cap, 1)), cap
    # the pairs above the cap are not counted, whatever they share below it
    a, b, seed_df = _seeds(rows)
    under = seed_df <= top
    expected = np.bincount(pair_thresholds(a[under], b[under], seed_df[under], 1), minlength=top + 1)
    assert np.array_equal(counts, expected[: top + 1])


def test_pairs_by_min_df_keep_no_bitmap_past_its_limit_and_check_their_input():
    from webwinnow.analysis.pairing import PAIR_BITMAP_BITS, pairs_by_min_df

    docs, df = np.array([0, 2, 1, 2]), np.array([2, 2])
    assert pairs_by_min_df(docs, df, 2, 3).tolist() == [0, 0, 2]
    assert pairs_by_min_df(docs, df, 2, int(PAIR_BITMAP_BITS**0.5) + 1) is None
    with pytest.raises(ValueError, match="numbered"):
        pairs_by_min_df(docs, df, 2, 2)
    with pytest.raises(ValueError, match="summing"):
        pairs_by_min_df(docs, np.array([3, 2]), 2, 3)
    with pytest.raises(ValueError, match="max_df"):
        pairs_by_min_df(docs, df, 0, 3)


def test_pair_thresholds_take_the_min_shared_th_smallest_frequency():
    a = np.array([1, 1, 1, 2], np.int64)
    b = np.array([5, 5, 5, 7], np.int64)
    df = np.array([9, 3, 6, 4], np.int64)
    assert sorted(pair_thresholds(a, b, df, 1).tolist()) == [3, 4]
    assert pair_thresholds(a, b, df, 2).tolist() == [6]  # pair (2, 7) shares one hash only
    assert pair_thresholds(a, b, df, 3).tolist() == [9]


def test_a_curve_from_document_frequencies_matches_counting():
    rng = random.Random(7)
    docs = [[rng.randrange(300) for _ in range(rng.randrange(1, 60))] for _ in range(40)]
    expected = doc_frequency_counts(docs)
    frequencies = np.array(list(expected.keys()), np.int64).repeat(list(expected.values()))
    curve = Curve.of_counts("test", frequencies, len(docs))
    assert freq_of_freq_from_runs(curve.runs) == expected
    assert curve.shares["hashes"] == sum(expected.values())
    assert curve.shares["once"] == pytest.approx(expected.get(1, 0) / sum(expected.values()))


def test_the_fit_quality_of_an_exact_power_law_is_flat():
    # docs = 1000 * rank^-0.7, rounded: the residuals stay within rounding, R² near 1
    fof: dict[int, int] = {}
    for rank in range(1, 30_000):  # down to docs = 1 past rank ~19,000
        d = max(1, round(1000 * rank**-0.7))
        fof[d] = fof.get(d, 0) + 1
    curve = Curve.of_counts("law", np.array(list(fof.keys())).repeat(list(fof.values())), 1000)
    quality = fit_quality(curve)
    assert quality.slope == pytest.approx(-0.7, abs=0.03)
    assert quality.r2 > 0.99
    assert abs(quality.worst[2]) < 0.2
    assert quality.tail is not None and quality.tail[2] == 1  # the hashes of one document: not fitted


def test_robust_winnowing_keeps_low_entropy_text_sparse():
    frame = robust_vs_standard(None, w=100, k=50).set_index("text")
    for name in LOW_ENTROPY:
        row = frame.loc[name]
        assert row.robust_density <= 1.5 / 100  # one per window length, about 1/w
    # a single repeated character: every shift has a new rightmost minimum for standard winnowing
    assert frame.loc["one letter repeated"].standard_density > 0.95
    assert frame.loc["two letters alternating"].standard_density > 0.45


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.booleans()), max_size=120, unique_by=lambda r: r[0]),
    st.integers(1, 40),
    st.integers(1, 30),
    st.booleans(),
)
def test_a_sample_is_read_one_row_group_at_a_time_with_the_rows_a_whole_read_gives(tmp_path_factory, rows, n, group, stats):
    """smallest_doc_ids and read_doc_rows, which skip row groups by their doc_id statistics, give
    what reading the whole table and filtering it gives: the n smallest ok ids, and every row of
    the ids asked for (with or without statistics in the files)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from webwinnow.outputs.tables import read_doc_rows, smallest_doc_ids

    out = tmp_path_factory.mktemp("run")
    (out / "documents").mkdir()
    table = pa.table(
        {
            "doc_id": pa.array([d for d, _ in rows], pa.int64()),
            "status": ["ok" if ok else "failed" for _, ok in rows],
            "text": [f"text of {d}" for d, _ in rows],
        }
    )
    half = len(rows) // 2  # two files, several row groups each
    for i, part in enumerate((table.slice(0, half), table.slice(half))):
        pq.write_table(part, out / "documents" / f"part-{i}.parquet", row_group_size=group, write_statistics=stats)
    ok = sorted(d for d, good in rows if good)
    assert smallest_doc_ids(str(out), n).tolist() == ok[:n]
    asked = [d for d, _ in rows][::3] + [12345]  # and one id no row has
    got = [r for t in read_doc_rows(str(out), "documents", asked, ["text"]) for r in t.to_pylist()]
    assert sorted((r["doc_id"], r["text"]) for r in got) == sorted((d, f"text of {d}") for d, _ in rows if d in set(asked))
    assert all(set(r) == {"doc_id", "text"} for r in got)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 400)), max_size=150, unique_by=lambda r: r[:2]
    ),
    st.integers(1, 20),
    st.integers(1, 30),
)
def test_the_figures_summaries_of_pairs_and_passages_do_not_depend_on_how_the_rows_are_grouped(
    tmp_path_factory, rows, group, cap
):
    """passage_length_counts counts every passage once; pair_sample keeps every pair when they are
    few, and beyond max_pairs the same pairs whatever the row groups (the smallest keys)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from webwinnow.explore import RunOutput, pair_sample, passage_length_counts

    samples = []
    for size in (group, 1000):
        out = tmp_path_factory.mktemp("run")
        for name in ("pairs", "passages", "documents"):
            (out / name).mkdir()
        pairs = pa.table(
            {
                "doc_a": pa.array([a for a, _, _ in rows], pa.int64()),
                "doc_b": pa.array([b for _, b, _ in rows], pa.int64()),
                "resemblance": [n / 400 for *_, n in rows],
                "containment_a": [0.5] * len(rows),
                "containment_b": [1.0] * len(rows),
            }
        )
        pq.write_table(pairs, out / "pairs" / "part-0.parquet", row_group_size=size)
        lengths = pa.table({"length": pa.array([n for *_, n in rows], pa.int32())})
        pq.write_table(lengths, out / "passages" / "part-0.parquet", row_group_size=size)
        run = RunOutput(str(out), tables_in=str(out))
        values, counts = passage_length_counts(run)
        assert dict(zip(values.tolist(), counts.tolist(), strict=True)) == dict(Counter(n for *_, n in rows))
        every, total = pair_sample(run, max_pairs=len(rows) + 1)
        assert total == len(rows) and sorted(every["resemblance"]) == sorted(n / 400 for *_, n in rows)
        some, total = pair_sample(run, max_pairs=cap)
        assert total == len(rows) and len(some) == min(cap, len(rows))
        samples.append(some["resemblance"].tolist())
    assert samples[0] == samples[1]
