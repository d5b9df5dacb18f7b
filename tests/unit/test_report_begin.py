"""The report's figures begun before the report stage: a head start that never fails a command."""

from __future__ import annotations

from webwinnow.config import RunConfig
from webwinnow.stages import StageContext
from webwinnow.stages._reportfigures import EARLY, begin


class _Folder:
    def __init__(self, location: str) -> None:
        self.location = location


def test_a_run_whose_curve_cannot_be_read_begins_nothing_and_leaves_the_error_to_the_report(tmp_path):
    """Every figure's tables are settled after passages, but this folder's rank_freq is damaged:
    begin starts no task and raises nothing (the report stage reads the same table and says what
    is wrong, as it did before the figures were begun early)."""
    (tmp_path / "rank_freq").mkdir()
    (tmp_path / "rank_freq" / "part-00000.parquet").write_bytes(b"not parquet")
    ctx = StageContext(spark=None, cfg=RunConfig(), folder=_Folder(str(tmp_path)), later=("clusters", "report"))
    begin(ctx)
    assert EARLY not in ctx.handoff


def test_no_figures_asked_for_begins_nothing(tmp_path):
    from dataclasses import replace

    cfg = RunConfig()
    cfg = replace(cfg, report=replace(cfg.report, figure_docs=0))
    ctx = StageContext(spark=None, cfg=cfg, folder=_Folder(str(tmp_path)), later=("clusters", "report"))
    begin(ctx)
    assert EARLY not in ctx.handoff


def test_each_group_of_figures_begins_once_its_tables_are_made_and_the_plot_with_the_last(tmp_path, monkeypatch):
    """After hash_freq the sample's figures can be drawn (they share its k-grams: one task),
    beside the candidates stage; the others read pairs and passages. Each call begins only the
    groups complete by then and not yet begun; the boilerplate page's plot goes with the last group,
    and that task reads the page's hashes too (report.hashes of them)."""
    from webwinnow.explore import figures
    from webwinnow.stages import BY_NAME, _reportfigures

    assert BY_NAME["report"].begins_after == ("hash_freq", "candidates", "passages")

    made = []

    class Recorded:
        def __init__(self, spark, out, max_docs, names, rank=None, group="", hashes=0):
            self.names, self.plot, self.hashes = frozenset(names), rank is not None, hashes
            made.append(self)

    monkeypatch.setattr(_reportfigures, "SparkFigures", Recorded)
    monkeypatch.setattr(_reportfigures, "rank_of", lambda out: ([], {}, 7))
    sample = {spec.name for spec in figures.FIGURES if spec.shares == figures.SAMPLE_KGRAMS}
    assert sample == {"rank_frequency_kgrams.png", "gaps.png", "density_by_w.png", "robust.png"}
    later = ("candidates", "passages", "clusters", "report")
    ctx = StageContext(spark=None, cfg=RunConfig(), folder=_Folder(str(tmp_path)), later=later)
    begin(ctx)
    assert [(m.names, m.plot) for m in made] == [(sample, False)]
    begin(ctx)  # nothing more is complete: nothing begun twice
    assert len(made) == 1
    ctx = StageContext(spark=None, cfg=RunConfig(), folder=_Folder(str(tmp_path)), later=later[1:], handoff=ctx.handoff)
    begin(ctx)  # after candidates: nothing more
    assert len(made) == 1
    ctx = StageContext(
        spark=None, cfg=RunConfig(), folder=_Folder(str(tmp_path)), later=("clusters", "report"), handoff=ctx.handoff
    )
    begin(ctx)
    assert [(m.names, m.plot) for m in made] == [(sample, False), (figures.figure_names() - sample, True)]
    assert [m.hashes for m in made] == [0, RunConfig().report.hashes]
    assert ctx.handoff[EARLY]["figures"] == made
    begin(ctx)
    assert len(made) == 2


def test_figure_groups_keep_what_figures_share_in_one_process():
    from webwinnow.explore.figures import FIGURES, SAMPLE_KGRAMS, figure_groups, figure_names

    shares = {spec.name: spec.shares for spec in FIGURES}
    groups = figure_groups(figure_names())
    assert sorted(name for group in groups for name in group) == sorted(figure_names())
    assert [{shares[name] for name in group} for group in groups] == [{SAMPLE_KGRAMS}, {""}]
    order = [spec.name for spec in FIGURES]
    assert all(group == sorted(group, key=order.index) for group in groups)
    assert figure_groups(["max_df.png", "gaps.png"]) == [["gaps.png"], ["max_df.png"]]
    assert figure_groups([]) == []
