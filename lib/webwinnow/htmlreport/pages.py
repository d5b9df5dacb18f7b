"""The report's HTML pages, as strings. Every crawl-derived string goes through ``esc``.

No JavaScript anywhere; every page carries a Content-Security-Policy that forbids scripts,
frames, fonts, media, forms and any remote load, so text from crawled pages cannot execute even
if something were left unescaped. Links: relative ones built from integers, and crawl URLs only
when they are plain http(s) URLs (``safe_href``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .highlight import MAX_TEXT_CHARS, esc, render_text
from .model import FigureEntry, HashView, PairView

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
    return f'<a href="{esc(href)}" rel="noopener noreferrer">{esc(url)}</a>'


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

_RECORD_PARTS = ("parsed", "skipped", "failed", "flagged")


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


def summary_html(stats: Mapping[str, Any], fit: Mapping[str, Any] | None, shares: Mapping[str, Any] | None,
                 derived: Mapping[str, Any]) -> str:
    """The run summary: known keys in groups, whatever else is in ``stats`` after them.

    ``derived`` holds values computed by the writer (distinct hashes, boilerplate hashes) used
    when ``stats`` lacks them. Missing keys are simply left out.
    """
    used: set[str] = set()

    def get(key: str) -> Any:
        used.add(key)
        return stats.get(key)

    def row(label: str, value_html: str | None, title: str = "") -> str:
        if value_html is None:
            return ""
        t = f' title="{esc(title)}"' if title else ""
        return f"<dt{t}>{esc(label)}</dt><dd>{value_html}</dd>"

    def num_row(label: str, key: str, title: str = "") -> str:
        v = get(key)
        return row(label, fmt_value(v), title) if key in stats else ""

    # -- input
    inp = []
    inputs = get("inputs")
    if inputs is not None:
        inp.append(row("input files", fmt_int(len(inputs)) if isinstance(inputs, (list, tuple)) else fmt_value(inputs)))
    inp.append(num_row("input bytes", "input_bytes"))
    seen = get("records_seen")
    if seen is None:
        seen = get("records")
    parts = {p: get(p) for p in _RECORD_PARTS}
    if seen is not None or any(v is not None for v in parts.values()):
        terms = " + ".join(f"{fmt_int(parts[p])} {p}" for p in _RECORD_PARTS if parts[p] is not None)
        line = f"{fmt_int(seen)}" + (f" = {terms}" if terms else "")
        if seen is not None and all(_is_num(parts[p]) for p in _RECORD_PARTS) and _is_num(seen):
            total = sum(parts[p] for p in _RECORD_PARTS)
            if total != seen:
                line += f' <span class="warn">does not add up: the parts sum to {fmt_int(total)}</span>'
        inp.append(row("records", line, "records seen = parsed + skipped + failed + flagged"))
    inp.append(num_row("documents", "documents", "HTML responses that became text (status ok)"))

    # -- fingerprints
    fp = []
    for label, key in (("k (noise threshold)", "k"), ("w (window)", "w")):
        fp.append(num_row(label, key))
    t = get("t")
    if t is None and _is_num(stats.get("k")) and _is_num(stats.get("w")):
        t = stats["w"] + stats["k"] - 1
    if t is not None:
        fp.append(row("t = w + k − 1 (guarantee)", fmt_value(t)))
    fp.append(num_row("robust winnowing", "robust"))
    if stats.get("mod_p"):
        fp.append(num_row("mod p (baseline)", "mod_p"))
    else:
        used.add("mod_p")
    fp.append(num_row("k-grams", "kgrams"))
    fp.append(num_row("fingerprints", "fingerprints"))
    density = get("density")
    if density is None and _is_num(stats.get("fingerprints")) and _is_num(stats.get("kgrams")) and stats["kgrams"]:
        density = stats["fingerprints"] / stats["kgrams"]
    expected = get("expected_density")
    if expected is None:
        if _is_num(stats.get("mod_p")) and stats["mod_p"]:
            expected = 1.0 / stats["mod_p"]
        elif _is_num(stats.get("w")) and stats["w"] > 0:
            expected = 2.0 / (stats["w"] + 1)
    if density is not None or expected is not None:
        d = fmt_float(density, 5) if density is not None else DASH
        e = fmt_float(expected, 5) if expected is not None else DASH
        ratio = ""
        if _is_num(density) and _is_num(expected) and expected:
            ratio = f' <span class="muted">({density / expected:.2f}× expected)</span>'
        fp.append(row("density", f"{d} <span class=\"muted\">vs expected</span> {e}{ratio}",
                      "fingerprints per k-gram; expected on random text: 2/(w+1) for winnowing, 1/p for 0 mod p"))
    hf = []
    hashes = get("hashes")
    if hashes is None:
        hashes = derived.get("hashes")
    if hashes is not None:
        hf.append(row("distinct hashes", fmt_value(hashes)))
    max_df = get("max_df")
    if max_df is not None:
        hf.append(row("max_df", fmt_value(max_df), "hashes in more documents are boilerplate: reported, never paired"))
    bp = get("boilerplate_hashes")
    if bp is None:
        bp = derived.get("boilerplate_hashes")
    if bp is not None:
        hf.append(row("boilerplate hashes", fmt_value(bp), "hashes in more than max_df documents"))
    hf.append(row("power law", fit_sentence(fit), "least-squares fit of log documents against log rank"))
    hf.append(row("seen in", shares_sentence(shares),
                  "share of distinct hashes found in exactly 1, 2, 3 and more documents; "
                  "the paper reports 82% / 14% / 2% for web pages"))

    # -- pairs
    pr = []
    for label, key, title in (
        ("min shared fingerprints", "min_shared", ""),
        ("pairs", "pairs", "document pairs sharing fingerprints (boilerplate excluded)"),
        ("passages", "passages", "copied passages found in the pairs"),
        ("cluster resemblance", "cluster_resemblance", "pairs at least this resemblant join clusters"),
        ("clusters", "clusters", ""),
        ("documents in clusters", "clustered_documents", ""),
        ("largest cluster", "largest_cluster", ""),
    ):
        pr.append(num_row(label, key, title))

    # -- everything else, as it is
    used.update({"tag", "title", "fit", "shares"})
    other = []
    for k, v in sorted(stats.items(), key=lambda kv: str(kv[0])):
        if k in used:
            continue
        if isinstance(v, Mapping) and v:  # e.g. a stage's own entry: one row per item
            other += [row(f"{k} · {kk}", fmt_value(vv)) for kk, vv in sorted(v.items(), key=lambda kv: str(kv[0]))]
        else:
            other.append(row(str(k), fmt_value(v)))

    def card(title: str, rows: list[str]) -> str:
        rows = [r for r in rows if r]
        if not rows:
            return ""
        return f'<section><h2>{esc(title)}</h2><dl class="summary">{"".join(rows)}</dl></section>'

    cards = card("Input", inp) + card("Fingerprints", fp) + card("Hash frequencies", hf) + card("Pairs and clusters", pr)
    return f'<div class="cards">{cards}</div>' + card("More", other)


# ---------------------------------------------------------------------------- pairs


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


def pairs_table(pairs: Sequence[PairView], first_rank: int, detail_pages: int) -> str:
    if not pairs:
        return '<p class="muted">No pairs: no two documents share a fingerprint (outside the boilerplate).</p>'
    head = (
        "<thead><tr>"
        '<th class="num">#</th><th>document A</th><th>document B</th>'
        '<th class="num" title="containment_a: share of A\'s fingerprints also in B">A in B</th>'
        '<th class="num" title="containment_b: share of B\'s fingerprints also in A">B in A</th>'
        '<th class="num" title="resemblance: shared / (fp_a + fp_b − shared)">resemblance</th>'
        '<th class="num" title="distinct shared fingerprint hashes / fingerprints of A / of B">shared fp (A / B)</th>'
        '<th class="num" title="characters inside copied passages, in A / in B">copied chars (A / B)</th>'
        "<th>pair page</th></tr></thead>"
    )
    rows = []
    for i, p in enumerate(pairs):
        rank = first_rank + i
        link = (
            f'<a href="{pair_file(p)}">view</a>' + (' <span class="muted" title="passage list capped">*</span>' if p.capped else "")
            if rank <= detail_pages
            else DASH
        )
        rows.append(
            "<tr>"
            f'<td class="num">{rank:,}</td>'
            f'<td class="url">{url_html(p.url_a)}<span class="docid">doc {p.doc_a:d}</span></td>'
            f'<td class="url">{url_html(p.url_b)}<span class="docid">doc {p.doc_b:d}</span></td>'
            f'<td class="num">{_bar(p.containment_a)}{fmt_pct(p.containment_a)}</td>'
            f'<td class="num">{_bar(p.containment_b)}{fmt_pct(p.containment_b)}</td>'
            f'<td class="num">{fmt_float(p.resemblance)}</td>'
            f'<td class="num">{fmt_int(p.shared)} <span class="muted">({fmt_int(p.fp_a)} / {fmt_int(p.fp_b)})</span></td>'
            f'<td class="num">{fmt_int(p.copied_a)} / {fmt_int(p.copied_b)}</td>'
            f"<td>{link}</td></tr>"
        )
    return f'<table class="pairs">{head}<tbody>{"".join(rows)}</tbody></table>'


def nav_html(prefix: str = "") -> str:
    return (
        '<nav class="top">'
        f'<a href="{prefix}index.html">summary &amp; top pairs</a>'
        f'<a href="{prefix}boilerplate.html">boilerplate &amp; rank–frequency</a>'
        f'<a href="{prefix}figures.html">figures</a>'
        f'<a href="{prefix}stats.json">stats.json</a>'
        "</nav>"
    )


def pairs_section(pairs: Sequence[PairView], page_no: int, pages: int, page_size: int, total: int,
                  detail_pages: int) -> str:
    first = (page_no - 1) * page_size + 1
    last = first + len(pairs) - 1
    caption = (
        f'<p class="muted">Pairs {first:,}–{last:,} of {total:,}, by containment (the larger of the two), '
        f"descending. Side-by-side pages for the first {min(detail_pages, total):,}.</p>"
        if total
        else ""
    )
    pager = pager_html(page_no, pages)
    return f"<h2>Top pairs</h2>{caption}{pager}{pairs_table(pairs, first, detail_pages)}{pager}"


def index_page(title: str, summary: str, pairs_html: str) -> str:
    body = f"{nav_html()}<h1>{esc(title)}</h1>{summary}{pairs_html}"
    return page(title, body)


def pairs_page(title: str, page_no: int, pairs_html: str) -> str:
    body = f"{nav_html()}<h1>{esc(title)} <span class=\"muted\">· pairs, page {page_no}</span></h1>{pairs_html}"
    return page(f"{title} · pairs page {page_no}", body)


# ---------------------------------------------------------------------------- one pair


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
    body, anchored = render_text(shown, spans, side, other)
    if any(e > len(text) for _, _, e in spans):
        notes += '<p class="warn">Some passage offsets lie past the end of this text (clipped): the text may not be the one the passages were computed on.</p>'
    return body, anchored, notes


def pair_page(p: PairView, rank: int, listing_page: int, prev_key: str | None, next_key: str | None,
              title: str) -> str:
    # Passages numbered in order of their position in A (then B), the same number on both sides.
    order = sorted(range(len(p.passages)), key=lambda i: (p.passages[i][0], p.passages[i][2], i))
    numbered = [(n + 1, p.passages[i]) for n, i in enumerate(order)]
    spans_a = [(n, q[0], q[1]) for n, q in numbered]
    spans_b = [(n, q[2], q[3]) for n, q in numbered]
    html_a, anch_a, notes_a = _side(p.text_a, spans_a, "a", "b")
    html_b, anch_b, notes_b = _side(p.text_b, spans_b, "b", "a")

    links = [f'<a href="../{page_file(listing_page)}">← pairs page {listing_page}</a>']
    if prev_key:
        links.append(f'<a href="{prev_key}.html" rel="prev">previous pair</a>')
    if next_key:
        links.append(f'<a href="{next_key}.html" rel="next">next pair</a>')
    nav = (
        '<nav class="top">'
        '<a href="../index.html">summary &amp; top pairs</a>'
        '<a href="../boilerplate.html">boilerplate &amp; rank–frequency</a>'
        + "".join(links)
        + "</nav>"
    )
    facts = (
        '<dl class="summary">'
        f"<dt>document A</dt><dd>doc {p.doc_a:d} · {url_html(p.url_a)}</dd>"
        f"<dt>document B</dt><dd>doc {p.doc_b:d} · {url_html(p.url_b)}</dd>"
        f"<dt>containment</dt><dd>A in B {fmt_pct(p.containment_a)} · B in A {fmt_pct(p.containment_b)}</dd>"
        f"<dt>resemblance</dt><dd>{fmt_float(p.resemblance)}</dd>"
        f"<dt>likely source</dt><dd>{source_html(p)}</dd>"
        f"<dt>shared fingerprints</dt><dd>{fmt_int(p.shared)} of {fmt_int(p.fp_a)} (A) and {fmt_int(p.fp_b)} (B)</dd>"
        f"<dt>copied characters</dt><dd>{fmt_int(p.copied_a)} in A"
        + (f" ({fmt_pct(p.copied_a / len(p.text_a))})" if p.text_a else "")
        + f" · {fmt_int(p.copied_b)} in B"
        + (f" ({fmt_pct(p.copied_b / len(p.text_b))})" if p.text_b else "")
        + f"</dd><dt>passages</dt><dd>{len(p.passages):,}</dd></dl>"
    )
    capped = (
        '<p class="note">This pair hit the passage search\'s cap (pairs.max_spans or pairs.max_chars): '
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
        return (
            f'<div class="col"><h3>{label} · doc {doc:d} · {url_html(url)}</h3>{notes}{text_div}</div>'
        )

    cols = (
        '<div class="cols">'
        + column("A", p.doc_a, p.url_a, html_a, notes_a, "a")
        + column("B", p.doc_b, p.url_b, html_b, notes_b, "b")
        + "</div>"
    )

    def where(num: int, start: int, end: int, side: str, anchored: set[int]) -> str:
        label = f"{start:,}–{end:,}"
        if num in anchored:
            return f'<a href="#{side}{num:d}">{label}</a>'
        return f'{label} <span class="muted">(not shown)</span>'

    rows = []
    for n, (sa, ea, sb, eb, length) in numbered:
        preview = ""
        if p.text_a is not None:
            frag = p.text_a[sa:min(ea, sa + 120)]
            preview = esc(frag) + ("…" if ea - sa > 120 else "")
        rows.append(
            f'<tr><td class="num">{n}</td><td class="num">{length:,}</td>'
            f'<td class="num">{where(n, sa, ea, "a", anch_a)}</td><td class="num">{ea - sa:,}</td>'
            f'<td class="num">{where(n, sb, eb, "b", anch_b)}</td><td class="num">{eb - sb:,}</td>'
            f'<td class="snip">{preview}</td></tr>'
        )
    listing = (
        '<h2 id="passages">Copied passages</h2>'
        '<p class="muted">Offsets are character positions in each text (end exclusive); length is in '
        "normalized characters (letters, marks and digits, casefolded). Numbers in the texts link to the "
        "same passage on the other side.</p>"
        '<table><thead><tr><th class="num">#</th><th class="num">length</th><th class="num">A offsets</th>'
        '<th class="num">A chars</th><th class="num">B offsets</th><th class="num">B chars</th>'
        "<th>text (A)</th></tr></thead>"
        f'<tbody>{"".join(rows)}</tbody></table>'
        if rows
        else ""
    )
    heading = f"Pair #{rank:,}: doc {p.doc_a:d} ↔ doc {p.doc_b:d}"
    body = f"{nav}<h1>{esc(heading)}</h1>{facts}{capped}{no_passages}{cols}{listing}"
    return page(f"{heading} · {title}", body)


# ---------------------------------------------------------------------------- boilerplate


SNIPPET_CHARS = 240


def boilerplate_page(title: str, hashes: Sequence[HashView], fit: Mapping[str, Any] | None,
                     shares: Mapping[str, Any] | None, max_df: Any, plot_ok: bool, plot_note: str) -> str:
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
        f'<tbody>{"".join(rows)}</tbody></table>'
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
        f"{nav_html()}<h1>{esc(title)} <span class=\"muted\">· boilerplate</span></h1>"
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
    parts = [f"{nav_html()}<h1>{esc(title)} <span class=\"muted\">· figures</span></h1>"]
    if note:
        parts.append(f'<p class="note">{esc(note)}</p>')
    if entries:
        parts.append("<p>The plots of the notebooks in <code>notebooks/</code>, drawn for this run "
                     "(per-document analyses on a sample of documents; the captions say which).</p>")
        parts.append("<ul>" + "".join(f'<li><a href="#{esc(e.file)}">{esc(e.title)}</a></li>' for e in entries) + "</ul>")
    for e in entries:
        where = f' <span class="muted">(notebooks/{esc(e.notebook)})</span>' if e.notebook else ""
        parts.append(f'<h2 id="{esc(e.file)}">{esc(e.title)}{where}</h2><p>{esc(e.caption)}</p>')
        if e.error:
            parts.append(f'<p class="note">Not drawn: {esc(e.error)}</p>')
        else:
            parts.append(f'<p><a href="figures/{esc(e.file)}"><img class="plot" src="figures/{esc(e.file)}" '
                         f'alt="{esc(e.title)}"></a></p>')
    return page(f"{title} · figures", "".join(parts))
