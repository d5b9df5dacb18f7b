"""The candidates stage on synthetic fingerprint tables: the boilerplate cap bounds the output, and
every pair below the cap is emitted with the right counts."""

from __future__ import annotations

import itertools
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from webwinnow import schemas
from webwinnow.analysis.boilerplate import auto_max_df
from webwinnow.app.cli import main
from webwinnow.config import RunConfig

from paths import CONF

pytestmark = pytest.mark.spark


def _write(out, table: str, rows: dict, schema: pa.Schema) -> None:
    (out / table).mkdir(parents=True)
    pq.write_table(pa.table(rows, schema=schema), out / table / "part-0.parquet")
    (out / table / "_webwinnow.json").write_text(json.dumps({"config": RunConfig().to_dict()}))


def _documents(out, ids: list[int]) -> None:
    n = len(ids)
    rows = {f.name: [None] * n for f in schemas.DOCUMENTS}
    rows.update(
        doc_id=ids,
        url=[f"http://h{i % 7}.test/{i}" for i in ids],
        status=["ok"] * n,
        text=["x"] * n,
        warc_offset=ids,
        html_bytes=[1] * n,
        text_chars=[1] * n,
    )
    _write(out, "documents", rows, schemas.DOCUMENTS)


def test_ten_thousand_documents_sharing_one_hash_stay_bounded(tmp_path):
    ids = list(range(1, 10_001))
    fp_doc, fp_hash, fp_pos = [], [], []
    for d in ids:  # every document has the boilerplate hash 777
        fp_doc.append(d), fp_hash.append(777), fp_pos.append(0)
    for d in ids[:60]:  # 60 documents share hash 5: 1,770 pairs, below the cap of 100
        fp_doc.append(d), fp_hash.append(5), fp_pos.append(10)
    for d, h in [(9000, 42), (9001, 42), (9001, 43), (9002, 43), (9000, 43)]:
        fp_doc.append(d), fp_hash.append(h), fp_pos.append(20)
    _documents(tmp_path, ids)
    _write(tmp_path, "fingerprints", {"doc_id": fp_doc, "hash": fp_hash, "pos": fp_pos}, schemas.FINGERPRINTS)
    assert main(["candidates", "--out", str(tmp_path), "--conf", str(CONF), "--max-df", "100"]) == 0
    pairs = pq.read_table(tmp_path / "candidate_pairs").to_pylist()
    got = {(p["doc_a"], p["doc_b"]): p for p in pairs}
    want = set(itertools.combinations(range(1, 61), 2)) | {(9000, 9001), (9001, 9002), (9000, 9002)}
    assert set(got) == want  # every pair sharing a hash below the cap, nothing from hash 777
    assert len(pairs) <= 100 * 99 // 2 + 3
    p = got[(9000, 9001)]
    assert (p["shared"], p["fp_a"], p["fp_b"]) == (2, 2, 2) and p["resemblance"] == 1.0
    p = got[(9001, 9002)]
    assert (p["shared"], p["fp_a"], p["fp_b"]) == (1, 2, 1)
    assert p["resemblance"] == 0.5 and p["containment_a"] == 0.5 and p["containment_b"] == 1.0
    assert p["url_a"] == "http://h6.test/9001"
    assert all(p["doc_a"] < p["doc_b"] for p in pairs)
    schema = pq.read_table(tmp_path / "candidate_pairs").schema
    assert [(f.name, f.type) for f in schema] == [(f.name, f.type) for f in schemas.CANDIDATE_PAIRS]
    seeds = {(r["doc_a"], r["doc_b"]): r["seeds"] for r in pq.read_table(tmp_path / "pair_seeds").to_pylist()}
    assert set(seeds) == want
    assert sorted((s["pos_a"], s["pos_b"]) for s in seeds[(9000, 9001)]) == [(20, 20), (20, 20)]

    # --min-shared filters
    assert main(["candidates", "--out", str(tmp_path), "--conf", str(CONF), "--max-df", "100", "--min-shared", "2"]) == 0
    assert {(p["doc_a"], p["doc_b"]) for p in pq.read_table(tmp_path / "candidate_pairs").to_pylist()} == {(9000, 9001)}


