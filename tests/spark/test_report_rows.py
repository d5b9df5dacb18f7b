"""The report's queries on the driver against the same queries in Spark, on random tables built
to hit every tie and null the orders have to settle: nulls and NaN among the sort keys, equal
keys settled by the next one, failed files and record outcomes with null reasons, clusters of
equal size, a cluster's source beyond its first members, members missing from documents, and
tables spread over several files of several row groups."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reportpaths import report_rows_both_ways

from webwinnow import schemas, storage
from webwinnow.config import load_config
from webwinnow.outputs.tables import finish_table, stage_table

pytestmark = pytest.mark.spark


def _value(rng: random.Random, kind: pa.DataType, null_share: float = 0.2):
    if rng.random() < null_share:
        return None
    if pa.types.is_integer(kind):
        return rng.randint(0, 5)
    if pa.types.is_floating(kind):
        return rng.choice([0.0, 0.5, 1.0, float("nan")])
    if pa.types.is_boolean(kind):
        return rng.random() < 0.5
    if pa.types.is_string(kind):
        return rng.choice(["a", "b", "c"])
    return None


def _write(out: str, name: str, rows: list[dict], rng: random.Random) -> None:
    """The rows as a complete table in three files of row groups of 7 rows, in random order."""
    schema = schemas.TABLE_SCHEMAS[name]
    cfg = load_config([])
    folder = stage_table(out, name)
    rng.shuffle(rows)
    third = len(rows) // 3 + 1
    for i in range(3):
        part = pa.Table.from_pylist(rows[i * third : (i + 1) * third], schema=schema)
        pq.write_table(part, storage.child(folder, f"part-{i:05d}.parquet"), row_group_size=7)
    finish_table(out, name, cfg, "report-test")


def _random_run(out: str, seed: int) -> None:
    rng = random.Random(seed)
    hosts = ["http://a.example/x", "http://A.example/y", "http://b.example/", "mailto:someone", None]
    docs = list(range(1, 60))
    present = [d for d in docs if rng.random() < 0.9]  # some members and pair sides have no documents row
    _write(
        out,
        "documents",
        [
            {
                "doc_id": d,
                "url": rng.choice(hosts),
                "warc_file": f"f{d % 3}.warc.gz",
                "warc_offset": d * 100,
                "status": "ok",
                "fetch_time": rng.choice([None, "2020-01-01T00:00:00Z", "2021-01-01T00:00:00Z"]),
                "text": f"text of {d} " * 5,
            }
            for d in present
        ],
        rng,
    )
    pairs = set()
    while len(pairs) < 150:
        a, b = sorted(rng.sample(docs, 2))
        pairs.add((a, b))
    rows = []
    for a, b in sorted(pairs):
        row = {f.name: _value(rng, f.type) for f in schemas.PAIRS}
        row.update(doc_a=a, doc_b=b, url_a=rng.choice(hosts), url_b=rng.choice(hosts))
        rows.append(row)
    _write(out, "pairs", rows, rng)
    passages = []
    for a, b in sorted(pairs):
        for _ in range(rng.randint(0, 2)):
            row = {f.name: _value(rng, f.type, 0.0) for f in schemas.PASSAGES}
            row.update(doc_a=a, doc_b=b)
            passages.append(row)
    _write(out, "passages", passages, rng)
    template = []
    for a in docs:
        row = {f.name: _value(rng, f.type) for f in schemas.TEMPLATE_PAIRS}
        row.update(doc_a=a, doc_b=a + 100, reason=rng.choice(["template", "no_passage"]))
        template.append(row)
    _write(out, "template_pairs", template, rng)
    _write(
        out,
        "hash_freq",
        [
            {"hash": h, "docs": rng.randint(1, 4), "occurrences": rng.randint(1, 3), "hosts": 1, "doc_id": 1, "snippet": "s"}
            for h in range(-40, 40)
        ],
        rng,
    )
    ledger = []
    for i in range(30):
        ledger.append(
            {
                "kind": "file",
                "file": f"file-{rng.randint(0, 10**6)}-{i}",
                "status": rng.choice(["read_ok", "failed", "empty"]),
                "reason": rng.choice([None, "truncated", "not_a_crawl_file"]),
                "records_seen": i,
                "parsed": 0,
            }
        )
        ledger.append(
            {
                "kind": "record",
                "file": "x",
                "status": rng.choice(["skipped", "failed", None]),
                "reason": rng.choice([None, "non_html", "bad_gzip"]),
            }
        )
    _write(out, "ledger", ledger, rng)
    clusters = []
    members = docs[:]
    rng.shuffle(members)
    at = 0
    while at < len(members):
        size = rng.choice([2, 3, 3, 25])  # equal sizes tie; a 25-member cluster shows 20 and its source
        group = sorted(members[at : at + size])
        at += size
        source = rng.choice(group)
        for d in group:
            clusters.append(
                {
                    "doc_id": d,
                    "cluster_id": group[0],
                    "cluster_size": len(group),
                    "identical": rng.randint(1, 2),
                    "source_doc": source,
                }
            )
    _write(out, "clusters", clusters, rng)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_report_rows_on_the_driver_equal_sparks_on_random_tables(tmp_path, spark_session, monkeypatch, seed):
    out = str(tmp_path / "out")
    _random_run(out, seed)
    got = report_rows_both_ways(spark_session, tmp_path / "out", monkeypatch)
    top, total = got["top"]
    assert total == 150 and len(top) == 150
    assert got["pages"].failed_files and got["pages"].record_outcomes and got["pages"].clusters
    assert any(c.size == 25 and len(c.members) <= 20 for c in got["pages"].clusters)


@pytest.mark.parametrize("seed", [1, 2])
def test_passage_statistics_on_the_driver_equal_sparks(tmp_path, spark_session, monkeypatch, seed):
    from webwinnow.stages import passages

    out = str(tmp_path / "out")
    _random_run(out, seed)
    driver = passages.passage_stats(spark_session, out)
    monkeypatch.setattr(passages, "DRIVER_STATS_ROWS", -1)
    assert passages.passage_stats(spark_session, out) == driver
    row, reasons = driver
    # NaN shares count as boilerplate (Spark orders NaN above every number), nulls are left out
    assert row["passages"] > row["boilerplate"] > 0 and set(reasons) == {"template", "no_passage"}
