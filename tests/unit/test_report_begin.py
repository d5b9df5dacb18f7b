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