def test_auto_max_df():
    # sqrt rule with a floor of 10
    assert auto_max_df(50, [(2, 100)], 10**9) == 10
    assert auto_max_df(10_000, [(2, 100)], 10**9) == 100
    # lowered while the join would exceed the budget: 1,000 hashes in 50 documents cost 1.2 M rows
    assert auto_max_df(10_000, [(2, 100), (50, 1000)], 10**6) == 49
    # ... counting seed rows, not document pairs: 100 hashes in 2 documents, each 40 times in
    # each, make 100 · 80·79/2 = 316,000 rows, over a budget their 100 document pairs are far below
    assert auto_max_df(10_000, [(2, 100), (3, 5)], 10**5) == 100
    assert auto_max_df(10_000, [(2, 100), (3, 5)], 10**5, {2: 316_000}) == 1
    assert auto_max_df(10_000, [(2, 100), (3, 5)], 10**6, {2: 316_000, 3: 800_000}) == 2


def test_excluded_template_text_is_never_paired(tmp_path):
    """--exclude: fingerprints of known template text (MOSS's base files) are dropped first."""
    import webwinnow

    template = "This page is licensed under a Creative Commons Attribution Share Alike licence " * 3
    (tmp_path / "licence.txt").write_text(template)
    template_hashes, _ = webwinnow.kgram_hashes(template, 50)
    ids = [1, 2, 3, 4]
    _documents(tmp_path, ids)
    h = int(template_hashes[7])
    _write(
        tmp_path,
        "fingerprints",
        {"doc_id": [1, 2, 3, 4, 1], "hash": [h, h, 99, 99, 98], "pos": [0, 0, 5, 6, 9]},
        schemas.FINGERPRINTS,
    )
    assert main(["candidates", "--out", str(tmp_path), "--conf", str(CONF), "--max-df", "10"]) == 0
    assert {(p["doc_a"], p["doc_b"]) for p in pq.read_table(tmp_path / "candidate_pairs").to_pylist()} == {(1, 2), (3, 4)}
    assert (
        main(
            [
                "candidates",
                "--out",
                str(tmp_path),
                "--conf",
                str(CONF),
                "--max-df",
                "10",
                "--exclude",
                str(tmp_path / "licence.txt"),
            ]
        )
        == 0
    )
    pairs = pq.read_table(tmp_path / "candidate_pairs").to_pylist()
    assert {(p["doc_a"], p["doc_b"]) for p in pairs} == {(3, 4)}
    # the template no longer counts towards doc 1's fingerprints either
    record = json.loads((tmp_path / "candidate_pairs" / "_webwinnow.json").read_text())
    assert record["excluded_hashes"] == len(set(template_hashes.tolist()))


def test_boilerplate_hashes_read_on_the_driver_are_sparks(sample_run, spark_session, monkeypatch):
    import numpy as np

    from webwinnow.stages import candidates

    docs = pq.read_table(sample_run / "hash_freq").column("docs").to_numpy()
    for max_df in (1, 2, int(np.median(docs)), int(docs.max())):
        driver = candidates.boilerplate_array(spark_session, str(sample_run), max_df)
        spark = np.sort([r["hash"] for r in candidates.boilerplate_hashes(spark_session, str(sample_run), max_df).collect()])
        assert driver.dtype == np.int64 and driver.tolist() == spark.tolist() and len(driver) == (docs > max_df).sum()
        monkeypatch.setattr(candidates, "DRIVER_FREQ_ROWS", -1)  # past the bound: Spark's job
        assert candidates.boilerplate_array(spark_session, str(sample_run), max_df).tolist() == spark.tolist()
        monkeypatch.undo()


@pytest.mark.parametrize("max_repeats", [0, 2])
def test_seed_bounds_on_the_driver_equal_sparks(sample_run, spark_session, monkeypatch, max_repeats):
    import numpy as np

    from webwinnow.stages import candidates

    hf = pq.read_table(sample_run / "hash_freq")
    shared = hf.filter(pa.compute.greater_equal(hf.column("docs"), 2)).column("hash").to_numpy()
    for excluded in (None, np.sort(shared[::3])):
        driver = candidates.seed_bounds(spark_session, str(sample_run), lambda: None, excluded, max_repeats)
        monkeypatch.setattr(candidates, "DRIVER_HASHES", -1)
        spark = candidates.seed_bounds(spark_session, str(sample_run), lambda: None, excluded, max_repeats)
        monkeypatch.undo()
        assert driver == spark and sum(driver.values()) > 0


