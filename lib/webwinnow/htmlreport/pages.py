"""The report's HTML pages, as strings. Every crawl-derived string goes through ``esc``.

No JavaScript anywhere; every page carries a Content-Security-Policy that forbids scripts,
frames, fonts, media, forms and any remote load, so text from crawled pages cannot execute even
if something were left unescaped. Links: relative ones built from integers, and crawl URLs only
when they are plain http(s) URLs (``safe_href``).
"""

from __future__ import annotations

import contextvars
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..text.visible import href_safe
from .highlight import MAX_TEXT_CHARS, esc, esc_all, esc_text, page_as_is, render_text
from .model import PairView

CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

CSS = """
:root { color-scheme: light; --fg: #1d232a; --muted: #66707a; --line: #d8dde3; --bg2: #f4f6f8;
  --mark: #ffe27a; --accent: #1a5fb4; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--fg); background: #fff; }
main { max-width: 1500px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: .2rem 0 .6rem; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
a { color: var(--accent); }
nav.top { font-size: .92rem; margin-bottom: .6rem; }
nav.top a { margin-right: 1rem; }
.muted { color: var(--muted); }
.note { background: #fff4e0; border-left: 4px solid #e8a33d; padding: .45rem .8rem; margin: .6rem 0; }
.warn { background: #fde8e8; border-left: 4px solid #c0392b; padding: .45rem .8rem; margin: .6rem 0; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .45rem; text-align: left; vertical-align: top; }
th { background: var(--bg2); position: sticky; top: 0; font-weight: 600; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.url { overflow-wrap: anywhere; word-break: break-word; min-width: 14rem; max-width: 34rem; }
td.snip { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .82rem; white-space: pre-wrap;
  overflow-wrap: anywhere; max-width: 60rem; }
.docid { color: var(--muted); font-size: .8rem; display: block; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1.2rem; margin: 0; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; font-variant-numeric: tabular-nums; }
.headline p { font-size: 1.05rem; margin: .25rem 0; max-width: 60rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(19rem, 1fr)); gap: .5rem 2rem; }
.pager { margin: .8rem 0; display: flex; flex-wrap: wrap; gap: .3rem; align-items: center; }
.pager a, .pager span { padding: .1rem .5rem; border: 1px solid var(--line); border-radius: 4px; text-decoration: none; }
.pager span.cur { background: var(--accent); color: #fff; border-color: var(--accent); }
.pager span.gap { border: none; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.col h3 { font-size: .95rem; margin: .2rem 0 .3rem; overflow-wrap: anywhere; }
.text { height: 72vh; overflow: auto; border: 1px solid var(--line); border-radius: 4px; padding: .6rem .8rem;
  white-space: pre-wrap; overflow-wrap: anywhere; font: 14px/1.5 Georgia, "DejaVu Serif", serif; background: #fffefb; }
mark { background: var(--mark); color: inherit; padding: 0; }
a.pn { text-decoration: none; }
a.pn::before { content: attr(data-n); font: 600 10px/1 system-ui, sans-serif; color: #fff; background: #b5462f;
  border-radius: 3px; padding: 1px 3px; margin: 0 2px; vertical-align: super; }
a.pn:target::before { background: #1a5fb4; outline: 3px solid #7fb0ff; }
.bar { display: inline-block; height: .55rem; background: #e07b39; vertical-align: middle; margin-right: .35rem; }
.src { font-size: .72rem; background: #2f7d32; color: #fff; border-radius: 3px; padding: 0 4px; margin-left: .3rem; }
h1.pair { overflow-wrap: anywhere; font-size: 1.2rem; }
details.lead { color: var(--muted); }
details.lead summary { cursor: pointer; font: .85rem system-ui, sans-serif; }
details.lead summary::after { content: attr(data-n); }
table.stages td.what { color: var(--muted); }
img.plot { max-width: 100%; height: auto; border: 1px solid var(--line); }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .85em; }
""".strip()

_SAFE_URL = re.compile(r"https?://[^/\s\x00-\x1f\x7f-\x9f][^\s\x00-\x1f\x7f-\x9f]*", re.IGNORECASE)
DASH = '<span class="muted">—</span>'


