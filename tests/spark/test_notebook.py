"""Every notebook runs top to bottom on a real output folder (stumpy-style: notebooks executed in
CI, so they cannot rot), escapes crawled text, and rewrites the report's figures it draws."""

from __future__ import annotations

import importlib.util
import re
import shutil

import pytest

from paths import REPO

pytestmark = [pytest.mark.spark, pytest.mark.slow]

NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def execute():
    spec = importlib.util.spec_from_file_location("notebooks_execute", REPO / "notebooks" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.execute


@pytest.fixture(scope="module")
def out(sample_run, tmp_path_factory):
    """A copy of the sample run: the notebooks write into its report/figures/."""
    copy = tmp_path_factory.mktemp("notebook-run") / "out"
    shutil.copytree(sample_run, copy)
    return copy


def test_the_notebooks_are_the_four_documented():
    assert NOTEBOOKS == ["density_and_gaps.ipynb", "explore.ipynb", "hash_frequencies.ipynb", "pairs_explorer.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_executes_on_the_sample_run(name, execute, out, tmp_path):
    figures = out / "report" / "figures"
    before = {p.name: p.stat().st_mtime_ns for p in figures.glob("*.png")}
    nb = execute(REPO / "notebooks" / name, out, tmp_path)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html_out = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    text_out = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "<script" not in html_out.lower()  # the sample's pages all carry scripts: escaped
    if name == "explore.ipynb":
        assert "density" in text_out
        return
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "a notebook of figures shows figures"
    rewritten = {p.name for p in figures.glob("*.png") if p.stat().st_mtime_ns != before.get(p.name)}
    expected = {
        "hash_frequencies.ipynb": {"rank_frequency_kgrams.png", "max_df.png", "fit_residuals.png"},
        "density_and_gaps.ipynb": {"gaps.png", "density_by_w.png", "robust.png"},
        "pairs_explorer.ipynb": {"pairs_scatter.png", "passage_lengths.png"},
    }[name]
    assert rewritten == expected
    if name == "hash_frequencies.ipynb":
        at_cap, table = re.search(r"pairs there: ([\d,]+); pairs table: ([\d,]+)", text_out).groups()
        assert at_cap == table  # the sweep at the run's own cap counts its pairs table
    if name == "density_and_gaps.ipynb":
        assert "winnowing misses 0.00% of the windows" in text_out and "(bound w-1 = 99)" in text_out
    if name == "pairs_explorer.ipynb":
        assert "<th>normalized chars</th>" in html_out  # one pair's passages, side by side
