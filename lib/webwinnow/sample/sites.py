"""Site templates and page rendering: the boilerplate around each page's <main>, and page bodies."""

from __future__ import annotations

import html
import json
import random
import re
import textwrap
import unicodedata
from typing import Any

from .constants import SCRIPT_SENTINEL, STYLE_SENTINEL
from .language import _foreign_sentence, _Lang


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _slug(text: str, limit=6) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words[:limit]) or "page"


def _inline(sentences: list[str], rs: int, sep=" ") -> str:
    """Sentences as HTML with <b>, <em>, <i> and <a> around whole words, seeded per block."""
    r = random.Random(rs)
    words = " ".join(sentences).split(" ")
    out = []
    i = 0
    while i < len(words):
        if r.random() < 0.05:
            n = r.randint(1, 3)
            span = _esc(" ".join(words[i : i + n]))
            tag = r.choice(["b", "em", "a", "a", "i", "strong"])
            if tag == "a":
                out.append(f'<a href="/topic/{_slug(span, 2)}">{span}</a>')
            else:
                out.append(f"<{tag}>{span}</{tag}>")
            i += n
        else:
            out.append(_esc(words[i]))
            i += 1
    return sep.join(out)


def _render_block(b: dict) -> str:
    t = b["t"]
    if t in ("h2", "h3"):
        return f"<{t}>{_esc(b['text'])}</{t}>"
    if t == "byline":
        return f'<p class="byline">{_esc(b["text"])}</p>'
    if t == "p":
        return "<p>" + _inline(b["s"], b["rs"]) + "</p>"
    if t in ("ul", "ol"):
        items = "\n".join(f"  <li>{_inline([it], b['rs'] + k)}</li>" for k, it in enumerate(b["items"]))
        return f"<{t}>\n{items}\n</{t}>"
    if t == "links":
        items = "\n".join(f'  <li><a href="{href}">{_esc(label)}</a></li>' for label, href in b["items"])
        return f'<ul class="see-also">\n{items}\n</ul>'
    if t == "table":
        head = "".join(f"<th>{_esc(h)}</th>" for h in b["head"])
        rows = "\n".join("    <tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in b["rows"])
        return (
            f'<table class="data">\n  <caption>{_esc(b["caption"])}</caption>\n'
            f"  <thead><tr>{head}</tr></thead>\n  <tbody>\n{rows}\n  </tbody>\n</table>"
        )
    if t == "pre":
        return f"<pre><code>{_esc(b['text'])}</code></pre>"
    if t == "quote":
        paras = [[_case(s, b["case"]) for s in para] for para in b["paras"]]
        style = b["style"]
        if style == "blockquote":
            inner = "\n".join("<p>" + _inline(p, b["rs"] + k, sep="\n") + "</p>" for k, p in enumerate(paras))
            return f'<blockquote class="quoted">\n{inner}\n</blockquote>'
        if style == "br":
            return '<p class="excerpt">' + "<br>\n".join(_esc(s) for p in paras for s in p) + "</p>"
        if style == "div":
            text = "\n\n".join(textwrap.fill(" ".join(p), width=64) for p in paras)
            return f'<div class="excerpt">\n{_esc(text)}\n</div>'
        if style == "li":
            items = "\n".join(f"<li>{_esc(s)}</li>" for p in paras for s in p)
            return f'<ul class="cited">\n{items}\n</ul>'
        raise ValueError(style)
    raise ValueError(t)


def _case(text: str, case: str | None) -> str:
    if case == "upper":
        return text.upper()
    if case == "lower":
        return text.lower()
    return text


def _render_main(page: dict) -> str:
    parts = [f'<main id="content" class="{page["site"]}-main">', f"<h1>{_esc(page['title'])}</h1>"]
    parts += [_render_block(b) for b in page["blocks"]]
    parts.append("</main>")
    return "\n".join(parts)


_TAG_RE = re.compile(r"<[^>]+>")
_DROP_RE = re.compile(r"(?is)<(script|style)\b.*?</\1\s*>|<!--.*?-->")


def _visible(html_text: str) -> str:
    return html.unescape(_TAG_RE.sub(" ", _DROP_RE.sub(" ", html_text)))


# --------------------------------------------------------------------------------------------
# site templates


def _make_sites(lang: _Lang) -> dict:
    rng = lang.rng
    sites = {}
    news_name = f"The {rng.choice(lang.names)} Courier"
    sites["news"] = {
        "name": news_name,
        "tagline": lang.sentence(),
        "nav": [(w.capitalize(), f"/section/{w}") for w in rng.sample(lang.nouns, 24)],
        "most_read": [(lang.headline(), f"/2003/04/{_slug(lang.headline())}.html") for _ in range(8)],
        "about": [lang.sentence() for _ in range(3)],
        "newsletter": lang.sentence(),
        "footer_links": [(lang.phrase(1, 2), f"/about/{k}") for k in range(8)],
        "footer": [lang.sentence() for _ in range(2)],
    }
    wiki_name = f"{rng.choice(lang.names)}Wiki"
    sites["docs"] = {
        "name": wiki_name,
        "portlets": [
            ("Navigation", [(lang.phrase(1, 3), f"/wiki/Special:{k}") for k in range(8)]),
            ("Topics", [(w.capitalize(), f"/wiki/{w.capitalize()}") for w in rng.sample(lang.nouns, 16)]),
            ("Tools", [(lang.phrase(1, 2), f"/wiki/Tools:{k}") for k in range(6)]),
        ],
        "notice": lang.sentence(),
        "license": [lang.sentence() for _ in range(2)],
    }
    owner = rng.choice(lang.names)
    sites["blog"] = {
        "name": f"{owner}'s Field Notes",
        "nav": [(lang.phrase(1, 2), f"/{k}/") for k in ("archive", "about", "tags", "links", "feed")],
        "about": [lang.sentence() for _ in range(2)],
        "blogroll": [
            (rng.choice(lang.names) + " " + rng.choice(lang.nouns), f"http://{rng.choice(lang.nouns)}.example/") for _ in range(6)
        ],
        "footer": lang.sentence(),
    }
    sites["mirror"] = {"name": "Mirror Archive Project", "footer": lang.sentence()}
    return sites


_CSS = """body { font-family: Georgia, serif; margin: 0; color: #222; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; }
.sidebar { float: right; width: 28%; font-size: 0.9em; }
main { max-width: 46em; }
table.data td, table.data th { border: 1px solid #ccc; padding: 2px 6px; }
blockquote.quoted { border-left: 3px solid #999; padding-left: 1em; }
"""


def _head(page: dict, site_name: str, meta_charset: str | None) -> str:
    meta = f'<meta charset="{meta_charset}">\n' if meta_charset else ""
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{page.get("lang", "en")}">\n<head>\n{meta}'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(page['title'])} | {_esc(site_name)}</title>\n"
        '<link rel="stylesheet" href="/static/site.css">\n'
        f"<style>\n.{STYLE_SENTINEL} {{ display: none; }}\n"
        "p.byline { color: #666; font-style: italic; } /* style text is not page text */\n</style>\n"
        "<script>\n"
        f'var {SCRIPT_SENTINEL} = "script text must never be extracted";\n'
        "window.dataLayer = window.dataLayer || [];\n"
        f'function track(ev) {{ dataLayer.push({{"event": ev, "page": "{page["path"]}"}}); }}\n'
        "</script>\n</head>\n"
    )


