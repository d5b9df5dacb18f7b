"""The figures of the notebooks and of the report's figures page, drawn from a run's output.

Matplotlib's object API on the Agg canvas: no pyplot state, no display, the same picture in a
notebook and in `report/figures/`. Each builder takes the numbers (from webwinnow.explore's
functions) and returns a Figure; :func:`write_figures` computes them all for a run and writes the
PNGs the report links. Nothing here shows crawled text: figures carry numbers only.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..htmlreport.model import FigureEntry
from ..htmlreport.plot import laid_out
from .density import density_by_w, robust_vs_standard
from .frequencies import Curve, FitQuality, MaxDfSweep, fingerprint_curve, fit_quality, max_df_sweep, sample_curves
from .run import RunOutput

DPI = 100
BLUE, RED, GREY, GREEN = "#1a5fb4", "#c0392b", "#777777", "#26a269"


def _figure(width: float = 8.0, height: float = 5.0, panels: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    return fig, axes


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, fontsize=12, color=GREY)
    ax.set_xticks([])
    ax.set_yticks([])


def _steps(ax, curve: Curve, color: str, label: str) -> None:
    xs: list[float] = []
    ys: list[float] = []
    for rank, last, docs, _ in curve.runs:
        xs += [rank, last + 1]
        ys += [docs, docs]
    ax.plot(xs, ys, color=color, linewidth=1.5, label=label)
    fit = curve.fit or {}
    if fit.get("slope") is not None and fit.get("rank_min") and fit.get("rank_max"):
        lo, hi = float(fit["rank_min"]), max(float(fit["rank_max"]), float(fit["rank_min"]) * 1.001)
        r = np.geomspace(lo, hi, 50)
        ax.plot(
            r,
            10 ** fit["intercept"] * r ** fit["slope"],
            "--",
            color=color,
            linewidth=1.2,
            alpha=0.8,
            label=f"fit: slope {fit['slope']:.2f}, ranks {int(lo):,}–{int(hi):,}",
        )


def _log_axes(ax, xlabel: str, ylabel: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.8)


def rank_frequency_figure(run_curve: Curve, kgrams: Curve | None = None, fingerprints: Curve | None = None):
    """Left: the run's fingerprint curve with its fit. Right: all k-grams against winnowed
    fingerprints of the same sample (the paper: slopes about -0.7 and -0.68)."""
    fig, (left, right) = _figure(12.0, 5.0, panels=2)
    for ax, curves, title in (
        (left, [(run_curve, BLUE)], f"{run_curve.label} ({run_curve.documents:,})"),
        (right, [(c, col) for c, col in ((kgrams, GREY), (fingerprints, BLUE)) if c], "a sample"),
    ):
        if not any(c.runs for c, _ in curves):
            _empty(ax, "no hashes")
            continue
        for c, color in curves:
            _steps(ax, c, color, c.label)
        _log_axes(ax, "rank (distinct hashes, most frequent first)", "documents holding the hash")
        ax.legend(fontsize=8, loc="lower left")
        ax.set_title(title, fontsize=10)
    fig.suptitle("Rank–frequency of hashes (log–log)")
    laid_out(fig)
    return fig


def fit_residuals_figure(quality: FitQuality):
    """log10(measured / fitted documents) along the ranks: where the power law holds and where
    plateaus (site templates) and the tail of hashes seen once leave it."""
    fig, (ax,) = _figure()
    if not quality.residuals:
        _empty(ax, "no fit (too few distinct document frequencies)")
        return fig
    x = [r[0] for r in quality.residuals]
    y = [r[2] for r in quality.residuals]
    ax.plot(x, y, ".-", color=BLUE, markersize=4, linewidth=0.8, label="measured against fitted, along the ranks")
    ax.axhline(0, color=GREY, linewidth=1)
    if quality.rank_min and quality.rank_max:
        ax.axvspan(quality.rank_min, quality.rank_max, color=BLUE, alpha=0.06, label="fitted ranks")
    for i, (rank, last, _docs, _) in enumerate(quality.plateaus):
        ax.axvspan(rank, last + 1, color=RED, alpha=0.15, label="plateaus (many tied hashes)" if i == 0 else None)
    if quality.tail:
        ax.axvspan(quality.tail[0], quality.tail[1] + 1, color=GREY, alpha=0.12, label="hashes in one document (not fitted)")
    ax.set_xscale("log")
    ax.set_xlabel("rank")
    ax.set_ylabel("log10(documents / fitted)")
    r2 = f", R² {quality.r2:.3f}" if quality.r2 is not None else ""
    ax.set_title(f"Power-law fit residuals (slope {quality.slope:.2f}{r2})" if quality.slope is not None else "Residuals")
    ax.legend(fontsize=8)
    ax.grid(True, color="#eeeeee")
    laid_out(fig)
    return fig


def max_df_figure(sweep: MaxDfSweep):
    """Pairs emitted and the boilerplate share of fingerprints as functions of max_df."""
    fig, (ax,) = _figure()
    # both are step functions of the cap: they change only at the document frequencies present
    ax.plot(
        sweep.max_df,
        sweep.pairs,
        ".-",
        color=BLUE,
        drawstyle="steps-post",
        label=f"candidate pairs (≥ {sweep.min_shared} shared)",
    )
    ax.set_xscale("log")
    ax.set_xlabel("max_df: hashes in more documents are boilerplate (never paired)")
    ax.set_ylabel("candidate pairs", color=BLUE)
    if max(sweep.pairs, default=0) > 0:
        ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=0)
    other = ax.twinx()
    other.plot(
        sweep.max_df,
        [100 * s for s in sweep.boilerplate_share],
        ".-",
        color=RED,
        drawstyle="steps-post",
        label="boilerplate share",
    )
    other.set_ylabel("fingerprints above max_df (%)", color=RED)
    other.set_ylim(0, 100)
    if sweep.chosen:
        ax.axvline(
            sweep.chosen,
            color=GREEN,
            linestyle="--",
            linewidth=1.5,
            label=f"this run: max_df = {sweep.chosen:,}" + (" (automatic)" if sweep.chosen_auto else ""),
        )
    lines = ax.get_legend_handles_labels()
    more = other.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="center right")
    note = f" ({sweep.sample:,} sampled documents)" if sweep.sample else ""
    ax.set_title(f"How the boilerplate cap changes the pairs{note}")
    ax.grid(True, color="#eeeeee")
    laid_out(fig)
    return fig


def density_figure(frame, k: int):
    """Measured density against w, with 2/(w+1) (random text) and the bound 1.5/(w+1)."""
    fig, (ax,) = _figure()
    if frame.empty or not frame["kgrams"].iloc[0]:
        _empty(ax, "no k-grams")
        return fig
    ax.plot(frame["w"], frame["density"], "o-", color=BLUE, label=f"measured (k = {k})")
    ax.plot(frame["w"], frame["expected"], "--", color=GREY, label="2/(w+1): random text")
    ax.plot(frame["w"], frame["lower_bound"], ":", color=RED, label="1.5/(w+1): lower bound for any local algorithm")
    _log_axes(ax, "window w (k-grams)", "fingerprints per k-gram")
    ax.set_title(f"Winnowing density against w ({int(frame['documents'].iloc[0]):,} documents)")
    ax.legend(fontsize=8)
    laid_out(fig)
    return fig


def gaps_figure(paper: dict):
    """Longest stretch without a fingerprint and threshold matches missed: winnowing vs 0 mod p."""
    fig, (left, right) = _figure(11.0, 4.5, panels=2)
    win, mp = paper["winnowing"], paper["mod_p"]
    names = ["winnowing", f"0 mod {mp['p']}"]
    gaps = [win["longest_gap_kgrams"], mp["longest_gap_kgrams"]]
    left.bar(names, gaps, color=[BLUE, RED])
    left.axhline(win["bound_gap_kgrams"], color=GREY, linestyle="--", label=f"winnowing's bound w−1 = {win['bound_gap_kgrams']}")
    left.set_ylabel("longest run of k-grams with no fingerprint")
    for i, g in enumerate(gaps):
        left.annotate(f"{g:,}", (i, g), ha="center", va="bottom", fontsize=9)
    left.legend(fontsize=8)
    missed = [100 * (win["missed_threshold_matches"] or 0), 100 * (mp["missed_threshold_matches"] or 0)]
    right.bar(names, missed, color=[BLUE, RED])
    right.axhline(
        100 * mp["expected_missed"], color=GREY, linestyle="--", label=f"(1 − 1/p)^w = {100 * mp['expected_missed']:.1f}%"
    )
    right.set_ylabel("windows of w k-grams with no fingerprint (%)")
    for i, m in enumerate(missed):
        right.annotate(f"{m:.2f}%", (i, m), ha="center", va="bottom", fontsize=9)
    right.legend(fontsize=8)
    fig.suptitle(f"Same expected density, {paper['documents']:,} documents: what each selection leaves uncovered")
    laid_out(fig)
    return fig


def robust_figure(frame, w: int):
    """Densities of robust and standard winnowing on low-entropy texts."""
    fig, (ax,) = _figure(10.0, 0.6 * max(len(frame), 3) + 1.5)
    if frame.empty:
        _empty(ax, "no texts")
        return fig
    y = np.arange(len(frame))
    labels = [t if len(t) <= 60 else t[:57] + "…" for t in frame["text"]]
    ax.barh(y - 0.2, frame["standard_density"], height=0.4, color=RED, label="standard winnowing")
    ax.barh(y + 0.2, frame["robust_density"], height=0.4, color=BLUE, label="robust winnowing")
    ax.axvline(2 / (w + 1), color=GREY, linestyle="--", label=f"2/(w+1), w = {w}")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("fingerprints per k-gram")
    ax.set_title("Low-entropy text: ties cost standard winnowing fingerprints")
    ax.legend(fontsize=8, loc="lower right")
    laid_out(fig)
    return fig


def pairs_scatter_figure(pairs, total: int | None = None):
    """Each pair's larger containment against its resemblance (total: the pairs in all, when
    `pairs` is a sample of them)."""
    fig, (ax,) = _figure(6.5, 5.5)
    if pairs.empty:
        _empty(ax, "no pairs")
        return fig
    containment = pairs[["containment_a", "containment_b"]].max(axis=1)
    ax.scatter(pairs["resemblance"], containment, s=9, alpha=0.5, color=BLUE, edgecolors="none")
    ax.plot([0, 1], [0, 1], ":", color=GREY, linewidth=1)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("resemblance (shared / union)")
    ax.set_ylabel("containment of the smaller document (shared / its own)")
    shown = f"{len(pairs):,} of {total:,} pairs" if total and total > len(pairs) else f"{len(pairs):,} pairs"
    ax.set_title(f"{shown}\ncopies inside longer pages sit high and to the left", fontsize=10)
    ax.grid(True, color="#eeeeee")
    laid_out(fig)
    return fig


def passage_lengths_figure(lengths: np.ndarray, k: int, t: int, counts: np.ndarray | None = None):
    """How long the copied passages are, against the guarantee threshold t (counts: passages of
    each of the lengths, when they are distinct lengths rather than one per passage)."""
    fig, (ax,) = _figure()
    if not len(lengths):
        _empty(ax, "no passages")
        return fig
    weights = np.ones(len(lengths), np.int64) if counts is None else np.asarray(counts)
    lo, hi = max(1, int(lengths.min())), max(int(lengths.max()), t + 1)
    bins = np.geomspace(lo, hi * 1.01, 40)
    ax.hist(lengths, bins=bins, weights=weights, color=BLUE, alpha=0.85)
    ax.axvline(k, color=GREY, linestyle=":", label=f"k = {k}: nothing shorter matches")
    ax.axvline(t, color=RED, linestyle="--", label=f"t = w + k − 1 = {t}: always found")
    ax.set_xscale("log")
    ax.set_xlabel("copied passage (normalized characters)")
    ax.set_ylabel("passages")
    share = float(weights[lengths >= t].sum() / weights.sum())
    ax.set_title(f"{int(weights.sum()):,} copied passages, {100 * share:.0f}% at least t long")
    ax.legend(fontsize=8)
    laid_out(fig)
    return fig


class Shown:
    """A figure as a notebook shows it (IPython calls _repr_png_)."""

    def __init__(self, fig) -> None:
        self.fig = fig

    def _repr_png_(self) -> bytes:
        return png_bytes(self.fig)


def show(fig) -> Shown:
    return Shown(fig)


def png_bytes(fig) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def save(fig, path: str | os.PathLike[str]) -> Path:
    """Write the figure as PNG (atomically: a reader never sees half a file)."""
    return _write_png(Path(path), png_bytes(fig))


def _write_png(path: Path, png: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(png)
    os.replace(tmp, path)
    return path


def save_for_report(fig, run: RunOutput, name: str) -> Path | None:
    """Write one of the report's figures (a FIGURES name) into the run's report/figures/, which
    the report stage made and links; None, leaving everything as it is, when the run has no
    such folder (a report without figures, or an output on a store: committed runs are not
    rewritten)."""
    if name not in figure_names():
        raise ValueError(f"{name} is not one of the report's figures: {', '.join(sorted(figure_names()))}")
    folder = run.report_dir / "figures" if run.report_dir else None
    if folder is None or not folder.is_dir():
        return None
    return save(fig, folder / name)


@dataclass(frozen=True)
class FigureSpec:
    name: str  # the PNG's file name
    title: str
    caption: str
    notebook: str  # the notebook that explores it further
    draw: Callable[[RunOutput, int | None], Any]
    #: the tables its numbers come from (rows, statistics or the settings recorded beside them)
    reads: tuple[str, ...]
    #: what it computes that other figures use too (RunOutput caches it): figures sharing it are
    #: drawn by the same process (figure_groups)
    shares: str = ""


def _rank_frequency(run: RunOutput, max_docs: int | None):
    kgrams, fps = sample_curves(run, max_docs)
    return rank_frequency_figure(fingerprint_curve(run), kgrams, fps)


def _paper(run: RunOutput, max_docs: int | None):
    from .density import sample_gaps

    return gaps_figure(sample_gaps(run, max_docs))


#: Up to this many fingerprints the report's max_df sweep reads them all (exact pair counts,
#: seconds on one core); beyond, the fingerprints of the document sample.
SWEEP_ALL_ROWS = 5_000_000


def _sweep(run: RunOutput, max_docs: int | None):
    everything = max_docs is None or run.rows("fingerprints") <= SWEEP_ALL_ROWS
    return max_df_figure(max_df_sweep(run, max_docs=None if everything else max_docs))


def _passages(run: RunOutput, max_docs: int | None):
    from .copies import passage_length_counts

    made = run.winnow
    lengths, counts = passage_length_counts(run)
    return passage_lengths_figure(lengths, made["k"], made["t"], counts)


def _scatter(run: RunOutput, max_docs: int | None):
    from .copies import pair_sample

    return pairs_scatter_figure(*pair_sample(run))


#: What the per-document figures share: the document sample's k-gram hashes and their counts
#: (RunOutput.sample_kgrams, sample_frequencies; 1.0-1.3 CPU-s on the docs corpus).
SAMPLE_KGRAMS = "sample_kgrams"

FIGURES = (
    FigureSpec(
        "rank_frequency_kgrams.png",
        "Hash rank–frequency",
        "The run's fingerprint hashes ranked by document frequency with the fitted power law; beside it, all "
        "k-gram hashes against winnowed fingerprints of a sample of documents.",
        "hash_frequencies.ipynb",
        _rank_frequency,
        ("documents", "fingerprints", "doc_stats", "rank_freq", "hash_freq"),
        SAMPLE_KGRAMS,
    ),
    FigureSpec(
        "fit_residuals.png",
        "Where the power law holds",
        "Residuals of the fit along the ranks: plateaus of tied hashes (site templates) and the tail of hashes "
        "seen in one document are where the line stops describing the curve.",
        "hash_frequencies.ipynb",
        lambda run, n: fit_residuals_figure(fit_quality(fingerprint_curve(run))),
        ("doc_stats", "rank_freq", "hash_freq"),
    ),
    FigureSpec(
        "max_df.png",
        "The boilerplate cap",
        "Document pairs and the share of fingerprints left out as boilerplate for every max_df, with this run's choice marked.",
        "hash_frequencies.ipynb",
        _sweep,
        ("fingerprints", "doc_stats", "candidate_pairs", "documents"),
    ),
    FigureSpec(
        "gaps.png",
        "Winnowing against 0 mod p",
        "The longest run of k-grams without a fingerprint and the share of threshold-length matches missed, "
        "at the same expected density (the paper's Web-data table).",
        "density_and_gaps.ipynb",
        _paper,
        ("documents", "fingerprints"),
        SAMPLE_KGRAMS,
    ),
    FigureSpec(
        "density_by_w.png",
        "Density against w",
        "Measured fingerprint density over a range of windows, with 2/(w+1) and the lower bound 1.5/(w+1).",
        "density_and_gaps.ipynb",
        lambda run, n: density_figure(density_by_w(run, max_docs=n), run.winnow["k"]),
        ("documents", "fingerprints"),
        SAMPLE_KGRAMS,
    ),
    FigureSpec(
        "robust.png",
        "Robust winnowing on low-entropy text",
        "Fingerprints per k-gram of robust and standard winnowing on repetitive strings and on the run's "
        "most repetitive documents.",
        "density_and_gaps.ipynb",
        lambda run, n: robust_figure(robust_vs_standard(run, max_docs=n), run.winnow["w"]),
        ("documents", "fingerprints"),
        SAMPLE_KGRAMS,
    ),
    FigureSpec(
        "pairs_scatter.png",
        "Containment against resemblance",
        "Every reported pair (a sample of 100,000 beyond that): how much of the smaller document is in the "
        "other, against their overlap.",
        "pairs_explorer.ipynb",
        _scatter,
        ("pairs",),
    ),
    FigureSpec(
        "passage_lengths.png",
        "Copied passage lengths",
        "The lengths of the copied passages against k and the guarantee threshold t.",
        "pairs_explorer.ipynb",
        _passages,
        ("passages", "fingerprints"),
    ),
)


def drawn(run: RunOutput, names: Iterable[str], max_docs: int | None = 2000) -> list[tuple[str, bytes | None, str]]:
    """(name, PNG, error) of each named figure of FIGURES, in its order; where one cannot be
    drawn, no PNG and the error (one odd table never costs the report its other figures)."""
    wanted = set(names)
    unknown = wanted - figure_names()
    if unknown:
        raise ValueError(f"not figures of the report: {', '.join(sorted(unknown))}")
    got: list[tuple[str, bytes | None, str]] = []
    for spec in FIGURES:
        if spec.name not in wanted:
            continue
        try:
            got.append((spec.name, png_bytes(spec.draw(run, max_docs)), ""))
        except Exception as exc:  # noqa: BLE001 - reported on the page and in the log, not lost
            got.append((spec.name, None, f"{type(exc).__name__}: {exc}"))
    return got


def figure_entries(
    run: RunOutput, folder: str | os.PathLike[str], pngs: Mapping[str, tuple[bytes | None, str]], max_docs: int | None = 2000
) -> list[FigureEntry]:
    """Write the PNGs of `pngs` (name -> (PNG, error), as `drawn` gives them, for every figure of
    FIGURES) into folder; their entries for the figures page, in FIGURES' order, an error where a
    figure could not be drawn (and a warning)."""
    folder = Path(folder)
    docs = int(run.stats("doc_stats").get("documents", 0))
    sampled = f" Per-document parts: {min(docs, max_docs):,} of {docs:,} documents." if max_docs and docs > max_docs else ""
    entries = []
    for spec in FIGURES:
        png, error = pngs[spec.name]
        if png is not None:
            _write_png(folder / spec.name, png)
            entries.append(FigureEntry(spec.name, spec.title, spec.caption + sampled, spec.notebook))
        else:
            warnings.warn(f"report: {spec.name} not drawn: {error}", RuntimeWarning, stacklevel=2)
            entries.append(FigureEntry(spec.name, spec.title, spec.caption, spec.notebook, error=error))
    return entries


def write_figures(run: RunOutput, folder: str | os.PathLike[str], max_docs: int | None = 2000) -> list[FigureEntry]:
    """Draw every figure of FIGURES for the run into folder; per-document analyses on a sample
    of max_docs documents (None: all). A figure that cannot be drawn is listed with the reason
    (and a warning), so one odd table never costs the report its other figures."""
    return figure_entries(
        run, folder, {name: (png, error) for name, png, error in drawn(run, figure_names(), max_docs)}, max_docs
    )


def figure_names() -> set[str]:
    return {spec.name for spec in FIGURES}


def figure_groups(names: Iterable[str]) -> list[list[str]]:
    """The named figures in groups that different processes can draw side by side: those sharing
    what they compute (FigureSpec.shares) in one group, each other figure in the first group of
    its own kind ("" shares nothing); in FIGURES' order, the group sharing nothing last."""
    wanted = set(names)
    groups: dict[str, list[str]] = {}
    for spec in FIGURES:
        if spec.name in wanted:
            groups.setdefault(spec.shares, []).append(spec.name)
    return [groups[key] for key in sorted(groups, key=lambda key: key == "")]


def drawable(tables: Iterable[str]) -> set[str]:
    """The figures drawn from these tables alone."""
    have = set(tables)
    return {spec.name for spec in FIGURES if have.issuperset(spec.reads)}
