"""Pairs, clusters and copied passages of a run, and crawled text made safe to show.

Everything that comes from a page (URLs, passages, snippets) may hold markup or script: the HTML
built here escapes it, and DataFrames are meant to be shown with ``to_html(escape=True)``
(:func:`escaped_html`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ..core.distinct import distinct_counts
from ..text.visible import visible
from .run import RunOutput


def top_pairs(run: RunOutput, n: int = 20):
    """The n pairs the report lists first: by copied content (characters outside template, the
    smaller side), then the larger share of a page it is."""
    pairs = run.frame("pairs")
    pairs["content"] = pairs[["content_chars_a", "content_chars_b"]].min(axis=1)
    pairs["share"] = pairs[["content_share_a", "content_share_b"]].max(axis=1)
    return (
        pairs.sort_values(["content", "share", "doc_a", "doc_b"], ascending=[False, False, True, True])
        .head(n)
        .drop(columns=["content", "share"])
        .reset_index(drop=True)
    )


def cluster_table(run: RunOutput, n: int = 10):
    """The n largest near-duplicate clusters: cluster_id, size, and each member's URL."""
    clusters = run.frame("clusters")
    if clusters.empty:
        return clusters.assign(url=[])
    urls = run.urls(clusters["doc_id"].tolist())
    clusters["url"] = clusters["doc_id"].map(urls)
    biggest = clusters.groupby("cluster_id").size().sort_values(ascending=False, kind="stable").head(n).index
    chosen = clusters[clusters["cluster_id"].isin(biggest)]
    return chosen.sort_values(["cluster_size", "cluster_id", "doc_id"], ascending=[False, True, True]).reset_index(drop=True)


def passage_lengths(run: RunOutput) -> np.ndarray:
    """Every copied passage's length in normalized characters."""
    return run.table("passages", ["length"]).column(0).to_numpy()


def passage_length_counts(run: RunOutput) -> tuple[np.ndarray, np.ndarray]:
    """(distinct passage lengths, passages of each), read one row group at a time: as many
    values as there are distinct lengths, however many passages the crawl has."""
    from ..outputs.tables import read_row_groups

    counts: dict[int, int] = {}
    for part in read_row_groups(run.folder, "passages", ["length"]):
        values, n = distinct_counts(part.column(0).to_numpy())
        for v, c in zip(values.tolist(), n.tolist(), strict=True):
            counts[v] = counts.get(v, 0) + c
    lengths = np.array(sorted(counts), np.int64)
    return lengths, np.array([counts[v] for v in lengths.tolist()], np.int64)


def pair_sample(run: RunOutput, max_pairs: int = 100_000):
    """(resemblance, containment_a, containment_b of up to max_pairs pairs, the pairs in all): all
    of them when they are few, else the pairs of smallest hash of (doc_a, doc_b), a deterministic
    sample kept one row group at a time."""
    import pandas as pd
    import pyarrow as pa

    from ..outputs.tables import read_row_groups

    columns = ["resemblance", "containment_a", "containment_b"]
    kept: pa.Table | None = None
    total = 0
    for part in read_row_groups(run.folder, "pairs", ["doc_a", "doc_b", *columns]):
        total += part.num_rows
        a, b = (part.column(c).to_numpy().astype(np.uint64) for c in ("doc_a", "doc_b"))
        key = (a * np.uint64(0x9E3779B97F4A7C15)) ^ (b * np.uint64(0xC2B2AE3D27D4EB4F))  # wraps: a mix, not a sum
        part = part.select(columns).append_column("_key", pa.array(key))
        kept = part if kept is None else pa.concat_tables([kept, part])
        if kept.num_rows > 2 * max_pairs:
            kept = kept.sort_by("_key").slice(0, max_pairs)
    if kept is None:
        return pd.DataFrame(columns=columns), 0
    return kept.sort_by("_key").slice(0, max_pairs).select(columns).to_pandas(), total


@dataclass(frozen=True)
class Passage:
    length: int  # normalized characters
    start_a: int
    end_a: int
    start_b: int
    end_b: int
    text_a: str  # the original text of each side: crawled, escape it to show it
    text_b: str


def pair_passages(run: RunOutput, doc_a: int, doc_b: int, n: int = 5) -> list[Passage]:
    """The n longest copied passages of one pair, as the two documents' own text."""
    spans = run.frame("passages", filters=[("doc_a", "=", int(doc_a)), ("doc_b", "=", int(doc_b))])
    spans = spans.sort_values(["length", "start_a"], ascending=[False, True]).head(n)
    texts: dict[int, str] = {}
    for ids, chunk in run.texts(np.array([doc_a, doc_b], np.int64)):
        texts.update(zip(ids.tolist(), chunk, strict=True))
    a, b = texts.get(int(doc_a), ""), texts.get(int(doc_b), "")
    return [
        Passage(
            int(s.length),
            int(s.start_a),
            int(s.end_a),
            int(s.start_b),
            int(s.end_b),
            a[s.start_a : s.end_a],
            b[s.start_b : s.end_b],
        )
        for s in spans.itertuples(index=False)
    ]


def side_by_side_html(passages: list[Passage], url_a: str | None, url_b: str | None, max_chars: int = 800) -> str:
    """The passages as an HTML table, one row per passage, both sides escaped."""

    def cell(text: str) -> str:
        cut = text if len(text) <= max_chars else text[:max_chars] + " …"
        return f'<td style="vertical-align:top;white-space:pre-wrap;text-align:left">{html.escape(visible(cut))}</td>'

    head = (
        f"<tr><th>normalized chars</th><th style='text-align:left'>{html.escape(visible(url_a or ''))}</th>"
        f"<th style='text-align:left'>{html.escape(visible(url_b or ''))}</th></tr>"
    )
    rows = "".join(f"<tr><td>{p.length:,}</td>{cell(p.text_a)}{cell(p.text_b)}</tr>" for p in passages)
    return f"<table>{head}{rows}</table>"


def escaped_html(frame, **kwargs) -> str:
    """A DataFrame as HTML with every cell escaped (crawled text never becomes markup) and its
    bidirectional and control characters written visibly (text.visible)."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].dtype == object:
            shown[column] = shown[column].map(lambda v: visible(v) if isinstance(v, str) else v)
    return shown.to_html(escape=True, **kwargs)