def _links_ul(links, cls=None) -> str:
    attr = f' class="{cls}"' if cls else ""
    items = "\n".join(f'  <li><a href="{href}">{_esc(label)}</a></li>' for label, href in links)
    return f"<ul{attr}>\n{items}\n</ul>"


def _render_page(page: dict, sites: dict, main_html: str) -> str:
    site_key = page["template"]
    site = sites[site_key]
    meta = page.get("meta_charset")
    out = [_head(page, site["name"], meta), f'<body class="{site_key}">']
    if site_key == "news":
        out += [
            '<header class="masthead">',
            f'<div class="logo"><a href="/">{_esc(site["name"])}</a></div>',
            f'<p class="tagline">{_esc(site["tagline"])}</p>',
            "</header>",
            '<nav class="menu">',
            _links_ul(site["nav"]),
            "</nav>",
            '<div class="layout">',
            main_html,
            '<aside class="sidebar">',
            "<h3>Most read</h3>",
            "<ol>\n" + "\n".join(f'  <li><a href="{h}">{_esc(t)}</a></li>' for t, h in site["most_read"]) + "\n</ol>",
            f"<h3>About the {_esc(site['name'].split()[-1])}</h3>",
            "<p>" + _esc(" ".join(site["about"])) + "</p>",
            "<h3>Newsletter</h3>",
            "<p>" + _esc(site["newsletter"]) + "</p>",
            '<form action="/subscribe" method="post"><input type="email" name="email"><button>Subscribe</button></form>',
            "</aside>",
            "</div>",
            "<!-- footer: boilerplate on every page -->",
            "<footer>",
            _links_ul(site["footer_links"], "footer-links"),
            "<p>" + _esc(" ".join(site["footer"])) + "</p>",
            f"<p>&copy; 2003 {_esc(site['name'])}. All rights reserved. News &amp; views since 1987.</p>",
            "</footer>",
        ]
    elif site_key == "docs":
        out += [
            '<div id="top-bar">',
            f'<a class="wordmark" href="/wiki/Main_Page">{_esc(site["name"])}</a>',
            '<form class="search" action="/w/search"><input name="q" placeholder="Search"><button>Go</button></form>',
            '<a href="/w/login">Log in</a> &middot; <a href="/w/register">Create account</a>',
            "</div>",
            '<div id="site-notice">' + _esc(site["notice"]) + "</div>",
            '<nav id="side-nav">',
        ]
        for title, links in site["portlets"]:
            out += [f'<div class="portlet"><h3>{_esc(title)}</h3>', _links_ul(links), "</div>"]
        out += [
            "</nav>",
            main_html,
            '<footer id="footer">',
            f"<p>This page was last edited on {page['edited']}.</p>",
            "<p>" + _esc(" ".join(site["license"])) + "</p>",
            '<ul class="footer-places"><li><a href="/wiki/Privacy">Privacy policy</a></li>'
            f'<li><a href="/wiki/About">About {_esc(site["name"])}</a></li>'
            '<li><a href="/wiki/Disclaimers">Disclaimers</a></li></ul>',
            "</footer>",
        ]
    elif site_key == "blog":
        out += [
            '<header id="blog-header">',
            f'<h2 class="blog-title"><a href="/">{_esc(site["name"])}</a></h2>',
            _links_ul(site["nav"], "blog-nav"),
            "</header>",
            main_html,
            '<aside id="blog-sidebar">',
            "<h3>About me</h3>",
            "<p>" + _esc(" ".join(site["about"])) + "</p>",
            "<h3>Blogroll</h3>",
            _links_ul(site["blogroll"]),
            "</aside>",
            "<footer><p>" + _esc(site["footer"]) + "</p></footer>",
        ]
    elif site_key == "mirror":
        out += [
            f'<div class="mirror-banner">Archived copy of <a href="{page["mirror_of"]}">{_esc(page["mirror_of"])}</a>'
            f" kept by the {_esc(site['name'])}.</div>",
            main_html,
            "<footer><p>" + _esc(site["footer"]) + "</p></footer>",
        ]
    else:
        raise ValueError(site_key)
    out += [
        "<script>",
        'track("pageview"); /* analytics: ' + SCRIPT_SENTINEL + " */",
        'if (document.cookie.indexOf("consent") < 0) { console.log("Please accept cookies to read more"); }',
        "</script>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# page models


def _news_body(lang: _Lang, date: str) -> list[dict]:
    rng = lang.rng
    blocks: list[dict[str, Any]] = [{"t": "byline", "text": f"By {rng.choice(lang.names)} {rng.choice(lang.names)} | {date}"}]
    blocks.append({"t": "p", "s": lang.paragraph(2, 3), "rs": rng.getrandbits(32)})
    for _ in range(rng.randint(2, 4)):
        blocks.append({"t": "h2", "text": lang.phrase(2, 4)})
        for _ in range(rng.randint(1, 4)):
            blocks.append({"t": "p", "s": lang.paragraph(), "rs": rng.getrandbits(32)})
        if rng.random() < 0.3:
            blocks.append({"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 6))], "rs": rng.getrandbits(32)})
    if rng.random() < 0.5:
        blocks.append(
            {
                "t": "table",
                "caption": lang.phrase(2, 4),
                "head": ["Place", "Count", "Change"],
                "rows": [
                    [rng.choice(lang.names), str(rng.randint(10, 9999)), f"{rng.choice('+-')}{rng.randint(1, 40)}%"]
                    for _ in range(rng.randint(3, 5))
                ],
            }
        )
    if rng.random() < 0.6:
        blocks.append({"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 5))], "rs": rng.getrandbits(32)})
    return blocks


def _docs_body(lang: _Lang) -> list[dict]:
    rng = lang.rng
    blocks: list[dict[str, Any]] = [{"t": "p", "s": lang.paragraph(2, 4), "rs": rng.getrandbits(32)}]
    heads = [lang.phrase(1, 3) for _ in range(rng.randint(3, 5))]
    blocks.append({"t": "h3", "text": "Contents"})
    blocks.append({"t": "ol", "items": heads, "rs": rng.getrandbits(32)})
    table_at = rng.randrange(len(heads)) if rng.random() < 0.8 else -1
    for k, head in enumerate(heads):
        blocks.append({"t": "h2", "text": head})
        for _ in range(rng.randint(1, 3)):
            blocks.append({"t": "p", "s": lang.paragraph(2, 5), "rs": rng.getrandbits(32)})
        if rng.random() < 0.3:
            lines = [
                f"{rng.choice(lang.nouns)}.{rng.choice(lang.nouns)} = {rng.randint(0, 512)}" for _ in range(rng.randint(2, 5))
            ]
            blocks.append({"t": "pre", "text": "\n".join(lines)})
        if k == table_at:
            blocks.append(
                {
                    "t": "table",
                    "caption": "Parameters",
                    "head": ["Name", "Type", "Description"],
                    "rows": [
                        [
                            rng.choice(lang.nouns) + "_" + rng.choice(lang.nouns),
                            rng.choice(["int", "str", "bool", "list"]),
                            lang.phrase(2, 5),
                        ]
                        for _ in range(rng.randint(3, 6))
                    ],
                }
            )
    blocks.append({"t": "h2", "text": "See also"})
    blocks.append({"t": "links", "items": [(w.capitalize(), f"/wiki/{w.capitalize()}") for w in rng.sample(lang.nouns, 4)]})
    return blocks


def _blog_body(lang: _Lang, date: str) -> list[dict]:
    rng = lang.rng
    blocks: list[dict[str, Any]] = [{"t": "byline", "text": f"Posted on {date}"}]
    for _ in range(rng.randint(4, 9)):
        blocks.append({"t": "p", "s": lang.paragraph(2, 5), "rs": rng.getrandbits(32)})
    if rng.random() < 0.5:
        blocks.insert(
            rng.randint(2, len(blocks)),
            {"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 5))], "rs": rng.getrandbits(32)},
        )
    return blocks


def _foreign_body(rng: random.Random, script: str) -> list[dict]:
    blocks: list[dict[str, Any]] = []
    for _ in range(rng.randint(8, 11)):
        if rng.random() < 0.25:
            blocks.append({"t": "h2", "text": _foreign_sentence(rng, script).rstrip(".。")})
        blocks.append(
            {"t": "p", "s": [_foreign_sentence(rng, script) for _ in range(rng.randint(3, 6))], "rs": rng.getrandbits(32)}
        )
    return blocks


def _body_sentences(blocks: list[dict]) -> list[tuple[int, int]]:
    return [(bi, si) for bi, b in enumerate(blocks) if b["t"] == "p" for si in range(len(b["s"]))]


def _copy_blocks(blocks: list[dict]) -> list[dict]:
    return json.loads(json.dumps(blocks))


def _edit_blocks(lang: _Lang, blocks: list[dict], fraction: float) -> tuple[list[dict], int, float]:
    """Replace or insert about ``fraction`` of the sentences; return (blocks, edits, share unchanged)."""
    rng = lang.rng
    blocks = _copy_blocks(blocks)
    slots = _body_sentences(blocks)
    k = max(2, round(fraction * len(slots)))
    chosen = sorted(rng.sample(slots, min(k, len(slots))), reverse=True)
    replaced = 0
    for bi, si in chosen:
        if rng.random() < 0.5:
            blocks[bi]["s"][si] = lang.sentence()
            replaced += 1
        else:
            blocks[bi]["s"].insert(si + 1, lang.sentence())
    return blocks, len(chosen), round(1 - replaced / max(1, len(slots)), 3)


# --------------------------------------------------------------------------------------------
# binary payloads
