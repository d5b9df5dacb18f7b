"""The exploration notebook runs top to bottom on a real output folder (stumpy-style: notebooks
executed in CI, so they cannot rot)."""

from __future__ import annotations

import pytest

from paths import REPO

pytestmark = pytest.mark.spark


def test_explore_notebook_executes(sample_run, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("WEBWINNOW_OUT", str(sample_run))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(REPO / "notebooks" / "explore.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html_out = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "<script" not in html_out.lower()  # crawled text is escaped
    assert "density" in "".join(o.get("text", "") for o in outputs)
