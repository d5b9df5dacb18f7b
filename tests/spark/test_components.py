"""Connected components in Spark (large-star / small-star) against a flood fill, on the graphs
that break such algorithms: long chains, stars, many small components, repeated edges and
self-loops; and the clusters stage's Spark path against its driver path on the sample."""

from __future__ import annotations

import random
import shutil

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webwinnow.stages._components import NotConverged, spark_components

from naive import components_of


def _labels(spark, edges):
    frame = spark.createDataFrame(edges or [(0, 0)][:0], "a long, b long")
    labels, rounds = spark_components(frame)
    return {r["doc_id"]: r["cluster_id"] for r in labels.collect()}, rounds


def _want(edges):
    return {node: first for node, (first, _) in components_of(edges).items()}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(-30, 60), st.integers(-30, 60)), max_size=80))
def test_components_equal_a_flood_fill_on_random_graphs(spark_session, edges):
    got, _ = _labels(spark_session, edges)
    assert got == _want(edges)


def test_chains_stars_and_small_components_in_few_rounds(spark_session):
    rng = random.Random(5)
    ids = rng.sample(range(-(10**12), 10**12), 16_000)
    chain = ids[:10_000]
    edges = [(chain[i], chain[i + 1]) for i in range(len(chain) - 1)]
    hub = ids[10_000]
    edges += [(hub, x) for x in ids[10_001:12_000]]  # a star of 2,000
    edges += [(ids[i], ids[i + 1]) for i in range(12_000, 16_000 - 1, 2)]  # 2,000 pairs
    edges += [(x, x) for x in ids[12_000:12_100]] + edges[:50]  # self-loops, repeated edges
    rng.shuffle(edges)
    got, rounds = _labels(spark_session, edges)
    assert got == _want(edges)
    assert len(set(got.values())) == 1 + 1 + 2_000
    assert 1 <= rounds <= 20  # logarithmic in the chain's length


def test_rounds_are_bounded(spark_session):
    chain = [(i, i + 1) for i in range(200)]
    frame = spark_session.createDataFrame(chain, "a long, b long")
    with pytest.raises(NotConverged, match="did not converge in 1 rounds"):
        spark_components(frame, max_rounds=1)


def test_the_clusters_stage_in_spark_gives_the_drivers_table(sample_run, tmp_path):
    from webwinnow.app.cli import main

    from paths import CONF

    out = tmp_path / "out"
    shutil.copytree(sample_run, out)
    spark_conf = tmp_path / "spark.toml"
    spark_conf.write_text("[clusters]\ndriver_edges = 0\n")
    assert main(["clusters", "--out", str(out), "--conf", str(CONF), "--conf", str(spark_conf), "-q"]) == 0
    before = pq.read_table(sample_run / "clusters")
    after = pq.read_table(out / "clusters")
    assert after.schema == before.schema
    keys = [(name, "ascending") for name in before.column_names]
    assert after.sort_by(keys).equals(before.sort_by(keys)) and before.num_rows > 0
    import json

    stats = json.loads((out / "clusters" / "_webwinnow.json").read_text())["stats"]
    assert stats["components"] == "spark" and stats["rounds"] >= 0
    assert json.loads((sample_run / "clusters" / "_webwinnow.json").read_text())["stats"]["components"] == "driver"


@pytest.mark.parametrize("stored", [True, False])
def test_identical_texts_keyed_on_the_driver_are_sparks_groups(spark_session, sample_run, monkeypatch, stored):
    """The same groups whichever way the texts are keyed: from the keys the run's extract tasks
    kept beside doc_stats (stored), or from the texts again, on the driver, by Python tasks, or
    in Spark."""
    from webwinnow.stages import clusters
    from webwinnow.stages.clusters import identical_groups, identical_on_driver, stored_text_keys

    keys = [("doc_id", "ascending")]
    assert stored_text_keys(str(sample_run)), "the run's extract tasks kept the texts' keys"
    if not stored:
        monkeypatch.setattr(clusters, "stored_text_keys", lambda out: None)
    driver = identical_on_driver(str(sample_run))
    # keyed by Python tasks, one per documents file, grouped on the driver (a run's way)
    tasks = identical_on_driver(str(sample_run), spark_session)
    spark = identical_groups(spark_session, str(sample_run)).toArrow().cast(driver.schema)
    assert driver.num_rows > 0 and driver.sort_by(keys).equals(spark.sort_by(keys))
    assert tasks.equals(driver)
    monkeypatch.setattr(clusters, "stored_text_keys", lambda out: None)
    assert identical_on_driver(str(sample_run)).equals(driver)


def test_text_keys_are_used_only_while_doc_stats_is_current(sample_run, tmp_path):
    """Keys kept beside a doc_stats made from older documents, or by a webwinnow that kept none,
    are not used: the texts are keyed again."""
    import json
    import shutil

    from webwinnow.stages.clusters import stored_text_keys

    out = tmp_path / "run"
    shutil.copytree(sample_run, out, symlinks=True)
    assert stored_text_keys(str(out))
    meta = out / "doc_stats" / "_webwinnow.json"
    record = json.loads(meta.read_text())
    record.pop("text_keys")
    meta.write_text(json.dumps(record))
    assert stored_text_keys(str(out)) is None
    record["text_keys"] = "_text_keys"
    meta.write_text(json.dumps(record))
    assert stored_text_keys(str(out))
    record["reads"] = {**record["reads"], "documents": "made-from-other-documents"}
    meta.write_text(json.dumps(record))
    assert stored_text_keys(str(out)) is None


@pytest.mark.parametrize("driver_edges", [None, 0])
def test_the_clusters_stage_with_texts_keyed_in_spark_gives_the_same_table(sample_run, tmp_path, monkeypatch, driver_edges):
    import json

    from webwinnow.app.cli import main
    from webwinnow.stages import clusters

    from paths import CONF

    monkeypatch.setattr(clusters, "DRIVER_KEYED_DOCS", -1)
    out = tmp_path / "out"
    shutil.copytree(sample_run, out)
    conf = tmp_path / "edges.toml"
    conf.write_text("" if driver_edges is None else f"[clusters]\ndriver_edges = {driver_edges}\n")
    assert main(["clusters", "--out", str(out), "--conf", str(CONF), "--conf", str(conf), "-q"]) == 0
    before, after = pq.read_table(sample_run / "clusters"), pq.read_table(out / "clusters")
    keys = [(name, "ascending") for name in before.column_names]
    assert after.schema == before.schema and after.sort_by(keys).equals(before.sort_by(keys)) and before.num_rows > 0
    stats = json.loads((out / "clusters" / "_webwinnow.json").read_text())["stats"]
    want = json.loads((sample_run / "clusters" / "_webwinnow.json").read_text())["stats"]
    assert {k: v for k, v in stats.items() if k not in ("components", "rounds")} == {
        k: v for k, v in want.items() if k not in ("components", "rounds")
    }