def test_candidate_pairs_built_on_the_driver_and_through_blobs_equal_sparks(tmp_path, spark_session):
    from webwinnow.stages._pairtable import WRITTEN, blob_candidates, driver_candidates, spark_candidates

    # every way a source is decided: times differing on each basis, equal times (a tie), a
    # malformed or missing time (no basis), a pair's page not in documents (no URL, no times),
    # a page with no count row (no pair), count rows summed over tasks
    times = {
        1: ("2020-01-02T00:00:00Z", "2019-05-01T10:00:00Z", None),
        2: ("2020-01-01T00:00:00Z", "2019-05-01T10:00:00Z", "2021-01-01T00:00:00Z"),
        3: (None, "2019-05-01T10:00:00Z", "2021-01-01T00:00:00Z"),
        4: (None, "2008-10-294T05:21:46-0700", "2021-01-01T00:00:00Z"),
        5: (None, "2019-05-01T10:00:00.5Z", "2020-12-31T23:59:59Z"),
        6: (None, "2019-05-01", None),
        7: (None, None, None),
        8: ("2020-01-01T00:00:00Z", "2019-05-01T10:00:00Z", "2021-01-01T00:00:00Z"),
    }
    ids = sorted(times)
    n = len(ids)
    rows = {f.name: [None] * n for f in schemas.DOCUMENTS}
    rows.update(
        doc_id=ids,
        url=[f"http://h.test/{i}" for i in ids],
        status=["ok"] * n,
        text=["x"] * n,
        warc_offset=ids,
        html_bytes=[1] * n,
        text_chars=[1] * n,
        last_modified=[times[i][0] for i in ids],
        fetch_time=[times[i][1] for i in ids],
        http_date=[times[i][2] for i in ids],
    )
    _write(tmp_path, "documents", rows, schemas.DOCUMENTS)
    counted = [1, 2, 3, 4, 5, 6, 7, 8, 9]  # 9 is in no documents table; 10 has no count
    count_rows = [(d, -1, 10 + d) for d in counted] + [(2, -1, 5), (9, -1, 1)]
    pair_rows = [(a, b, 1 + (a * b) % 4) for a, b in itertools.combinations([*counted, 10], 2)]
    counts = pa.table(
        {name: [r[i] for r in count_rows + pair_rows] for i, name in enumerate(("doc_a", "doc_b", "shared"))},
        schema=pa.schema([("doc_a", pa.int64()), ("doc_b", pa.int64()), ("shared", pa.int64())]),
    )
    got = driver_candidates(spark_session, str(tmp_path), counts)
    want = spark_candidates(spark_session, str(tmp_path), spark_session.createDataFrame(counts))
    key = lambda r: (r["doc_a"], r["doc_b"])  # noqa: E731
    want_rows = sorted(want.toArrow().to_pylist(), key=key)
    assert sorted(got.to_pylist(), key=key) == want_rows and got.schema.equals(WRITTEN)
    # beyond the driver's bounds: the counts as the pair tasks' parts, two exchanges of blobs
    parts, written = tmp_path / "counts", tmp_path / "written"
    parts.mkdir(), written.mkdir()
    for i, first in enumerate(range(0, counts.num_rows, 7)):  # count rows of a page in several parts
        pq.write_table(counts.slice(first, 7), parts / f"part-{i:05d}.parquet")
    for partitions in (1, 3):
        for old in written.glob("*"):
            old.unlink()
        rows = blob_candidates(spark_session, str(tmp_path), str(parts), str(written), partitions)
        blobs = pa.concat_tables([pq.read_table(f) for f in sorted(written.glob("*.parquet"))])
        assert rows == len(want_rows) and blobs.schema.equals(WRITTEN)
        assert sorted(blobs.to_pylist(), key=key) == want_rows
        for f in written.glob("*.parquet"):  # each part sorted by its pairs
            assert (lambda r: r == sorted(r))(list(map(key, pq.read_table(f).to_pylist())))
    assert len(want_rows) == 36  # the pairs of 9 counted pages; none of page 10
    seen = {(r["source"], r["source_basis"]) for r in want_rows}
    assert {("b", "last_modified"), ("a", "warc_date"), ("b", "warc_date"), ("unknown", None)} <= seen
    assert {s for s, _ in seen} >= {"a", "b", "tie", "unknown"} and any(r["url_b"] is None for r in want_rows)
