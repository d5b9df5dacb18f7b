"""write_report: the whole report folder, written aside and moved into place when complete."""

from __future__ import annotations

import json
import math
import operator
import os
import re
import shutil
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis import powerlaw
from ..outputs.tables import TABLE_META, replace_dir
from . import pages, runpages
from .highlight import forget_pages
from .model import FigureEntry, HashView, PairView, RunPages
from .plot import write_rank_frequency_png
from .summary import headline_html, summary_html

# What a report folder may hold (_webwinnow.json: the stage's record, see outputs.tables.stamp_table).
_REPORT_NAMES = {
    "index.html",
    "boilerplate.html",
    "figures.html",
    "figures",
    "stats.json",
    "rank_frequency.png",
    "pair",
    "cross-host.html",
    "clusters.html",
    "failures.html",
    "dedup.html",
    "contamination.html",
    TABLE_META,
}
_PAGE_NAME = re.compile(r"pairs-\d{3,}\.html")


def _jsonable(v: Any) -> Any:
    """stats as plain JSON: numpy scalars to Python, NaN/inf to None, tuples/sets to lists."""
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=str) if isinstance(v, (set, frozenset)) else v
        return [_jsonable(x) for x in items]
    if isinstance(v, bool) or v is None or isinstance(v, (str, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if hasattr(v, "item") and callable(v.item):  # numpy scalar
        try:
            return _jsonable(v.item())
        except (TypeError, ValueError):
            pass
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return str(v)


def _run(r: Any) -> tuple[int, int, int, int]:
    """One RANK_FREQ run (rank, rank_last, docs, hashes), from a row mapping or a 4-tuple."""
    rank, rank_last, docs, hashes = (r["rank"], r["rank_last"], r["docs"], r["hashes"]) if isinstance(r, Mapping) else r
    return int(rank), int(rank_last), int(docs), int(hashes)


def _write(path: Path, text: str) -> None:
    # errors="replace": a lone surrogate (impossible from Arrow, possible from Python callers)
    # becomes "?", one character for one, so nothing else moves.
    path.write_bytes(text.encode("utf-8", errors="replace"))


def _check_replaceable(final: Path) -> None:
    if not final.exists():
        return
    if not final.is_dir():
        raise FileExistsError(f"{final} exists and is not a folder: give write_report a report folder")
    foreign = sorted(p.name for p in final.iterdir() if p.name not in _REPORT_NAMES and not _PAGE_NAME.fullmatch(p.name))
    if foreign:
        raise FileExistsError(
            f"{final} holds files a report does not write ({', '.join(foreign[:5])}"
            f"{', …' if len(foreign) > 5 else ''}): refusing to replace it; give write_report its own folder"
        )


def write_report(
    report_dir: str | os.PathLike[str],
    *,
    stats: Mapping[str, Any],
    pairs: Iterable[PairView],
    boilerplate: Iterable[HashView] | Callable[[], Iterable[HashView]],
    rank_freq: Iterable[tuple[int, int, int, int]],
    fit: Mapping[str, Any] | None,
    page_size: int = 50,
    detail_pages: int = 200,
    figures: Callable[[Path], Sequence[FigureEntry]] | None = None,
    total_pairs: int | None = None,
    cross_host: Iterable[PairView] | None = None,
    total_cross_host: int | None = None,
    run: RunPages | None = None,
    rank_frequency: Callable[[], bytes | None] | None = None,
) -> Path:
    """Write the static HTML report into ``report_dir``; returns the path of its index.html.

    - ``stats``: run figures (any keys; known ones are laid out, the rest listed as they are,
      missing ones left out; see ``summary.summary_html``). Written to stats.json with ``fit``
      and the hash-frequency ``shares`` (computed here from ``rank_freq``).
    - ``pairs``: already in report order (best first); all of them are listed, ``page_size``
      per page (index.html, pairs-002.html, ...), and the first ``detail_pages`` get a
      side-by-side page pair/<doc_a>-<doc_b>.html (only those need texts).
    - ``boilerplate``: the most frequent hashes, in order, for boilerplate.html; or what gives
      them when that page is written (the report stage's figure task may have read them).
    - ``rank_freq``: RANK_FREQ runs ``(rank, rank_last, docs, hashes)`` for the plot and shares.
    - ``fit``: from ``powerlaw.fit_power_law(rank_freq)`` (None: no fit drawn).
    - ``figures``: draws PNGs into the folder it is given (``figures/``) and returns a
      FigureEntry for each, listed in that order on figures.html; None: the page says none
      were drawn.
    - ``total_pairs``: the pairs in the table when ``pairs`` is only its top (the listing says
      so); ``cross_host`` / ``total_cross_host``: the same for pairs of pages on different hosts
      (cross-host.html; the first ``detail_pages`` of them get pair pages too); ``run``: the
      clusters, failed files and dedup pages' content (None: those pages say there is none).
    - ``rank_frequency``: gives rank_frequency.png as drawn elsewhere from these ``rank_freq``,
      ``fit`` and ``stats["max_df"]`` (the report stage's figure task), or None to have it
      drawn here; not given: drawn here.

    The folder is built beside ``report_dir`` and swapped in whole when complete; an existing
    ``report_dir`` is replaced only if it holds nothing but report files.
    """
    page_size = operator.index(page_size)
    detail_pages = operator.index(detail_pages)
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    if detail_pages < 0:
        raise ValueError(f"detail_pages must be >= 0, got {detail_pages}")
    if not isinstance(stats, Mapping):
        raise TypeError(f"stats must be a mapping, got {type(stats).__name__}")
    pairs = list(pairs)
    cross = list(cross_host) if cross_host is not None else None
    run = run if run is not None else RunPages()
    hashes = boilerplate if callable(boilerplate) else _hash_views(boilerplate)
    for p in [*pairs, *(cross or ())]:
        if not isinstance(p, PairView):
            raise TypeError(f"pairs must be PairView objects, got {type(p).__name__}")
    if cross is None:
        cross = [p for p in pairs if p.cross_host]
    runs = [_run(r) for r in rank_freq]
    fof = powerlaw.freq_of_freq_from_runs(runs)  # also validates the runs
    shares = powerlaw.frequency_shares(fof)
    fit = dict(fit) if fit is not None else None

    final = Path(report_dir)
    _check_replaceable(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.parent / f".{final.name}.incomplete"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "pair").mkdir(parents=True)

    title = "webwinnow report" + (f" · {stats['tag']}" if isinstance(stats.get("tag"), str) and stats["tag"] else "")
    max_df = stats.get("max_df")
    derived: dict[str, Any] = {"hashes": shares["hashes"] if runs else None}
    if isinstance(max_df, int) and not isinstance(max_df, bool) and max_df > 0 and runs:
        derived["boilerplate_hashes"] = sum(h for d, h in fof.items() if d > max_df)

    # stats.json
    record = dict(stats)
    record["fit"] = fit
    record["shares"] = shares
    _write(staging / "stats.json", json.dumps(_jsonable(record), sort_keys=True, indent=2, allow_nan=False) + "\n")

    summary = headline_html(stats.get("headline") or ()) + summary_html(stats, fit, shares, derived)
    # the dedup and index-check pages exist, and are linked, only where the run has those tables
    present = tuple(page for page, there in (("dedup.html", run.dedup), ("contamination.html", run.contamination)) if there)
    token = pages.PAGES.set(present)
    try:
        _write_pair_pages(staging, title, summary, pairs, cross, page_size, detail_pages, total_pairs, total_cross_host)
        _write_run_pages(staging, title, run)
        _write_boilerplate_page(staging, title, hashes, runs, fit, shares, max_df, rank_frequency)
        _write_figures_page(staging, title, figures)
    finally:
        pages.PAGES.reset(token)
        forget_pages()
    replace_dir(staging, final)
    return final / "index.html"


def _write_pair_pages(
    staging: Path,
    title: str,
    summary: str,
    pairs: list[PairView],
    cross: list[PairView],
    page_size: int,
    detail_pages: int,
    total_pairs: int | None,
    total_cross_host: int | None,
) -> None:
    """index.html and pairs-NNN.html (the listing, the summary on the first page), cross-host.html,
    and pair/<doc_a>-<doc_b>.html for the first detail_pages of each listing."""
    listed = len(pairs)
    n_pages = max(1, math.ceil(listed / page_size))
    detailed = pairs[:detail_pages]
    cross_detailed = [p for p in cross[:detail_pages] if p.key not in {q.key for q in detailed}]
    keys = {p.key for p in detailed} | {p.key for p in cross_detailed}
    for page_no in range(1, n_pages + 1):
        chunk = pairs[(page_no - 1) * page_size : page_no * page_size]
        section = pages.pairs_section(chunk, page_no, n_pages, page_size, listed, keys, total_pairs, with_pages=len(detailed))
        html_text = pages.index_page(title, summary, section) if page_no == 1 else pages.pairs_page(title, page_no, section)
        _write(staging / pages.page_file(page_no), html_text)
    section = pages.pairs_section(
        cross,
        1,
        1,
        max(1, len(cross)),
        len(cross),
        keys,
        total_cross_host,
        heading="Pairs of pages on different hosts",
        with_pages=sum(p.key in keys for p in cross),
    )
    _write(staging / "cross-host.html", pages.pairs_page(title, 1, section, what="cross-host pairs"))
    for i, p in enumerate(detailed):
        prev_key = detailed[i - 1].key if i > 0 else None
        next_key = detailed[i + 1].key if i + 1 < len(detailed) else None
        html_text = pages.pair_page(p, i + 1, i // page_size + 1, prev_key, next_key, title)
        _write(staging / pages.pair_file(p), html_text)
    for p in cross_detailed:
        rank = next(i for i, q in enumerate(cross) if q.key == p.key) + 1
        html_text = pages.pair_page(
            p, rank, 1, None, None, title, back=("cross-host.html", "cross-host pairs"), what="Cross-host pair"
        )
        _write(staging / pages.pair_file(p), html_text)


def _write_run_pages(staging: Path, title: str, run: RunPages) -> None:
    _write(staging / "clusters.html", runpages.clusters_page(title, run))
    _write(staging / "failures.html", runpages.failures_page(title, run))
    if run.dedup is not None:
        _write(staging / "dedup.html", runpages.dedup_page(title, run))
    if run.contamination is not None:
        _write(staging / "contamination.html", runpages.contamination_page(title, run))


def _hash_views(hashes: Iterable[HashView]) -> list[HashView]:
    listed = list(hashes)
    for h in listed:
        if not isinstance(h, HashView):
            raise TypeError(f"boilerplate must be HashView objects, got {type(h).__name__}")
    return listed


def _write_boilerplate_page(
    staging: Path,
    title: str,
    hashes: list[HashView] | Callable[[], Iterable[HashView]],
    runs: list,
    fit: dict | None,
    shares: Mapping[str, Any],
    max_df: Any,
    drawn: Callable[[], bytes | None] | None,
) -> None:
    """rank_frequency.png (`drawn`'s, else drawn here) and boilerplate.html."""
    plot_ok, plot_note = True, ""
    png = drawn() if drawn is not None else None
    try:
        if png is not None:
            (staging / "rank_frequency.png").write_bytes(png)
        else:
            write_rank_frequency_png(staging / "rank_frequency.png", runs, fit, max_df)
    except ImportError as exc:
        plot_ok, plot_note = False, f"matplotlib is not installed ({exc}); install the project's dependencies"
        warnings.warn(f"report: rank_frequency.png not drawn: {plot_note}", RuntimeWarning, stacklevel=2)
    listed = _hash_views(hashes()) if callable(hashes) else hashes
    _write(staging / "boilerplate.html", runpages.boilerplate_page(title, listed, fit, shares, max_df, plot_ok, plot_note))


def _write_figures_page(staging: Path, title: str, figures: Callable[[Path], Sequence[FigureEntry]] | None) -> None:
    """figures/*.png (drawn by `figures`) and figures.html."""
    entries: list[FigureEntry] = []
    note = "No figures were drawn for this report (report.figure_docs = 0)."
    if figures is not None:
        (staging / "figures").mkdir()
        entries = list(figures(staging / "figures"))
        note = ""
    _write(staging / "figures.html", runpages.figures_page(title, entries, note))
