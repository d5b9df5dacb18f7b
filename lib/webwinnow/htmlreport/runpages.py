"""The report's pages beside the pairs: boilerplate, figures, cross-host pairs, clusters, failed
files and the dedup summary. Every crawl-derived string goes through ``esc``, like pages.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .highlight import esc
from .model import FigureEntry, HashView, RunPages, unit_noun
from .pages import DASH, _is_num, fit_sentence, fmt_int, fmt_pct, fmt_value, nav_html, page, shares_sentence, url_html

# ---------------------------------------------------------------------------- boilerplate


SNIPPET_CHARS = 240


def boilerplate_page(
    title: str,
    hashes: Sequence[HashView],
    fit: Mapping[str, Any] | None,
    shares: Mapping[str, Any] | None,
    max_df: Any,
    plot_ok: bool,
    plot_note: str,
) -> str:
    fit_html, shares_html = fit_sentence(fit), shares_sentence(shares)
    rows = []
    for i, h in enumerate(hashes, 1):
        snip = h.snippet
        if snip is None:
            snip_html = DASH
        else:
            snip_html = esc(snip[:SNIPPET_CHARS]) + ("…" if len(snip) > SNIPPET_CHARS else "")
        above = ""
        if _is_num(max_df) and max_df and _is_num(h.docs) and h.docs > max_df:
            above = ' <span class="muted" title="above max_df: never paired">●</span>'
        rows.append(
            f'<tr><td class="num">{i:,}</td><td class="num">{fmt_int(h.docs)}{above}</td>'
            f'<td class="num">{fmt_int(h.occurrences)}</td><td class="num">{fmt_int(h.hosts)}</td>'
            f'<td class="snip">{snip_html}</td><td class="num"><code>{h.hash & 0xFFFFFFFFFFFFFFFF:016x}</code></td></tr>'
        )
    table = (
        '<table><thead><tr><th class="num">rank</th><th class="num">documents</th><th class="num">occurrences</th>'
        '<th class="num">hosts</th><th>snippet (original text where the fingerprinted k-gram starts)</th>'
        '<th class="num">hash</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else '<p class="muted">No fingerprint hashes listed.</p>'
    )
    md = ""
    if max_df is not None:
        md = (
            f"<p>max_df = <b>{fmt_value(max_df)}</b>: hashes in more documents than this are boilerplate "
            "(navigation, footers, licences, templates) and are reported here but never used to pair "
            "documents (● in the table).</p>"
        )
    img = (
        '<p><img class="plot" src="rank_frequency.png" width="880" height="605" '
        'alt="fingerprint rank-frequency plot, log-log, with the fitted power law"></p>'
        if plot_ok
        else f'<p class="note">No plot: {esc(plot_note)}</p>'
    )
    fit_note = (
        "Least squares of log10(documents) on log10(rank) over the ranks whose hashes are in at least "
        "min_docs documents (the long flat tail of hashes seen once is left out), "
        + ("every decade of ranks weighted equally." if (fit or {}).get("weighting") == "log" else "one point per rank.")
    )
    body = (
        f'{nav_html()}<h1>{esc(title)} <span class="muted">· boilerplate</span></h1>'
        "<h2>Fingerprint rank–frequency</h2>"
        "<p>Every distinct fingerprint hash ranked by the number of documents holding it, most frequent first. "
        "Web text follows a power law over the frequent part; most hashes occur in a single document.</p>"
        f'<dl class="summary"><dt>power law</dt><dd>{fit_html}<br><span class="muted">{fit_note}</span></dd>'
        f'<dt>hashes seen in</dt><dd>{shares_html} <span class="muted">of the distinct hashes '
        "(the paper reports 82% / 14% / 2% in 1 / 2 / 3 documents for web pages)</span></dd></dl>"
        f"{md}{img}"
        f"<h2>Most frequent fingerprints</h2>{table}"
    )
    return page(f"{title} · boilerplate", body)


# ---------------------------------------------------------------------------- figures


def figures_page(title: str, entries: Sequence[FigureEntry], note: str = "") -> str:
    """figures.html: the PNGs of figures/, each with its title and caption (or why it is missing)."""
    parts = [f'{nav_html()}<h1>{esc(title)} <span class="muted">· figures</span></h1>']
    if note:
        parts.append(f'<p class="note">{esc(note)}</p>')
    if entries:
        parts.append(
            "<p>The plots of the notebooks in <code>notebooks/</code>, drawn for this run "
            "(per-document analyses on a sample of documents; the captions say which).</p>"
        )
        parts.append("<ul>" + "".join(f'<li><a href="#{esc(e.file)}">{esc(e.title)}</a></li>' for e in entries) + "</ul>")
    for e in entries:
        where = f' <span class="muted">(notebooks/{esc(e.notebook)})</span>' if e.notebook else ""
        parts.append(f'<h2 id="{esc(e.file)}">{esc(e.title)}{where}</h2><p>{esc(e.caption)}</p>')
        if e.error:
            parts.append(f'<p class="note">Not drawn: {esc(e.error)}</p>')
        else:
            parts.append(
                f'<p><a href="figures/{esc(e.file)}"><img class="plot" src="figures/{esc(e.file)}" alt="{esc(e.title)}"></a></p>'
            )
    return page(f"{title} · figures", "".join(parts))


# ---------------------------------------------------------------------------- the run's other pages


def _table(head: Sequence[tuple[str, bool]], rows: list[str]) -> str:
    cells = "".join(f'<th class="num">{esc(h)}</th>' if num else f"<th>{esc(h)}</th>" for h, num in head)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def clusters_page(title: str, run: RunPages) -> str:
    """The largest near-duplicate clusters, each with its earliest member and some members."""
    rows = []
    for c in run.clusters:
        members = "".join(f'<li>{url_html(url)} <span class="muted">doc {doc:d}</span></li>' for doc, url in c.members)
        more = c.size - len(c.members)
        rows.append(
            f'<tr><td class="num">{c.cluster_id:d}</td><td class="num">{c.size:,}</td>'
            f'<td class="num">{c.identical:,}</td>'
            f'<td class="url">{url_html(c.source_url)}<span class="docid">doc {c.source_doc:d}</span></td>'
            f'<td class="url"><ul class="members">{members}</ul>'
            + (f'<span class="muted">and {more:,} more</span>' if more > 0 else "")
            + "</td></tr>"
        )
    listing = (
        _table(
            (
                ("cluster", True),
                ("pages", True),
                ("identical", True),
                ("earliest page (kept by dedup)", False),
                ("members", False),
            ),
            rows,
        )
        if rows
        else '<p class="muted">No clusters: no pages are near-duplicates or identical.</p>'
    )
    shown = (
        f"the {len(run.clusters):,} largest of {run.total_clusters:,}"
        if run.total_clusters > len(run.clusters)
        else f"{run.total_clusters:,}"
    )
    body = (
        f'{nav_html()}<h1>{esc(title)} <span class="muted">· clusters</span></h1>'
        f'<p class="muted">Near-duplicate clusters ({shown}): pages linked by pairs at least '
        "clusters.resemblance alike, and pages with identical normalized text. "
        "“identical”: the most pages of the cluster sharing one exact text.</p>" + listing
    )
    return page(f"{title} · clusters", body)


def failures_page(title: str, run: RunPages) -> str:
    """Input files that failed, and what became of the records that gave no text."""
    files = [
        f'<tr><td class="url">{esc(f)}</td><td>{esc(reason or "")}</td><td class="num">{fmt_int(seen)}</td>'
        f'<td class="num">{fmt_int(parsed)}</td></tr>'
        for f, reason, seen, parsed in run.failed_files
    ]
    outcomes = [
        f'<tr><td>{esc(status)}</td><td>{esc(reason or "")}</td><td class="num">{n:,}</td></tr>'
        for status, reason, n in run.record_outcomes
    ]
    body = (
        f'{nav_html()}<h1>{esc(title)} <span class="muted">· failed files and records</span></h1>'
        "<h2>Input files that failed</h2>"
        + (
            _table((("file", False), ("reason", False), ("records seen", True), ("parsed", True)), files)
            if files
            else '<p class="muted">No input file failed: every file was read to its end.</p>'
        )
        + "<h2>Records that gave no text</h2>"
        '<p class="muted">Per outcome and reason (the ledger table has one row per record).</p>'
        + (
            _table((("outcome", False), ("reason", False), ("records", True)), outcomes)
            if outcomes
            else '<p class="muted">Every HTML record became a document.</p>'
        )
    )
    return page(f"{title} · failed files", body)


def dedup_page(title: str, run: RunPages) -> str:
    """What `webwinnow dedup` removed, and the most trimmed pages."""
    d = run.dedup
    if d is None:
        body = (
            f'{nav_html()}<h1>{esc(title)} <span class="muted">· dedup</span></h1>'
            '<p class="muted">No deduplicated corpus in this output: run <code>webwinnow dedup --out DIR</code> '
            "(or <code>webwinnow run ... --dedup</code>), then the report again.</p>"
        )
        return page(f"{title} · dedup", body)
    share = d["removed_chars"] / d["original_chars"] if d.get("original_chars") else None
    facts = (
        '<dl class="summary">'
        f"<dt>documents kept</dt><dd>{fmt_int(d['kept'])} of {fmt_int(d['documents'])}</dd>"
        f"<dt>dropped as near-duplicates</dt><dd>{fmt_int(d['near_duplicates'])}</dd>"
        f"<dt>dropped as emptied</dt><dd>{fmt_int(d['emptied'])}</dd>"
        f"<dt>characters removed</dt><dd>{fmt_int(d['removed_chars'])} of {fmt_int(d['original_chars'])}"
        f" ({fmt_pct(share)})</dd>"
        f"<dt>copied passages cut</dt><dd>{fmt_int(d['copied_chars_removed'])} characters from "
        f"{fmt_int(d['trimmed_documents'])} kept pages</dd>"
        f"<dt>template text cut</dt><dd>{fmt_int(d['template_chars_removed'])} characters"
        f"{'' if d.get('strip_template') else ' (--strip-template not given)'}</dd>"
        f"<dt>passages cut from</dt><dd>{fmt_int(d['min_passage'])} normalized characters</dd></dl>"
    )
    rows = [
        f'<tr><td class="url">{url_html(url)}<span class="docid">doc {doc:d}</span></td>'
        f'<td class="num">{original:,}</td><td class="num">{removed:,}</td>'
        f"<td>{esc(reason) if reason else DASH}</td></tr>"
        for doc, url, original, removed, reason in run.trimmed
    ]
    body = f'{nav_html()}<h1>{esc(title)} <span class="muted">· dedup</span></h1>{facts}<h2>The most trimmed pages</h2>' + (
        _table((("page", False), ("characters", True), ("removed", True), ("dropped", False)), rows)
        if rows
        else '<p class="muted">Nothing was removed.</p>'
    )
    return page(f"{title} · dedup", body)


def contamination_page(title: str, run: RunPages) -> str:
    """A check's answer per new document (a benchmark item): how much of it the index holds."""
    c = run.contamination
    head = f'{nav_html()}<h1>{esc(title)} <span class="muted">· index check</span></h1>'
    if c is None:
        body = (
            head + '<p class="muted">This output is a run, not a check: check new crawl files or a benchmark '
            "against an index with <code>webwinnow check INPUT... --index IDX --out DIR</code>.</p>"
        )
        return page(f"{title} · index check", body)
    noun = unit_noun((c.get("settings") or {}).get("unit"))
    facts = (
        '<dl class="summary">'
        f"<dt>index</dt><dd>{esc(str(c.get('index', '')))} ({fmt_int(c.get('index_documents'))} documents)</dd>"
        f"<dt>new documents</dt><dd>{fmt_int(c['documents'])}</dd>"
        f"<dt>sharing a passage with the index</dt><dd>{fmt_int(c['contaminated'])}</dd>"
        f"<dt>at least half covered</dt><dd>{fmt_int(c['half_covered'])}</dd>"
        f"<dt>wholly covered</dt><dd>{fmt_int(c['covered'])}</dd>"
        f"<dt>guarantee</dt><dd>every shared passage of {fmt_int(c['t'])} {noun} outside template, "
        "made of fingerprints below the cap, is found, with exact spans on both sides</dd></dl>"
    )
    rows = [
        f'<tr><td class="url">{url_html(item) if item is not None else DASH}</td><td class="num">{norm:,}</td>'
        f'<td class="num">{chars:,}</td><td class="num">{fmt_pct(share)}</td><td class="num">{longest:,}</td>'
        f'<td class="num">{indexed:,}</td><td class="url">{"<br>".join(url_html(u) for u in urls)}</td></tr>'
        for item, norm, chars, share, longest, indexed, urls in run.covered
    ]
    body = (
        head + facts + "<h2>The most covered new documents</h2>"
        f'<p class="muted">Covered: {noun} inside a passage shared with an indexed document '
        "(overlaps counted once). Every span, on both sides, is in the contamination table.</p>"
        + (
            _table(
                (
                    ("item or page", False),
                    (noun.split()[-1], True),
                    ("covered", True),
                    ("share", True),
                    ("longest", True),
                    ("indexed documents", True),
                    ("first matches", False),
                ),
                rows,
            )
            if rows
            else '<p class="muted">No new document shares a passage with the index.</p>'
        )
    )
    return page(f"{title} · index check", body)
