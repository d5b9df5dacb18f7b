"""The stage table's dependencies: what a stage run alone leaves stale, and what --downstream reruns."""

from __future__ import annotations

from webwinnow.stages import RUN_STAGES, downstream, stage, stale_tables


def _run_folder(with_dedup: bool) -> dict:
    """The tables' metadata of a run made in one go: each table made from the others as they are."""
    metas: dict = {}
    for name in RUN_STAGES:
        if name == "dedup" and not with_dedup:
            continue
        s = stage(name)
        made_from = {t: "r0" for t in (*s.reads, *s.follows) if t in s.reads or t in metas}
        for table in s.writes:
            metas[table] = {"recipe": "r0", "reads": made_from}
    return metas


def test_dedup_run_alone_leaves_the_report_stale_and_downstream_redraws_it():
    metas = _run_folder(with_dedup=True)
    assert stale_tables(metas) == {}
    metas["deduped"] = {**metas["deduped"], "recipe": "r1"}  # dedup ran again, alone
    assert stale_tables(metas) == {"report": "made from an earlier deduped"}
    assert "report" in [s.name for s in downstream(["dedup"])]
    assert stale_tables(_run_folder(with_dedup=False)) == {}  # a run without dedup: nothing is missing
