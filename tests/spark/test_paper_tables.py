"""`webwinnow paper-tables` on the sample run: the paper's measurements, recomputed from the
documents table, agree with the fingerprint stage and with the algorithm's guarantees."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from webwinnow.app.cli import main

pytestmark = pytest.mark.spark


def test_paper_tables_json_on_the_sample(sample_run, capsys):
    assert main(["paper-tables", "--out", str(sample_run), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    win, mod = r["winnowing"], r["mod_p"]
    summary = json.loads((sample_run / "summary.json").read_text())
    assert r["kgrams"] == summary["fingerprint"]["kgrams"] and r["documents"] == summary["fingerprint"]["documents"]
    texts = pq.read_table(sample_run / "documents", columns=["text", "status"]).to_pylist()
    assert r["text_bytes"] == sum(len(t["text"].encode()) for t in texts if t["status"] == "ok") > r["text_chars"]
    assert win["fingerprints"] == summary["fingerprint"]["fingerprints"] and win["matches_fingerprint_stage"]
    assert abs(win["density"] / win["expected_density"] - 1) < 0.02
    assert win["density"] > r["lower_bound_density"] == 1.5 / 101
    assert win["longest_gap_kgrams"] <= 99 == win["bound_gap_kgrams"]
    assert mod["p"] == 50 and mod["longest_gap_kgrams"] > win["longest_gap_kgrams"]
    assert abs(mod["density"] - 1 / 50) < 0.003
    # matches of exactly the guarantee length: winnowing misses none, 0 mod p about e^-2 of them
    assert win["missed_threshold_matches"] == 0 and 0.05 < mod["missed_threshold_matches"] < 0.25
    stats = json.loads((sample_run / "hash_freq" / "_webwinnow.json").read_text())["stats"]
    assert r["power_law"]["slope"] == stats["fit"]["slope"] < 0
    assert r["shares"]["once"] == stats["shares"]["once"] and r["shares"]["twice"] == stats["shares"]["twice"]
    for key in ("three_times", "hashes"):
        assert key in r["shares"]


def test_paper_tables_in_the_papers_layout_and_a_slice(sample_run):
    done = subprocess.run(
        [sys.executable, "-m", "webwinnow", "paper-tables", "--out", str(sample_run), "--max-docs", "20", "--mod-p", "25"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[1].split() == ["winnowing", "0", "mod", "25"]
    assert lines[2].split()[-2:] == ["20", "20"]  # documents: only the first 20
    assert any(line.startswith("longest gap (k-grams)") for line in lines)
    assert not any("recomputed winnowing" in line for line in lines)  # a slice cannot be checked


def test_paper_tables_refusals_are_one_line(tmp_path, capsys):
    for argv, message in (
        (["--out", str(tmp_path / "absent")], "does not exist"),
        (["--out", str(tmp_path)], "holds no webwinnow tables"),
        (["--out", str(tmp_path), "--max-docs", "0"], "--max-docs must be at least 1"),
    ):
        assert main(["paper-tables", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err


def test_the_gaps_figures_numbers_are_the_paper_tables_on_the_same_documents(sample_run):
    """The report's gaps figure tallies the per-document sample's k-grams (explore.density.
    sample_gaps); on a run whose sample is every document it gives paper-tables' numbers."""
    from webwinnow.explore import RunOutput
    from webwinnow.explore.density import paper_table, sample_gaps

    run = RunOutput(str(sample_run))
    whole = paper_table(run)
    assert len(run.sample_doc_ids(2000)) == whole["documents"] < 2000  # the sample is the whole run
    got = sample_gaps(run, 2000)
    assert got["documents"] == whole["documents"] and got["kgrams"] == whole["kgrams"]
    for scheme in ("winnowing", "mod_p"):
        assert got[scheme].items() <= whole[scheme].items(), scheme
    assert got["winnowing"]["missed_threshold_matches"] == 0 < got["mod_p"]["missed_threshold_matches"]
    assert sample_gaps(run, 2000, mod_p=7)["mod_p"]["p"] == 7
