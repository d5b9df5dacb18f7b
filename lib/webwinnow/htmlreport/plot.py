"""rank_frequency.png: the fingerprint rank–frequency curve on log–log axes, with the fit.

Drawn with matplotlib's object API on the Agg canvas (no pyplot, no global backend switch, no
display needed). The curve is drawn from the runs, never from one point per hash: each run
``(rank, rank_last, docs, hashes)`` is a horizontal step from ``rank`` to ``rank_last``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 5.5, 110  # 880 x 605 pixels, as the <img> says

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MATH = "$\\mathdefault{"


def plain_label(label: str) -> str:
    """A log axis's tick label as matplotlib's LogFormatterSciNotation writes it in mathtext
    ("$\\mathdefault{10^{3}}$", "$\\mathdefault{2\\times10^{-2}}$") as plain text: "10³", "2×10⁻²"."""
    if not (label.startswith(_MATH) and label.endswith("}$")):
        return label
    body = label[len(_MATH) : -2]
    body = re.sub(r"\^\{(-?\d+)\}", lambda m: m.group(1).translate(_SUPERSCRIPT), body)
    return body.replace("\\times", "×").replace("-", "−")


@functools.cache
def _plain_formatter():
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        """LogFormatterSciNotation's ticks and labels, written as plain text (plain_label)."""

        def __call__(self, x, pos=None):
            return plain_label(super().__call__(x, pos))

    return LogFormatterSciNotation, PlainLogFormatter


def laid_out(fig) -> None:
    """fig.tight_layout(), once every log and symlog axis labels its ticks in plain text:
    matplotlib writes them in mathtext, whose parser (pyparsing) took 10 ms a label, 0.4 CPU-s
    of the report's figures on the docs corpus, for "10³"."""
    scientific, plain = _plain_formatter()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, put in (
                (axis.get_major_formatter, axis.set_major_formatter),
                (axis.get_minor_formatter, axis.set_minor_formatter),
            ):
                old = get()
                if type(old) is scientific:
                    put(plain(old._base, old.labelOnlyBase, old.minor_thresholds, old._linthresh))
    fig.tight_layout()
    # tight_layout leaves a placeholder layout engine behind, and savefig draws a figure that has
    # any engine once more before it renders it (for the engine's layout, done here already):
    # without it each PNG is drawn once, the same bytes
    fig.set_layout_engine(None)


def write_rank_frequency_png(
    path: Path,
    rank_freq: Sequence[tuple[int, int, int, int]],
    fit: Mapping[str, Any] | None,
    max_df: Any = None,
) -> None:
    """Write the plot to ``path`` (raises ImportError when matplotlib is missing)."""
    Path(path).write_bytes(rank_frequency_png(rank_freq, fit, max_df))


def rank_frequency_png(
    rank_freq: Sequence[tuple[int, int, int, int]], fit: Mapping[str, Any] | None, max_df: Any = None
) -> bytes:
    """The plot as PNG bytes (raises ImportError when matplotlib is missing)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    runs = sorted(rank_freq)
    if not runs:
        ax.text(0.5, 0.5, "no fingerprints", ha="center", va="center", transform=ax.transAxes, fontsize=14)
        ax.set_axis_off()
    else:
        xs: list[float] = []
        ys: list[float] = []
        for rank, rank_last, docs, _hashes in runs:
            xs += [rank, rank_last]
            ys += [docs, docs]
        ax.plot(xs, ys, color="#1a5fb4", linewidth=1.4, label="hashes (runs of equal document frequency)")
        ax.plot([r[0] for r in runs], [r[2] for r in runs], ".", color="#1a5fb4", markersize=3)
        slope = fit.get("slope") if fit else None
        if fit and slope is not None and fit.get("intercept") is not None and fit.get("rank_min") and fit.get("rank_max"):
            lo, hi = float(fit["rank_min"]), float(fit["rank_max"])
            if hi <= lo:
                hi = lo * 1.0001
            n = 64
            fx = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
            fy = [10.0 ** (fit["intercept"] + slope * math.log10(x)) for x in fx]
            label = f"fit: slope {slope:.3f} (ranks {int(fit['rank_min']):,}–{int(fit['rank_max']):,}"
            if fit.get("min_docs") is not None:
                label += f", docs ≥ {fit['min_docs']}"
            label += ")"
            if fit.get("r2") is not None:
                label += f", R² {fit['r2']:.3f}"
            ax.plot(fx, fy, "--", color="#c0392b", linewidth=1.8, label=label)
        if isinstance(max_df, (int, float)) and not isinstance(max_df, bool) and max_df > 0:
            ax.axhline(
                max_df,
                color="#888888",
                linestyle=":",
                linewidth=1.2,
                label=f"max_df = {max_df:,}: above it, boilerplate (never paired)",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(left=0.8)
        ax.set_ylim(bottom=0.8)
        ax.grid(True, which="major", color="#dddddd", linewidth=0.8)
        ax.legend(loc="lower left", fontsize=8.5, framealpha=0.9)
    ax.set_title("Fingerprint rank–frequency")
    ax.set_xlabel("rank (distinct hashes, most frequent first)")
    ax.set_ylabel("documents holding the hash")
    laid_out(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
