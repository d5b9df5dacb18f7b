"""webwinnow.explore on the sample run (read with pyarrow, no Spark): each analysis agrees with
the stage that made the table it recomputes, and with brute force; the report links its figures."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from webwinnow.analysis.powerlaw import freq_of_freq_from_runs
from webwinnow.core.winnowing import normalize
from webwinnow.errors import UserError
from webwinnow.explore import (
    RunOutput,
    boilerplate_by_host,
    density_by_w,
    fingerprint_curve,
    host_of,
    max_df_sweep,
    pair_passages,
    sample_curves,
    top_pairs,
)
from webwinnow.explore.figures import FIGURES
from webwinnow.outputs.tables import table_meta

from naive import pairs_under_cap

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def run(sample_run) -> RunOutput:
    return RunOutput(sample_run)


def test_the_max_df_sweep_counts_the_pairs_the_pairs_stage_emits(run):
    sweep = max_df_sweep(run)
    at = dict(zip(sweep.max_df, sweep.pairs, strict=True))
    assert sweep.chosen == run.stats("candidate_pairs")["max_df"] and sweep.chosen_auto
    assert at[sweep.chosen] == run.rows("candidate_pairs")  # the run's own cap gives its candidate pairs
    rows = list(
        zip(*(run.table("fingerprints", ["hash", "doc_id"]).column(c).to_pylist() for c in ("hash", "doc_id")), strict=True)
    )
    for cap in (2, sweep.chosen, sweep.max_df[-1]):
        assert at[cap] == len(pairs_under_cap(rows, cap, sweep.min_shared)), cap
    assert sweep.pairs == sorted(sweep.pairs)  # a higher cap never loses a pair
    assert sweep.boilerplate_share[-1] == 0.0 and sweep.boilerplate_hashes[-1] == 0
    # a sample of documents: the sweep of those documents' fingerprints alone
    small = max_df_sweep(run, max_docs=60)
    assert small.sample == 60 and small.pairs[-1] <= sweep.pairs[-1]


def test_recomputed_fingerprints_give_the_runs_own_curve(run):
    kgrams, fingerprints = sample_curves(run, None)  # every document: the fingerprint stage's work again
    own = fingerprint_curve(run)
    assert fingerprints.runs == own.runs
    assert fingerprints.fit["slope"] == pytest.approx(own.fit["slope"])
    assert kgrams.shares["hashes"] > own.shares["hashes"]  # winnowing keeps a sample of the k-grams
    per_doc = run.frame("fingerprints", ["doc_id", "hash"]).groupby("doc_id")["hash"].nunique()
    assert sum(d * n for d, n in freq_of_freq_from_runs(own.runs).items()) == per_doc.sum()
    # the k-grams' curve counts each document's distinct k-grams, counted once for the sample
    found = run.sample_frequencies(None)
    df, distinct = found
    assert distinct.tolist() == [len(set(h.tolist())) for _, h in run.sample_kgrams(None)]
    assert sum(d * n for d, n in freq_of_freq_from_runs(kgrams.runs).items()) == distinct.sum() == df.sum()
    assert run.sample_frequencies(None) is found


def test_density_at_the_runs_window_is_the_runs_density(run):
    frame = density_by_w(run, ws=(10, run.winnow["w"], 200), max_docs=None).set_index("w")
    stats = run.frame("doc_stats")
    assert frame.loc[run.winnow["w"], "fingerprints"] == stats.fingerprints.sum()
    assert frame.loc[run.winnow["w"], "kgrams"] == stats.kgrams.sum()
    assert (frame.density >= frame.lower_bound).all()
    assert frame.density.is_monotonic_decreasing


def test_boilerplate_hosts_are_the_documents_holding_each_hash(run):
    frame = boilerplate_by_host(run, top=5, hosts_per_hash=100)
    fp = run.frame("fingerprints", ["hash", "doc_id"])
    urls = run.urls(fp.doc_id.unique())
    for h, rows in frame.groupby("hash"):
        holders = set(fp.doc_id[fp.hash == h])
        expected = Counter(host_of(urls[d]) for d in holders)
        assert dict(zip(rows.host, rows.host_docs, strict=True)) == dict(expected)
        assert rows.docs.iloc[0] == len(holders) and rows.hosts.iloc[0] == len(expected)
    assert frame.hash.nunique() == 5


def test_a_pairs_passages_are_the_same_normalized_text_on_both_sides(run):
    top = top_pairs(run, 3)
    content = top[["content_chars_a", "content_chars_b"]].min(axis=1)
    assert len(top) == 3 and content.is_monotonic_decreasing
    everything = run.frame("pairs")
    assert content.iloc[0] == everything[["content_chars_a", "content_chars_b"]].min(axis=1).max()
    for doc_a, doc_b in zip(top.doc_a, top.doc_b, strict=True):
        passages = pair_passages(run, doc_a, doc_b)
        assert passages
        for p in passages:
            assert normalize(p.text_a)[0] == normalize(p.text_b)[0]
            assert len(normalize(p.text_a)[0]) == p.length


def test_an_output_that_is_not_a_run_is_one_clear_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        RunOutput(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="holds no webwinnow tables"):
        RunOutput(tmp_path / "empty")


def test_the_report_links_every_figure_it_drew(sample_run):
    report = sample_run / "report"
    page = (report / "figures.html").read_text()
    linked = set(re.findall(r'<img class="plot" src="figures/([^"]+)"', page))
    assert linked == {spec.name for spec in FIGURES}
    for name in linked:
        assert (report / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Not drawn" not in page
    assert 'href="figures.html"' in (report / "index.html").read_text()
    # the run began them all before the report: the sample's as candidates ended, the others and
    # the boilerplate page's plot as passages ended
    drawn = table_meta(sample_run, "report")["stats"]["figures_drawn"]
    assert drawn == {"begun early": sorted({*linked, "rank_frequency.png"})}


def test_the_figures_spark_tasks_draw_are_the_drivers_and_a_failed_task_leaves_them_to_the_driver(
    sample_run, spark_session, tmp_path
):
    """The figures are begun in Spark tasks as soon as their tables are made (the sample's after
    candidates, beside passages; the others after passages, beside clusters), or by the report
    stage's own tasks (the report run alone), while the driver writes its pages: the same PNGs,
    byte for byte, as drawn on the driver; when the task fails (an executor without matplotlib),
    the driver draws them and says so."""
    from webwinnow.explore.figures import figure_names, write_figures
    from webwinnow.htmlreport.plot import rank_frequency_png
    from webwinnow.stages._faults import SETTING
    from webwinnow.stages._reportfigures import RANK_PLOT, Figures, SparkFigures, early_figures, rank_of

    run = RunOutput(sample_run)
    curve = run.table("rank_freq").sort_by("rank")
    runs = list(zip(*(curve.column(c).to_pylist() for c in ("rank", "rank_last", "docs", "hashes")), strict=True))
    rank = (runs, run.stats("hash_freq").get("fit"), run.stats("candidate_pairs")["max_df"])
    assert rank_of(str(sample_run)) == rank
    plot = rank_frequency_png(*rank)
    driver = write_figures(run, tmp_path / "driver", max_docs=300)
    assert not any(entry.error for entry in driver)
    pngs = {spec.name: (tmp_path / "driver" / spec.name).read_bytes() for spec in FIGURES}
    # every figure's tables are made once passages is; after hash_freq, the sample's and the curve's
    assert early_figures(("clusters", "report")) == figure_names()
    assert early_figures(("candidates", "passages", "clusters", "report")) == {
        "rank_frequency_kgrams.png", "fit_residuals.png", "gaps.png", "density_by_w.png", "robust.png"
    }  # fmt: skip
    from webwinnow.stages._reportrows import top_hashes

    hashes = top_hashes(None, str(sample_run), 50)
    assert len(hashes) == 50
    begun = SparkFigures(spark_session, str(sample_run), 300, figure_names(), rank, group="report", hashes=50)
    early = Figures(spark_session, str(sample_run), 300, [begun], hashes=50)
    assert len(early.sources) == 1, "nothing left for a task of the report's own"
    assert early.rank_plot() == plot
    # the boilerplate page's hashes, read by the task with the plot, as the driver reads them
    assert early.top_hashes() == hashes
    assert Figures(spark_session, str(sample_run), 300, [begun], hashes=20).top_hashes() is None, "the task read 50"
    assert early.write(tmp_path / "early") == driver
    assert set(early.where.values()) == {"begun early"} and set(early.where) == {*pngs, RANK_PLOT}
    assert {name: (tmp_path / "early" / name).read_bytes() for name in pngs} == pngs
    alone = Figures(spark_session, str(sample_run), 300, hashes=50)
    assert alone.rank_plot() == plot
    assert alone.top_hashes() == hashes
    assert alone.write(tmp_path / "alone") == driver
    assert set(alone.where.values()) == {"report task"}
    assert {name: (tmp_path / "alone" / name).read_bytes() for name in pngs} == pngs
    spark_session.conf.set(SETTING, "report")  # the task's first attempt fails; local mode does not retry
    try:
        failed = Figures(spark_session, str(sample_run), 300, hashes=50)
        with pytest.warns(RuntimeWarning, match="figures' Spark task failed .*drawn on the driver"):
            assert failed.rank_plot() is None, "the driver draws the plot"
        assert failed.top_hashes() is None, "the driver reads them"
        assert failed.write(tmp_path / "fallback") == driver
    finally:
        spark_session.conf.unset(SETTING)
    assert set(failed.where.values()) == {"driver"}
    assert {name: (tmp_path / "fallback" / name).read_bytes() for name in pngs} == pngs


def test_each_figure_is_drawn_from_the_tables_it_says_it_reads(sample_run, tmp_path):
    """A figure the report begins early must not read a table a later stage is still writing:
    each figure is drawn from a folder holding only the tables its spec names (and an empty
    documents folder, what makes a folder a run's), the same picture as from the whole run."""
    from webwinnow.explore.figures import png_bytes

    whole = RunOutput(sample_run)
    for spec in FIGURES:
        folder = tmp_path / spec.name
        folder.mkdir()
        for table in spec.reads:
            (folder / table).symlink_to(sample_run / table, target_is_directory=True)
        if "documents" not in spec.reads:
            (folder / "documents").mkdir()
        assert png_bytes(spec.draw(RunOutput(folder), 300)) == png_bytes(spec.draw(whole, 300)), spec.name


@pytest.mark.parametrize("driver_rows", [2_000_000, -1])  # read on the driver; in Spark
def test_the_clusters_page_collects_a_clusters_first_members_and_its_source_only(
    sample_run, spark_session, monkeypatch, driver_rows
):
    """A cluster of a crawl's exact duplicates can hold millions of pages: the report collects its
    first members by doc_id and its source document's URL, never the whole cluster."""
    from webwinnow.stages import _reportrows

    monkeypatch.setattr(_reportrows, "DRIVER_ROWS", driver_rows)
    clusters = RunOutput(sample_run).frame("clusters")
    assert len(clusters), "the sample has clusters"
    pages = _reportrows.run_pages(spark_session, str(sample_run), members_shown=1)
    urls = RunOutput(sample_run).urls(clusters["doc_id"].tolist())
    assert pages.clusters
    for view in pages.clusters:
        members = clusters[clusters.cluster_id == view.cluster_id]
        first = int(members.doc_id.min())
        assert [doc for doc, _ in view.members] == [first]
        assert view.source_url == urls[int(members.source_doc.iloc[0])]


def test_no_notebook_defines_its_own_logic():
    """The notebooks call webwinnow.explore: a def or class in a cell is logic that rots untested."""
    import nbformat

    from paths import REPO

    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not re.search(r"^\s*(def|class) ", cell.source, re.M), f"{path.name}: {cell.source[:80]}"


def test_show_prints_the_run_in_words_the_top_pairs_and_one_pairs_passages(run, sample_run, capsys):
    from webwinnow.app.cli import main
    from webwinnow.explore.copies import pair_passages

    assert main(["show", "--out", str(sample_run), "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    top = top_pairs(run, 3)
    assert out[: len(run.summary["headline"])] == run.summary["headline"]  # the run in words first
    ranked = [line for line in out if re.match(r"^\s+[123]\s+[\d,]+\s+\d+%", line)]
    assert len(ranked) == 3 and f"({top.iloc[0]['doc_a']} {top.iloc[0]['doc_b']})" in out[out.index(ranked[0]) + 1]
    assert main(["show", "--out", str(sample_run), "--pair", "1", "--passages", "1"]) == 0
    shown = capsys.readouterr().out
    longest = pair_passages(run, int(top.iloc[0]["doc_a"]), int(top.iloc[0]["doc_b"]), 1)[0]
    left = " ".join(line.split(" | ")[0].strip() for line in shown.splitlines() if " | " in line)
    assert left == " ".join(longest.text_a.split())  # side A of the longest passage, whole, wrapped
    assert main(["show", "--out", str(sample_run), "--pair", "999999"]) == 2
    assert "give a rank from 1, or two doc ids" in capsys.readouterr().err