def safe_href(url: object) -> str | None:
    """The URL if it is a plain absolute http(s) URL without whitespace or control characters
    (so no browser can read it as another scheme), else None: shown as text, never linked."""
    if isinstance(url, str) and _SAFE_URL.fullmatch(url):
        return url
    return None


def url_html(url: object) -> str:
    if url is None:
        return DASH
    href = safe_href(url)
    if href is None:
        return f'<span class="rawurl">{esc(url)}</span>'
    return f'<a href="{html.escape(href_safe(href), quote=True)}" rel="noopener noreferrer">{esc(url)}</a>'


def page(title: str, body: str, *, css: str = CSS) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------- formatting


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and not math.isfinite(v))


def fmt_int(v: Any) -> str:
    if v is None:
        return DASH
    if isinstance(v, bool):
        return esc(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return f"{int(v):,}"
    if _is_num(v):
        return f"{v:,.3f}"
    return esc(v)


def fmt_pct(v: Any, digits: int = 1) -> str:
    if not _is_num(v):
        return DASH if v is None else esc(v)
    return f"{100.0 * v:.{digits}f}%"


def fmt_float(v: Any, digits: int = 3) -> str:
    if not _is_num(v):
        return DASH if v is None else esc(v)
    return f"{v:.{digits}f}"


def fmt_value(v: Any) -> str:
    """Any stats value as HTML text."""
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.6g}" if math.isfinite(v) else esc(v)
    if isinstance(v, str):
        return esc(v)
    try:
        text = json.dumps(v, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = str(v)
    if len(text) > 600:
        text = text[:600] + " …"
    return f"<code>{esc(text)}</code>"


# ---------------------------------------------------------------------------- summary


def fit_sentence(fit: Mapping[str, Any] | None) -> str:
    if not fit:
        return DASH
    if fit.get("slope") is None:
        return f'<span class="muted">no fit: {esc(fit.get("reason", "not computed"))}</span>'
    parts = [f"slope <b>{fmt_float(fit['slope'])}</b>"]
    if fit.get("rank_min") is not None and fit.get("rank_max") is not None:
        rng = f"ranks {fmt_int(fit['rank_min'])}–{fmt_int(fit['rank_max'])}"
        if fit.get("min_docs") is not None:
            rng += f" (docs ≥ {fmt_int(fit['min_docs'])})"
        parts.append(rng)
    if fit.get("r2") is not None:
        parts.append(f"R² {fmt_float(fit['r2'])}")
    return " · ".join(parts)


def shares_sentence(shares: Mapping[str, Any] | None) -> str:
    if not shares or not shares.get("hashes"):
        return DASH
    return (
        f"1 doc {fmt_pct(shares.get('once'))} · 2 docs {fmt_pct(shares.get('twice'))} · "
        f"3 docs {fmt_pct(shares.get('three_times'))} · more {fmt_pct(shares.get('more'))}"
    )


def pair_file(p: PairView) -> str:
    return f"pair/{p.key}.html"


def page_file(n: int) -> str:
    return "index.html" if n == 1 else f"pairs-{n:03d}.html"


def pager_html(current: int, pages: int, prefix: str = "") -> str:
    if pages <= 1:
        return ""
    if pages <= 25:
        shown = list(range(1, pages + 1))
    else:
        shown = sorted({1, 2, pages - 1, pages, *range(max(1, current - 3), min(pages, current + 3) + 1)})
    out = ['<nav class="pager" aria-label="pages of pairs"><span class="muted">pages:</span>']
    if current > 1:
        out.append(f'<a href="{prefix}{page_file(current - 1)}" rel="prev">← previous</a>')
    last = 0
    for n in shown:
        if n > last + 1:
            out.append('<span class="gap">…</span>')
        if n == current:
            out.append(f'<span class="cur">{n}</span>')
        else:
            out.append(f'<a href="{prefix}{page_file(n)}">{n}</a>')
        last = n
    if current < pages:
        out.append(f'<a href="{prefix}{page_file(current + 1)}" rel="next">next →</a>')
    out.append("</nav>")
    return "".join(out)


def _bar(v: Any) -> str:
    if not _is_num(v):
        return ""
    width = max(0.0, min(1.0, float(v))) * 3.0
    return f'<span class="bar" style="width:{width:.2f}rem"></span>'


_BASES = {"last_modified": "HTTP Last-Modified", "warc_date": "WARC-Date (fetch time)", "http_date": "HTTP Date"}


def source_html(p: PairView) -> str:
    """Which page is the likely original, and on what basis (PAIRS.source, source_basis)."""
    basis = esc(_BASES.get(p.source_basis or "", p.source_basis or ""))
    if p.source in ("a", "b"):
        return f"document {p.source.upper()}: the earlier by {basis}"
    if p.source == "tie":
        return f"undecided: both have the same {basis}"
    return "unknown: the two pages have no time in common (no WARC-Date or HTTP date on both)" if p.source else DASH


def _page_cell(url: str | None, doc: int, host: str | None, when: str | None, is_source: bool) -> str:
    """A page of a listed pair: its URL, host, the date the source was chosen on, doc id."""
    badge = ' <span class="src" title="the likely original of the two">source</span>' if is_source else ""
    where = " · ".join(esc(x) for x in (host, (when or "")[:10]) if x)
    return f'<td class="url">{url_html(url)}{badge}<span class="docid">{where} · doc {doc:d}</span></td>'


def _content_cell(p: PairView) -> str:
    if p.content_a is None or p.content_b is None:
        return f'<td class="num">{fmt_int(p.copied_a)} / {fmt_int(p.copied_b)}</td>'
    share = " / ".join(fmt_pct(x, 0) for x in (p.share_a, p.share_b))
    return f'<td class="num">{fmt_int(min(p.content_a, p.content_b))}<span class="docid">{share} of the pages</span></td>'


def pairs_table(pairs: Sequence[PairView], first_rank: int, detailed: set[str] | int) -> str:
    """Pairs from rank first_rank on; a pair page link for those whose key is in `detailed` (or,
    given a number, for ranks up to it)."""
    if not pairs:
        return '<p class="muted">No pairs: no two documents share copied content (outside the boilerplate).</p>'
    head = (
        "<thead><tr>"
        '<th class="num">#</th><th>page A</th><th>page B</th>'
        f'<th class="num" title="{pairs[0].noun} copied outside template text (the smaller side), '
        'and their share of each page">content copied</th>'
        '<th class="num" title="share of the copied characters that is site template text">template</th>'
        '<th class="num" title="containment_a / containment_b: share of A\'s fingerprints also in B, and of B\'s in A">'
        "A in B / B in A</th>"
        '<th class="num" title="resemblance: shared / (fp_a + fp_b − shared)">resemblance</th>'
        "<th>pair page</th></tr></thead>"
    )
    rows = []
    for i, p in enumerate(pairs):
        rank = first_rank + i
        has_page = rank <= detailed if isinstance(detailed, int) else p.key in detailed
        link = (
            f'<a href="{pair_file(p)}">view</a>'
            + (' <span class="muted" title="passage list capped">*</span>' if p.capped else "")
            if has_page
            else DASH
        )
        rows.append(
            "<tr>"
            f'<td class="num">{rank:,}</td>'
            + _page_cell(p.url_a, p.doc_a, p.host_a, p.deciding_time("a"), p.source == "a")
            + _page_cell(p.url_b, p.doc_b, p.host_b, p.deciding_time("b"), p.source == "b")
            + _content_cell(p)
            + f'<td class="num">{fmt_pct(p.template_share, 0) if p.template_share is not None else DASH}</td>'
            f'<td class="num">{_bar(p.containment_a)}{fmt_pct(p.containment_a)} / {fmt_pct(p.containment_b)}</td>'
            f'<td class="num">{fmt_float(p.resemblance)}</td>'
            f"<td>{link}</td></tr>"
        )
    return f'<table class="pairs">{head}<tbody>{"".join(rows)}</tbody></table>'


#: The pages a report has besides its listing and pair pages; dedup.html and contamination.html
#: only where the run has those tables (write_report sets PAGES while it writes one report).
OPTIONAL_PAGES = ("dedup.html", "contamination.html")
PAGES: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("pages", default=OPTIONAL_PAGES)
_LINKS = (
    ("index.html", "summary &amp; top pairs"),
    ("cross-host.html", "cross-host pairs"),
    ("clusters.html", "clusters"),
    ("dedup.html", "dedup"),
    ("contamination.html", "index check"),
    ("failures.html", "failed files"),
    ("boilerplate.html", "boilerplate &amp; rank–frequency"),
    ("figures.html", "figures"),
    ("stats.json", "stats.json"),
)


def nav_html(prefix: str = "", extra: str = "") -> str:
    """Every page's navigation: the same links on every page of a report, then `extra`."""
    present = PAGES.get()
    shown = "".join(
        f'<a href="{prefix}{href}">{label}</a>' for href, label in _LINKS if href not in OPTIONAL_PAGES or href in present
    )
    return f'<nav class="top">{shown}{extra}</nav>'


def pairs_section(
    pairs: Sequence[PairView],
    page_no: int,
    pages: int,
    page_size: int,
    listed: int,
    detailed: set[str] | int,
    total: int | None = None,
    heading: str = "Top pairs",
    with_pages: int | None = None,
) -> str:
    """One page of a listing of `listed` pairs (of `total` in the table when more), `with_pages`
    of which have a side-by-side page."""
    first = (page_no - 1) * page_size + 1
    last = first + len(pairs) - 1
    n_detailed = with_pages if with_pages is not None else (len(detailed) if isinstance(detailed, set) else min(detailed, listed))
    of = f"of {listed:,}" if total is None or total <= listed else f"of the top {listed:,} ({total:,} pairs in all)"
    caption = (
        f'<p class="muted">Pairs {first:,}–{last:,} {of}, by copied content ('
        f"{pairs[0].noun if pairs else 'characters'} outside site template, the smaller side), then the larger share "
        f"of a page. Side-by-side pages for "
        f"{n_detailed:,} of them.</p>"
        if listed
        else ""
    )
    pager = pager_html(page_no, pages)
    return f"<h2>{esc(heading)}</h2>{caption}{pager}{pairs_table(pairs, first, detailed)}{pager}"


def index_page(title: str, summary: str, pairs_html: str) -> str:
    body = f"{nav_html()}<h1>{esc(title)}</h1>{summary}{pairs_html}"
    return page(title, body)


def pairs_page(title: str, page_no: int, pairs_html: str, what: str = "") -> str:
    what = what or f"pairs, page {page_no}"
    body = f'{nav_html()}<h1>{esc(title)} <span class="muted">· {esc(what)}</span></h1>{pairs_html}'
    return page(f"{title} · {what}", body)


# ---------------------------------------------------------------------------- one pair


#: Text shown above a page's first copied passage; the rest before it is folded away, so both
#: panes open at (near) their first passage without a script.
LEAD_CHARS = 300


def _side(text: str | None, spans: list[tuple[int, int, int]], side: str, other: str) -> tuple[str, set[int], str]:
    """(text HTML, passages anchored, notes HTML) for one side."""
    if text is None:
        return "", set(), '<p class="note">The text of this document is not available (not loaded for the report).</p>'
    notes = ""
    shown = text
    if len(text) > MAX_TEXT_CHARS:
        shown = text[:MAX_TEXT_CHARS]
        notes = (
            f'<p class="note">Long text: showing the first {MAX_TEXT_CHARS:,} of {len(text):,} characters; '
            "passages past that point are listed below but not highlighted.</p>"
        )
    starts = [s for _, s, e in spans if e > s and s < len(shown)]
    fold = max(0, min(starts, default=0) - LEAD_CHARS)
    if fold:  # cut at a line break where there is one near, for a clean start
        line = shown.rfind("\n", max(0, fold - LEAD_CHARS), fold)
        fold = line + 1 if line >= 0 else fold
    as_is = page_as_is(text)
    body, anchored = render_text(shown[fold:], [(n, s - fold, e - fold) for n, s, e in spans], side, other, as_is)
    if fold:
        # the label is drawn by CSS from data-n, so it adds nothing to the page's text
        body = (
            f'<details class="lead"><summary data-n="{fold:,} characters before the first copied passage">'
            f"</summary>{esc_text(shown[:fold], as_is)}</details>{body}"
        )
    if any(e > len(text) for _, _, e in spans):
        notes += '<p class="warn">Some passage offsets lie past the end of this text (clipped): the text may not be the one the passages were computed on.</p>'
    return body, anchored, notes


def pair_page(
    p: PairView,
    rank: int,
    listing_page: int,
    prev_key: str | None,
    next_key: str | None,
    title: str,
    back: tuple[str, str] | None = None,
    what: str = "Pair",
) -> str:
    """One pair side by side; `back` = (href, label) of the list it was reached from when not
    the top pairs' page listing_page."""
    # Passages numbered in order of their position in A (then B), the same number on both sides.
    order = sorted(range(len(p.passages)), key=lambda i: (p.passages[i][0], p.passages[i][2], i))
    numbered = [(n + 1, p.passages[i]) for n, i in enumerate(order)]
    spans_a = [(n, q[0], q[1]) for n, q in numbered]
    spans_b = [(n, q[2], q[3]) for n, q in numbered]
    html_a, anch_a, notes_a = _side(p.text_a, spans_a, "a", "b")
    html_b, anch_b, notes_b = _side(p.text_b, spans_b, "b", "a")

    href, label = back or (page_file(listing_page), f"pairs page {listing_page}")
    links = [f'<a href="../{href}">← {esc(label)}</a>']
    if prev_key:
        links.append(f'<a href="{prev_key}.html" rel="prev">previous pair</a>')
    if next_key:
        links.append(f'<a href="{next_key}.html" rel="next">next pair</a>')
    nav = nav_html("../", "".join(links))

    def page_facts(x: str, doc: int, url: str | None, host: str | None, warc: str | None, offset: int | None) -> str:
        where = f"{esc(warc)} at offset {fmt_int(offset)}" if warc else DASH
        times = []
        for basis, when in p.times(x.lower()):
            label = esc(_BASES[basis].split(" (")[0])
            if basis == p.source_basis and p.source in ("a", "b", "tie"):
                times.append(
                    f'<strong class="decided" title="the time the source was chosen on">{label} {esc(when or "—")}</strong>'
                )
            else:
                times.append(f"{label} {esc(when or '—')}")
        return (
            f'<dt>page {x}</dt><dd>{url_html(url)}<span class="docid">host {esc(host or "—")} · {where} · doc {doc:d}'
            f'</span><span class="docid times">{" · ".join(times)}</span></dd>'
        )

    copied_a, copied_b = p.copied_a, p.copied_b  # each a union of every passage's span
    content = ""
    if p.content_a is not None and p.content_b is not None:
        content = (
            f"<dt>copied content</dt><dd>{fmt_int(p.content_a)} {p.noun} outside template in A"
            f" ({fmt_pct(p.share_a)} of the page) · {fmt_int(p.content_b)} in B ({fmt_pct(p.share_b)})"
            f" · template {fmt_pct(p.template_share, 0)} of the {fmt_int(p.norm_copied_a)} / "
            f"{fmt_int(p.norm_copied_b)} {p.noun} copied</dd>"
        )
    facts = (
        '<dl class="summary">'
        + page_facts("A", p.doc_a, p.url_a, p.host_a, p.warc_a, p.offset_a)
        + page_facts("B", p.doc_b, p.url_b, p.host_b, p.warc_b, p.offset_b)
        + f"<dt>likely source</dt><dd>{source_html(p)}</dd>"
        + content
        + f"<dt>containment</dt><dd>A in B {fmt_pct(p.containment_a)} · B in A {fmt_pct(p.containment_b)}</dd>"
        f"<dt>resemblance</dt><dd>{fmt_float(p.resemblance)}</dd>"
        f"<dt>shared fingerprints</dt><dd>{fmt_int(p.shared)} of {fmt_int(p.fp_a)} (A) and {fmt_int(p.fp_b)} (B)</dd>"
        f'<dt title="the copied spans in the pages as written: markup-free text, not normalized">copied text as '
        f"written</dt><dd>{fmt_int(copied_a)} characters of A's text"
        + (f" ({fmt_pct(copied_a / len(p.text_a))})" if p.text_a else "")
        + f" · {fmt_int(copied_b)} characters of B's text"
        + (f" ({fmt_pct(copied_b / len(p.text_b))})" if p.text_b else "")
        + f"</dd><dt>passages</dt><dd>{len(p.passages):,}</dd></dl>"
    )
    capped = (
        '<p class="note">This pair hit the passage search\'s cap (passages.max_spans or passages.max_compared): '
        "more copied passages may exist than are listed here.</p>"
        if p.capped
        else ""
    )
    no_passages = (
        '<p class="note">No copied passages were recorded for this pair (it shares fingerprints, '
        "but no passage was grown from them, or passages were not computed).</p>"
        if not p.passages
        else ""
    )

    def column(label: str, doc: int, url: str | None, body: str, notes: str, side: str) -> str:
        text_div = f'<div class="text" id="text-{side}">{body}</div>' if body or notes == "" else ""
        source = ' <span class="src">source</span>' if p.source == side else ""
        return (
            f'<div class="col"><h3>{label}{source} · {url_html(url)} <span class="docid">doc {doc:d}</span></h3>'
            f"{notes}{text_div}</div>"
        )

    cols = (
        '<div class="cols">'
        + column("A", p.doc_a, p.url_a, html_a, notes_a, "a")
        + column("B", p.doc_b, p.url_b, html_b, notes_b, "b")
        + "</div>"
    )

    rows = []
    text_a = p.text_a
    previews = (
        esc_all([text_a[sa : min(ea, sa + 120)] for _, (sa, ea, *_) in numbered], page_as_is(text_a))
        if text_a is not None
        else []
    )
    hidden = ' <span class="muted">(not shown)</span>'
    for i, (n, (sa, ea, sb, eb, length)) in enumerate(numbered):
        preview = ""
        if text_a is not None:
            preview = previews[i] + ("…" if ea - sa > 120 else "")
        # each offset links to its passage in the text where the text shows it
        where_a = f'<a href="#a{n:d}">{sa:,}–{ea:,}</a>' if n in anch_a else f"{sa:,}–{ea:,}{hidden}"
        where_b = f'<a href="#b{n:d}">{sb:,}–{eb:,}</a>' if n in anch_b else f"{sb:,}–{eb:,}{hidden}"
        rows.append(
            f'<tr><td class="num">{n}</td><td class="num">{length:,}</td>'
            f'<td class="num">{where_a}</td><td class="num">{ea - sa:,}</td>'
            f'<td class="num">{where_b}</td><td class="num">{eb - sb:,}</td>'
            f'<td class="snip">{preview}</td></tr>'
        )
    listing = (
        '<h2 id="passages">Copied passages</h2>'
        '<p class="muted">Offsets are character positions in each text (end exclusive); length is in '
        + {
            "word": "words (runs of letters and digits, casefolded)",
            "code": "code tokens (identifiers and literals made equal, comments dropped)",
        }.get(p.unit, "normalized characters (letters, marks and digits, casefolded)")
        + ". Numbers in the texts link to the same passage on the other side.</p>"
        '<table><thead><tr><th class="num">#</th><th class="num">length</th><th class="num">A offsets</th>'
        '<th class="num">A chars</th><th class="num">B offsets</th><th class="num">B chars</th>'
        "<th>text (A)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    heading = f"{what} #{rank:,}: {p.url_a or f'doc {p.doc_a:d}'} ↔ {p.url_b or f'doc {p.doc_b:d}'}"
    body = f'{nav}<h1 class="pair">{esc(heading)}</h1>{facts}{capped}{no_passages}{cols}{listing}'
    return page(f"{heading} · {title}", body)
