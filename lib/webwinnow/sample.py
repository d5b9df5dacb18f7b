"""A deterministic sample crawl with planted copies: the project's own test and demo input.

``write_sample(out_dir)`` writes ``sample-00000.warc.gz`` ... (one gzip member per record, as
crawlers write them) and ``planted.json``, the ground truth of every copy planted in the crawl.
Every byte depends only on the arguments: record ids come from the seeded RNG, dates are fixed,
gzip headers carry no time, and Python's salted ``hash()`` is never used.

What is in the crawl (all text is generated here from small vocabularies, nothing is copied):

* HTML pages on two site templates, a news site (``news.sample.test``) and a documentation wiki
  (``docs.sample.test``), plus a small blog (``blog.sample.test``). Each template repeats its header,
  navigation menu, sidebar and footer on every page (boilerplate), and every page has ``<script>``
  and ``<style>`` blocks holding the sentinels ``SCRIPT_SENTINEL`` / ``STYLE_SENTINEL`` (they must
  never reach extracted text), headings, paragraphs, lists, tables and inline markup.
* Planted copies, listed in ``planted.json``:
  ``passage`` (whole sentences copied into another page, with other markup, whitespace and in two
  cases other letter case; four length classes measured in normalized characters),
  ``mirror_exact`` / ``mirror_edited`` (a page's ``<main>`` published again under another URL, as is
  or with about a tenth of its sentences changed or inserted) and ``version`` (the same URL fetched
  twice, with small edits). The visible text of a page's copied content is always inside its one
  ``<main>`` element; site templates sit outside it.
* Records that exercise skip accounting: a ``warcinfo`` per file, a ``request`` before every
  response, non-HTML responses (PNG, PDF, CSS, JSON, robots.txt), two ``revisit`` records, a 404,
  a 301 and a ``metadata`` record.
* Transport and charset cases: a chunked body kept chunked, a ``Content-Encoding: gzip`` body, an
  ISO-8859-1 page declared only in the HTTP header, a windows-1252 page declared only by
  ``<meta charset>``, an undeclared UTF-8 page, and Greek, Cyrillic and Japanese pages (the Greek
  one is mirrored). ``planted.json["special"]`` names their URLs.

Run ``python -m webwinnow.sample OUT_DIR [--pages N] [--seed S] [--files F]``.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import html
import io
import json
import os
import random
import re
import struct
import textwrap
import unicodedata
import uuid
import zlib
from datetime import datetime, timedelta, timezone

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

__all__ = [
    "LENGTH_CLASSES",
    "SCRIPT_SENTINEL",
    "STYLE_SENTINEL",
    "main",
    "normalize_text",
    "write_sample",
]

SCRIPT_SENTINEL = "wwScriptSentinelQx"
STYLE_SENTINEL = "wwStyleSentinelQx"

#: Passage length classes, in normalized characters (inclusive bounds).
LENGTH_CLASSES = {
    "short": (20, 45),
    "threshold": (149, 200),
    "medium": (300, 800),
    "long": (1500, 4000),
}
# passages planted per class at the default 300 pages (scaled up for larger crawls, never down)
_CLASS_COUNTS = {"short": 6, "threshold": 8, "medium": 7, "long": 5}
_THRESHOLD_TARGETS = [149, 150, 151, 160, 175, 190, 200, 155]
_SHORT_TARGETS = [20, 25, 30, 35, 40, 45]

MIN_PAGES = 60
_BASE_TIME = datetime(2003, 5, 5, 0, 0, 0)
_FILE_WINDOW = 7 * 24 * 3600  # each WARC file covers one week of fetches

HOSTS = {
    "news": "news.sample.test",
    "docs": "docs.sample.test",
    "blog": "blog.sample.test",
    "mirror": "mirror.sample.test",
}
_IPS = {
    "news.sample.test": "192.0.2.10",
    "www.news.sample.test": "192.0.2.10",
    "docs.sample.test": "192.0.2.20",
    "blog.sample.test": "198.51.100.7",
    "mirror.sample.test": "203.0.113.99",
}


def normalize_text(text: str) -> str:
    """Casefold and keep only letters and digits (how planted lengths are measured)."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _nlen(text: str) -> int:
    return len(normalize_text(text))


# --------------------------------------------------------------------------------------------
# pseudo-English


_DETS = "the the the a a this that every each some our their its one another no".split()
_PREPS = "of of in in on with from under across beyond near after before through without toward behind during".split()
_CONJS = "and and but while because although so yet since until whereas".split()
_ADVS = "quickly slowly rarely often quietly carefully again later soon nearly almost openly still".split()
_NOUNS = """river market council report system village harbor engine garden letter window station
budget winter season machine bridge theory record signal museum library committee forest valley
painter farmer teacher doctor student network program language surface measure pattern method
history region border coast island mountain festival journey chapter reader writer paper storm
harvest price school factory office street square tower castle kitchen camera planet column module
server archive version package document figure sample lantern ferry orchard railway canal meadow
mayor clerk merchant sailor weaver baker engineer witness judge ledger contract parcel cargo
harbour lighthouse quarry mill furnace wagon carriage compass anchor ribbon blanket candle basket
rumour verdict treaty estate tenant parish county province""".split()
_VERBS = """reported described opened closed built followed carried measured found kept moved visited
changed crossed noticed repaired painted counted shared studied tested explained collected released
announced approved rejected delayed improved questioned ordered gathered watched welcomed replaced
recorded published removed signed divided joined raised lowered traded sold bought borrowed
returned praised criticised inspected restored abandoned""".split()
_ADJS = """small large early late quiet bright northern southern central ancient modern simple careful
narrow broad heavy local public private formal rapid steady distant familiar hidden open recent
empty crowded wooden silver golden patient honest rural coastal annual weekly""".split()

_ONSETS = "b br c ch d dr f fl g gr h j k l m n p pl pr r s sh sk st t th tr v w z".split()
_VOWELS = "a e i o u a e o ai ea ou y".split()
_CODAS = ["", "", "", "n", "r", "l", "s", "m", "nd", "st", "rk", "x", "th"]
_ACCENTED_VOWELS = "é è à â ü ö ñ ç ê ô î".split()  # all in ISO-8859-1 and windows-1252
_NON_LATIN1 = "ő ł ž š č ę".split()  # outside ISO-8859-1: make a misdecode visible

_GREEK_SYL = "κα λο με τα νι στο πε ρι θε ση γα δο ξε φω χρο ου αι ει μά νή λί κό τύ πώ".split()
_CYRILLIC_SYL = "ка ло ме ти ро на сто во при же шу да ли ку ра ве мо ны пе зо".split()
_CJK_CHARS = "日本語文書山川水火木金土月人大小中上下学生先年時間国会社長新古高安道海空雨風花草森町村駅店手足目口".replace("", " ").split()


def _tokens_text(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if tok in {",", ";"}:
            out += tok
        else:
            out += (" " if out else "") + tok
    return out


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


class _Lang:
    """A seeded pseudo-English generator: vocabulary plus a tiny grammar."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        seen: set[str] = set(_NOUNS) | set(_VERBS) | set(_ADJS) | set(_DETS) | set(_PREPS)
        self.nouns = list(_NOUNS) + self._made_up(110, seen)
        self.verbs = list(_VERBS) + [w + "ed" for w in self._made_up(35, seen, max_syl=2)]
        self.adjs = list(_ADJS) + [w + rng.choice(["ic", "ous", "al", "ish"]) for w in self._made_up(30, seen, max_syl=2)]
        self.names = [w.capitalize() for w in self._made_up(50, seen)]
        self.accented = self._made_up(40, seen, accent=True)
        self.non_latin1 = self._made_up(12, seen, accent=True, extra=_NON_LATIN1)
        # nouns by normalized length, for sentences of an exact length
        self.nouns_by_len: dict[int, list[str]] = {}
        for w in self.nouns:
            self.nouns_by_len.setdefault(len(w), []).append(w)
        self.accent = False
        self.quotes = False

    def _made_up(self, n, seen, max_syl=3, accent=False, extra=None):
        rng = self.rng
        out = []
        while len(out) < n:
            syl = rng.randint(1, max_syl) if not accent else rng.randint(2, 3)
            w = ""
            for _ in range(syl):
                w += rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
            if accent:
                pool = extra if extra else _ACCENTED_VOWELS
                vowels = [i for i, c in enumerate(w) if c in "aeiou"]
                if not vowels:
                    continue
                i = rng.choice(vowels)
                w = w[:i] + rng.choice(pool) + w[i + 1 :]
            if len(w) < 3 or len(w) > 12 or w in seen:
                continue
            seen.add(w)
            out.append(w)
        return out

    # -- grammar -------------------------------------------------------------------------------
    def noun(self) -> str:
        if self.accent and self.rng.random() < 0.3:
            return self.rng.choice(self.accented)
        return self.rng.choice(self.nouns)

    def np(self, allow_pp=True, short=False) -> list[str]:
        rng = self.rng
        r = rng.random()
        if r < 0.1 and not short:
            toks = [rng.choice(self.names)]
        elif r < 0.17 and not short:
            n = rng.choice([rng.randint(2, 99), rng.randint(100, 2003)])
            toks = [str(n), _plural(self.noun())]
        else:
            toks = [rng.choice(_DETS)]
            if rng.random() < 0.35 and not short:
                toks.append(rng.choice(self.adjs))
            toks.append(self.noun())
        if allow_pp and not short and rng.random() < 0.3:
            toks += [rng.choice(_PREPS)] + self.np(False)
        return toks

    def clause(self, short=False) -> list[str]:
        rng = self.rng
        toks = self.np(short=short) + [rng.choice(self.verbs)]
        if not short and rng.random() < 0.15:
            toks.append(rng.choice(_ADVS))
        toks += self.np(short=short)
        if not short and rng.random() < 0.4:
            toks += [rng.choice(_PREPS)] + self.np(False)
        return toks

    def sentence_tokens(self, short=False) -> list[str]:
        toks = self.clause(short)
        if not short and self.rng.random() < 0.35:
            toks += [","] + [self.rng.choice(_CONJS)] + self.clause()
        return toks

    def _finish(self, toks: list[str]) -> str:
        text = _tokens_text(toks)
        text = text[0].upper() + text[1:] + "."
        if self.quotes and self.rng.random() < 0.3:
            words = text.split(" ")
            if len(words) > 4:
                i = self.rng.randrange(1, len(words) - 3)
                words[i] = "“" + words[i]
                words[i + 1] = words[i + 1] + "”"
                text = " ".join(words)
        return text

    def sentence(self, short=False) -> str:
        return self._finish(self.sentence_tokens(short))

    def sentence_exact(self, n: int) -> str:
        """A sentence whose normalized length is exactly ``n`` (15 <= n <= ~120)."""
        for _ in range(20000):
            short = n < 45 or (n < 70 and self.rng.random() < 0.5)
            toks = self.sentence_tokens(short)
            need = n - _nlen(_tokens_text(toks[:-1]))
            if need in self.nouns_by_len:
                toks[-1] = self.rng.choice(self.nouns_by_len[need])
                return self._finish(toks)
        raise RuntimeError(f"could not make a sentence of normalized length {n}")

    def sentences_exact(self, total: int) -> list[str]:
        """Whole sentences whose normalized lengths add up to exactly ``total``."""
        out: list[str] = []
        rest = total
        while rest > 90:
            for _ in range(500):
                s = self.sentence()
                if _nlen(s) <= rest - 25:
                    break
            else:  # pragma: no cover - the grammar always has short sentences
                s = self.sentence(short=True)
            out.append(s)
            rest -= _nlen(s)
        out.append(self.sentence_exact(rest))
        return out

    def paragraph(self, lo=2, hi=6) -> list[str]:
        return [self.sentence() for _ in range(self.rng.randint(lo, hi))]

    def phrase(self, lo=2, hi=5) -> str:
        toks = self.np()
        while len(toks) < lo:
            toks += [self.rng.choice(_PREPS)] + self.np(False)
        toks = toks[: max(hi, lo)]
        while len(toks) > 1 and (toks[-1] in _PREPS or toks[-1] in _DETS):
            toks.pop()
        text = _tokens_text(toks)
        return text[0].upper() + text[1:]

    def headline(self) -> str:
        rng = self.rng
        toks = self.np(allow_pp=False) + [rng.choice(self.verbs)] + self.np(allow_pp=False)
        if rng.random() < 0.5:
            toks += [rng.choice(_PREPS)] + self.np(False)
        toks = [t for t in toks if t not in _DETS or rng.random() < 0.4]
        text = _tokens_text(toks)
        return text[0].upper() + text[1:]


def _foreign_sentence(rng: random.Random, script: str) -> str:
    if script == "cjk":
        n = rng.randint(10, 28)
        chars = [rng.choice(_CJK_CHARS) for _ in range(n)]
        if n > 14:
            chars.insert(rng.randint(5, n - 5), "、")
        return "".join(chars) + "。"
    syl = _GREEK_SYL if script == "greek" else _CYRILLIC_SYL
    words = []
    for _ in range(rng.randint(6, 15)):
        w = "".join(rng.choice(syl) for _ in range(rng.randint(1, 3)))
        if script == "greek" and w.endswith("σ"):
            w = w[:-1] + "ς"
        words.append(w)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


# --------------------------------------------------------------------------------------------
# page bodies: a list of blocks, rendered into <main>


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
        "blogroll": [(rng.choice(lang.names) + " " + rng.choice(lang.nouns), f"http://{rng.choice(lang.nouns)}.example/")
                     for _ in range(6)],
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
            '<form action="/subscribe" method="post"><input type="email" name="email">'
            "<button>Subscribe</button></form>",
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
    blocks = [{"t": "byline", "text": f"By {rng.choice(lang.names)} {rng.choice(lang.names)} | {date}"}]
    blocks.append({"t": "p", "s": lang.paragraph(2, 3), "rs": rng.getrandbits(32)})
    for _ in range(rng.randint(2, 4)):
        blocks.append({"t": "h2", "text": lang.phrase(2, 4)})
        for _ in range(rng.randint(1, 4)):
            blocks.append({"t": "p", "s": lang.paragraph(), "rs": rng.getrandbits(32)})
        if rng.random() < 0.3:
            blocks.append({"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 6))], "rs": rng.getrandbits(32)})
    if rng.random() < 0.5:
        blocks.append({
            "t": "table",
            "caption": lang.phrase(2, 4),
            "head": ["Place", "Count", "Change"],
            "rows": [[rng.choice(lang.names), str(rng.randint(10, 9999)), f"{rng.choice('+-')}{rng.randint(1, 40)}%"]
                     for _ in range(rng.randint(3, 5))],
        })
    if rng.random() < 0.6:
        blocks.append({"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 5))], "rs": rng.getrandbits(32)})
    return blocks


def _docs_body(lang: _Lang) -> list[dict]:
    rng = lang.rng
    blocks = [{"t": "p", "s": lang.paragraph(2, 4), "rs": rng.getrandbits(32)}]
    heads = [lang.phrase(1, 3) for _ in range(rng.randint(3, 5))]
    blocks.append({"t": "h3", "text": "Contents"})
    blocks.append({"t": "ol", "items": heads, "rs": rng.getrandbits(32)})
    table_at = rng.randrange(len(heads)) if rng.random() < 0.8 else -1
    for k, head in enumerate(heads):
        blocks.append({"t": "h2", "text": head})
        for _ in range(rng.randint(1, 3)):
            blocks.append({"t": "p", "s": lang.paragraph(2, 5), "rs": rng.getrandbits(32)})
        if rng.random() < 0.3:
            lines = [f"{rng.choice(lang.nouns)}.{rng.choice(lang.nouns)} = {rng.randint(0, 512)}" for _ in range(rng.randint(2, 5))]
            blocks.append({"t": "pre", "text": "\n".join(lines)})
        if k == table_at:
            blocks.append({
                "t": "table",
                "caption": "Parameters",
                "head": ["Name", "Type", "Description"],
                "rows": [[rng.choice(lang.nouns) + "_" + rng.choice(lang.nouns), rng.choice(["int", "str", "bool", "list"]),
                          lang.phrase(2, 5)] for _ in range(rng.randint(3, 6))],
            })
    blocks.append({"t": "h2", "text": "See also"})
    blocks.append({"t": "links", "items": [(w.capitalize(), f"/wiki/{w.capitalize()}") for w in rng.sample(lang.nouns, 4)]})
    return blocks


def _blog_body(lang: _Lang, date: str) -> list[dict]:
    rng = lang.rng
    blocks = [{"t": "byline", "text": f"Posted on {date}"}]
    for _ in range(rng.randint(4, 9)):
        blocks.append({"t": "p", "s": lang.paragraph(2, 5), "rs": rng.getrandbits(32)})
    if rng.random() < 0.5:
        blocks.insert(rng.randint(2, len(blocks)), {"t": "ul", "items": [lang.phrase() for _ in range(rng.randint(3, 5))],
                                                    "rs": rng.getrandbits(32)})
    return blocks


def _foreign_body(rng: random.Random, script: str) -> list[dict]:
    blocks = []
    for _ in range(rng.randint(8, 11)):
        if rng.random() < 0.25:
            blocks.append({"t": "h2", "text": _foreign_sentence(rng, script).rstrip(".。")})
        blocks.append({"t": "p", "s": [_foreign_sentence(rng, script) for _ in range(rng.randint(3, 6))],
                       "rs": rng.getrandbits(32)})
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


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    w = h = 4  # a 4x4 RGB gradient
    rows = b"".join(b"\x00" + b"".join(bytes([(x * 60) % 256, (y * 60) % 256, 128]) for x in range(w)) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def _pdf(title: str) -> bytes:
    text = f"BT /F1 12 Tf 72 720 Td ({title}) Tj ET".encode("ascii")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def _chunked(body: bytes, rng: random.Random) -> bytes:
    out = b""
    pos = 0
    while pos < len(body):
        n = rng.randint(700, 2600)
        part = body[pos : pos + n]
        out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
        pos += n
    return out + b"0\r\n\r\n"


def _gzip(body: bytes) -> bytes:
    return gzip.compress(body, compresslevel=6, mtime=0)


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _warc_date(secs: int) -> str:
    return (_BASE_TIME + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _http_date(secs: int) -> str:
    return (_BASE_TIME + timedelta(seconds=secs)).replace(tzinfo=timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")


# --------------------------------------------------------------------------------------------
# the crawl


class _Crawl:
    def __init__(self, pages: int, seed: int, files: int):
        self.n_pages = pages
        self.seed = seed
        self.files = files
        self.rng = random.Random(f"webwinnow-sample:{seed}:plan")
        self.lang = _Lang(random.Random(f"webwinnow-sample:{seed}:lang"))
        self.sites = _make_sites(self.lang)
        self.pages: list[dict] = []
        self.extra: list[dict] = []  # mirror pages
        self.events: list[dict] = []
        self.copies: list[dict] = []
        self.special: dict[str, str] = {}
        self._urls: set[str] = set()
        self._groups = 0  # planted source passages, to keep later insertions out of them

    # -- helpers -------------------------------------------------------------------------------
    def _unique(self, url: str) -> str:
        base, n = url, 2
        while url in self._urls:
            stem, dot, ext = base.rpartition(".") if base.endswith(".html") else (base, "", "")
            url = f"{stem}-{n}{dot}{ext}"
            n += 1
        self._urls.add(url)
        return url

    def _fetch_time(self, file: int, first_half=False) -> int:
        span = _FILE_WINDOW // 2 if first_half else int(_FILE_WINDOW * 0.9)
        return file * _FILE_WINDOW + 600 + self.rng.randrange(span)

    def _other_file(self, f: int, p_other=0.75) -> int:
        if self.files > 1 and self.rng.random() < p_other:
            return self.rng.choice([x for x in range(self.files) if x != f])
        return f

    def _new_page(self, site: str, idx: int) -> dict:
        lang, rng = self.lang, self.rng
        day = 1 + idx % 28
        date = f"2003-04-{day:02d}"
        if site == "news":
            title = lang.headline()
            path = f"/2003/04/{_slug(title)}.html"
            blocks = _news_body(lang, date)
        elif site == "docs":
            kind = rng.choice(["configuration", "reference", "guide", "overview", "internals"])
            title = f"{rng.choice(lang.names)} {rng.choice(lang.nouns)} {kind}"
            path = "/wiki/" + title.replace(" ", "_")
            blocks = _docs_body(lang)
        else:
            title = lang.headline()
            path = f"/2003/04/{_slug(title)}.html"
            blocks = _blog_body(lang, date)
        url = self._unique(f"http://{HOSTS[site]}{path}")
        page = {
            "id": len(self.pages), "site": site, "template": site, "host": HOSTS[site], "url": url,
            "path": url.split(HOSTS[site], 1)[1], "title": title, "blocks": blocks,
            "charset": "utf-8", "http_charset": True, "meta_charset": "utf-8" if site != "docs" else None,
            "transfer": None, "edited": f"{day} April 2003, at {10 + idx % 12}:{idx % 60:02d}",
            "file": rng.randrange(self.files), "role": None, "metadata": False,
        }
        page["date"] = self._fetch_time(page["file"])
        return page

    # -- planning ------------------------------------------------------------------------------
    def build(self) -> None:
        rng, lang = self.rng, self.lang
        n_blog = max(6, self.n_pages // 12)
        n_docs = round((self.n_pages - n_blog) * 0.45)
        n_news = self.n_pages - n_blog - n_docs
        for site, n in (("news", n_news), ("docs", n_docs), ("blog", n_blog)):
            for i in range(n):
                self.pages.append(self._new_page(site, i))
        by_site = {s: [p for p in self.pages if p["site"] == s] for s in ("news", "docs", "blog")}
        self._free = {s: list(ps) for s, ps in by_site.items()}
        for ps in self._free.values():
            rng.shuffle(ps)

        self._plan_specials()
        self._plan_mirrors()
        self._plan_versions()
        self._plan_revisits()
        self._plan_passages()

    def _take(self, site: str) -> dict:
        page = self._free[site].pop()
        return page

    def _plan_specials(self) -> None:
        rng, lang = self.rng, self.lang
        # ISO-8859-1, declared only in the HTTP header, accented words
        p = self._take("news")
        lang.accent = True
        p["blocks"] = _news_body(lang, "2003-04-11")
        lang.accent = False
        p.update(charset="iso-8859-1", http_charset=True, meta_charset=None, role="latin1")
        self.special["latin1"] = p["url"]
        self._latin1 = p
        # windows-1252, declared only by <meta charset>: curly quotes and accented words
        p = self._take("docs")
        lang.accent, lang.quotes = True, True
        p["blocks"] = _docs_body(lang)
        lang.accent, lang.quotes = False, False
        p["blocks"].insert(1, {"t": "p", "s": [f"The fee is €{rng.randint(5, 90)} per year — payable in advance."],
                               "rs": rng.getrandbits(32)})
        p.update(charset="windows-1252", http_charset=False, meta_charset="windows-1252", role="cp1252")
        self.special["cp1252_meta"] = p["url"]
        # no declaration at all, UTF-8 bytes (with letters outside ISO-8859-1)
        p = self._take("blog")
        p["blocks"] = _blog_body(lang, "2003-04-19")
        for b in p["blocks"]:
            if b["t"] == "p":
                b["s"].append(" ".join(rng.sample(lang.non_latin1, 5)).capitalize() + ".")
        p.update(charset="utf-8", http_charset=False, meta_charset=None, role="undeclared")
        self.special["undeclared_utf8"] = p["url"]
        # non-Latin scripts, on the blog (small template) so the page is mostly non-Latin
        for script, lang_code in (("greek", "el"), ("cyrillic", "ru"), ("cjk", "ja")):
            p = self._take("blog")
            srng = random.Random(f"webwinnow-sample:{self.seed}:{script}")
            p["blocks"] = [{"t": "byline", "text": "2003-04-22"}] + _foreign_body(srng, script)
            p["title"] = _foreign_sentence(srng, script).rstrip(".。")[:40]
            p["lang"] = lang_code
            p["role"] = script
            self.special[script] = p["url"]
            if script == "greek":
                self._greek = p
        # transport encodings: chunked news page, gzip docs page
        p = self._take("news")
        p["transfer"] = "chunked"
        self.special["chunked"] = p["url"]
        self._chunked_page = p
        p = self._take("docs")
        p["transfer"] = "gzip"
        self.special["gzip"] = p["url"]
        self._gzip_page = p

    def _add_extra(self, src: dict, host: str, template: str, path: str, blocks=None, file=None) -> dict:
        url = self._unique(f"http://{host}{path}")
        page = dict(src)
        page.update(
            id=None, host=host, url=url, path=path, template=template, site=src["site"],
            blocks=_copy_blocks(blocks if blocks is not None else src["blocks"]), mirror_of=src["url"],
            transfer=None, metadata=False, role="mirror",
        )
        if template != src["template"]:
            page.update(charset="utf-8", http_charset=True, meta_charset="utf-8")
        page["file"] = self._other_file(src["file"]) if file is None else file
        page["date"] = self._fetch_time(page["file"])
        self.extra.append(page)
        return page

    def _copy_record(self, kind, src, dst, **extra) -> None:
        rec = {"kind": kind, "src_url": src["url"], "dst_url": dst["url"]}
        rec.update(extra)
        self.copies.append((rec, src, dst))

    def copy_records(self) -> list[dict]:
        """The planted copies, with files and fetch dates as finally assigned."""
        out = []
        for rec, src, dst in self.copies:
            rec = dict(rec)
            rec.update(
                src_file=f"sample-{src['file']:05d}.warc.gz", dst_file=f"sample-{dst['file']:05d}.warc.gz",
                src_date=_warc_date(src["date"]), dst_date=_warc_date(dst["date"]),
            )
            out.append(rec)
        return out

    def _main_nlen(self, page) -> int:
        return _nlen(_visible(_render_main(page)))

    def _plan_mirrors(self) -> None:
        rng = self.rng
        n = max(4, self.n_pages // 75)
        # exact mirrors: the Greek page, a www. twin with the same template, and mirror/blog reposts
        sources = [self._greek, self._take("news")] + [self._take(rng.choice(["news", "docs"])) for _ in range(n - 2)]
        for k, src in enumerate(sources):
            src["role"] = "mirror_src"
            if k == 1:
                dst = self._add_extra(src, "www." + src["host"], src["template"], src["path"])
                dst["mirror_of"] = src["url"]
            elif k % 2 == 0:
                dst = self._add_extra(src, HOSTS["mirror"], "mirror", f"/{src['host']}{src['path']}")
            else:
                dst = self._add_extra(src, HOSTS["blog"], "blog", f"/reposts/{_slug(src['title'])}.html")
            self._copy_record("mirror_exact", src, dst, text=None, normalized_length=self._main_nlen(src),
                              dst_style=dst["template"])
        for k in range(n):
            src = self._take(rng.choice(["news", "docs"]))
            src["role"] = "mirror_src"
            blocks, edits, overlap = _edit_blocks(self.lang, src["blocks"], 0.1)
            if k % 2 == 0:
                dst = self._add_extra(src, HOSTS["blog"], "blog", f"/reposts/{_slug(src['title'])}-edited.html", blocks)
            else:
                dst = self._add_extra(src, HOSTS["mirror"], "mirror", f"/edited/{src['host']}{src['path']}", blocks)
            self._copy_record("mirror_edited", src, dst, text=None, normalized_length=self._main_nlen(src),
                              dst_style=dst["template"], edited_sentences=edits, unchanged_share=overlap)

    def _later(self, page: dict) -> tuple[int, int]:
        """A file and time after ``page``'s fetch (the next file when there is one)."""
        if page["file"] + 1 < self.files:
            f = page["file"] + 1
            return f, self._fetch_time(f)
        start = page["date"] + 3600
        end = (page["file"] + 1) * _FILE_WINDOW - 60
        return page["file"], start + self.rng.randrange(max(1, end - start))

    def _plan_versions(self) -> None:
        rng = self.rng
        for site in ("news", "docs", "news"):
            src = self._take(site)
            src["role"] = "version_src"
            src["date"] = self._fetch_time(src["file"], first_half=True)
            blocks, edits, overlap = _edit_blocks(self.lang, src["blocks"], 0.05)
            blocks.append({"t": "p", "s": ["Update: " + self.lang.sentence()], "rs": rng.getrandbits(32)})
            dst = dict(src)
            dst.update(blocks=blocks, id=None, role="version")
            dst["file"], dst["date"] = self._later(src)
            if site == "docs":
                dst["edited"] = "30 May 2003, at 09:15"
            self.extra.append(dst)
            self._copy_record("version", src, dst, text=None, normalized_length=self._main_nlen(src),
                              edited_sentences=edits + 1, unchanged_share=overlap)

    def _plan_revisits(self) -> None:
        self.revisits = []
        for site in ("docs", "news"):
            src = self._take(site)
            src["role"] = "revisited"
            src["date"] = self._fetch_time(src["file"], first_half=True)
            f, t = self._later(src)
            self.revisits.append({"page": src, "file": f, "date": t})
        self._take("news")["metadata"] = True

    def _plan_passages(self) -> None:
        rng, lang = self.rng, self.lang
        scale = max(1.0, self.n_pages / 300)
        plan = []
        for cls, base in _CLASS_COUNTS.items():
            lo, hi = LENGTH_CLASSES[cls]
            n = max(base, round(base * scale))
            for i in range(n):
                if cls == "short":
                    target = _SHORT_TARGETS[i % len(_SHORT_TARGETS)]
                elif cls == "threshold":
                    target = _THRESHOLD_TARGETS[i % len(_THRESHOLD_TARGETS)]
                elif i == 0:
                    target = lo
                elif i == 1:
                    target = hi
                else:
                    target = rng.randint(lo, hi)
                plan.append((cls, target))
        rng.shuffle(plan)
        n_plan = len(plan)
        # which copies change letter case in the destination
        case_at = {i: c for i, c in zip(
            [i for i, (cls, _) in enumerate(plan) if cls in ("threshold", "medium")][:2], ["upper", "lower"])}
        # the pool of ordinary pages: every page not already given a role
        pool = [p for s in ("news", "docs", "blog") for p in self._free[s] if p["role"] is None and not p["metadata"]]
        rng.shuffle(pool)
        src_pool = [p for p in pool if p["site"] != "blog"]
        used_src: dict[int, int] = {}
        used_dst: dict[int, int] = {}

        def pick(cands, used, cap):
            cands = [p for p in cands if used.get(p["id"], 0) < cap and p["role"] is None]
            if not cands:
                cands = [p for p in pool if used.get(p["id"], 0) < cap + 2]
            p = rng.choice(cands)
            used[p["id"]] = used.get(p["id"], 0) + 1
            return p

        for i, (cls, target) in enumerate(plan):
            # a few sources and destinations are fixed to exercise charsets and transfer encodings
            if i == 0:
                src = self._latin1
            elif i == 1:
                src = self._gzip_page
                used_src[src["id"]] = 1
            else:
                src = pick(src_pool, used_src, 1)
            if i == 2:
                dst = self._chunked_page
            else:
                r = rng.random()
                if r < 0.12:  # same host
                    cands = [p for p in pool if p["site"] == src["site"] and p is not src]
                elif r < 0.4:
                    cands = [p for p in pool if p["site"] == "blog"]
                else:
                    other = "docs" if src["site"] == "news" else "news"
                    cands = [p for p in pool if p["site"] == other]
                cands = [p for p in cands if p is not src]
                dst = pick(cands, used_dst, 2)
            if src["file"] == dst["file"] and dst is not self._chunked_page and dst["role"] is None:
                dst["file"] = self._other_file(dst["file"])
                dst["date"] = self._fetch_time(dst["file"])

            if i == 0:
                lang.accent = True
            sents = lang.sentences_exact(target)
            lang.accent = False
            paras = self._split_paras(sents, cls)
            text = "\n".join(" ".join(p) for p in paras)
            assert _nlen(text) == target, (target, _nlen(text))

            self._embed_src(src, paras)
            case = case_at.get(i)
            style = self._embed_dst(dst, paras, case)
            self._copy_record("passage", src, dst, text=text, normalized_length=target, length_class=cls,
                              case=case, dst_style=style)
        self.n_passages = n_plan

    def _split_paras(self, sents: list[str], cls: str) -> list[list[str]]:
        rng = self.rng
        if cls == "short" or len(sents) == 1 or (cls == "threshold" and rng.random() < 0.7):
            return [sents]
        paras, cur = [], []
        for s in sents:
            cur.append(s)
            if len(cur) >= rng.randint(2, 5):
                paras.append(cur)
                cur = []
        if cur:
            paras.append(cur)
        return paras

    def _embed_src(self, page: dict, paras: list[list[str]]) -> None:
        """Put the passage into ``page`` as whole sentences inside its own paragraph(s)."""
        rng, lang = self.rng, self.lang
        new = [list(p) for p in paras]
        new[0] = [lang.sentence() for _ in range(rng.randint(0, 2))] + new[0]
        new[-1] = new[-1] + [lang.sentence() for _ in range(rng.randint(0, 2))]
        self._groups += 1
        blocks = [{"t": "p", "s": s, "rs": rng.getrandbits(32), "planted": self._groups} for s in new]
        pos = self._insert_pos(page)
        page["blocks"][pos:pos] = blocks

    def _insert_pos(self, page: dict) -> int:
        """A gap between two top-level blocks: never before the first (byline or intro), and
        never inside the paragraphs of an earlier planted passage."""
        blocks = page["blocks"]
        gaps = [i for i in range(1, len(blocks) + 1)
                if i == len(blocks) or not blocks[i].get("planted")
                or blocks[i].get("planted") != blocks[i - 1].get("planted")]
        return self.rng.choice(gaps)

    def _embed_dst(self, page: dict, paras: list[list[str]], case: str | None) -> str:
        rng, lang = self.rng, self.lang
        styles = ["blockquote", "div", "br", "li"] + (["inline", "inline"] if len(paras) == 1 else [])
        style = rng.choice(styles)
        if style == "inline":
            sents = [_case(s, case) for s in paras[0]]
            before = [lang.sentence() for _ in range(rng.randint(1, 2))]
            after = [lang.sentence() for _ in range(rng.randint(0, 2))]
            sents = before + sents + after
            block = {"t": "p", "s": sents, "rs": rng.getrandbits(32)}
        else:
            block = {"t": "quote", "paras": paras, "style": style, "case": case, "rs": rng.getrandbits(32)}
        page["blocks"].insert(self._insert_pos(page), block)
        return style

    # -- records -------------------------------------------------------------------------------
    def make_events(self) -> None:
        seq = 0

        def add(ev):
            nonlocal seq
            ev["seq"] = seq
            seq += 1
            self.events.append(ev)

        for page in self.pages + self.extra:
            add({"kind": "page", "page": page, "file": page["file"], "date": page["date"]})
        for rv in self.revisits:
            add({"kind": "revisit", "page": rv["page"], "file": rv["file"], "date": rv["date"]})

        rng = self.rng
        f = lambda k: k % self.files  # noqa: E731
        news, docs = HOSTS["news"], HOSTS["docs"]
        static = [
            (f(0), f"http://{news}/static/site.css", "text/css", _CSS.encode()),
            (f(1), f"http://{news}/static/logo.png", "image/png", _png()),
            (f(2), f"http://{docs}/files/{_slug(self.sites['docs']['name'])}-manual.pdf", "application/pdf",
             _pdf(self.sites["docs"]["name"] + " manual")),
            (f(0), f"http://{docs}/api/search?q={self.lang.nouns[3]}", "application/json",
             json.dumps({"query": self.lang.nouns[3], "results": [
                 {"title": p["title"], "url": p["url"]} for p in self.pages if p["site"] == "docs"][:5]},
                 sort_keys=True, ensure_ascii=False).encode()),
            (f(1), f"http://{news}/robots.txt", "text/plain", b"User-agent: *\nDisallow: /subscribe\n"),
        ]
        for file, url, ctype, body in static:
            add({"kind": "static", "url": url, "ctype": ctype, "body": body, "file": file,
                 "date": self._fetch_time(file)})
        # a 404 with the site template, and a 301 redirect
        p404 = {"site": "news", "template": "news", "title": "Page not found", "path": "/2003/04/no-such-story.html",
                "meta_charset": "utf-8", "blocks": [{"t": "p", "s": ["Sorry, the page you asked for does not exist."],
                                                     "rs": rng.getrandbits(32)}]}
        url404 = f"http://{news}{p404['path']}"
        self.special["404"] = url404
        add({"kind": "status", "url": url404, "status": "404 Not Found", "file": f(2), "date": self._fetch_time(f(2)),
             "body": _render_page(p404, self.sites, _render_main(p404)).encode("utf-8"), "location": None})
        target = next(p for p in self.pages if p["site"] == "docs")
        url301 = f"http://{docs}/wiki/Old_Name_{_slug(target['title'])}"
        self.special["301"] = url301
        body301 = ("<!DOCTYPE html>\n<html><head><title>301 Moved Permanently</title></head><body>\n"
                   f'<h1>Moved Permanently</h1>\n<p>The document has moved <a href="{target["url"]}">here</a>.</p>\n'
                   "</body></html>\n")
        add({"kind": "status", "url": url301, "status": "301 Moved Permanently", "file": f(1),
             "date": self._fetch_time(f(1)), "body": body301.encode("ascii"), "location": target["url"]})
        self.special["metadata"] = next(p["url"] for p in self.pages if p["metadata"])

    def page_payload(self, page: dict) -> tuple[bytes, bytes, list[tuple[str, str]]]:
        """(html bytes, payload bytes as stored, HTTP headers)."""
        text = _render_page(page, self.sites, _render_main(page))
        body = text.encode(page["charset"])
        ctype = "text/html" + (f"; charset={page['charset'].upper() if page['charset'] != 'utf-8' else 'utf-8'}"
                               if page["http_charset"] else "")
        headers = [("Date", _http_date(page["date"])), ("Server", "Apache/1.3.27 (Unix)"),
                   ("Last-Modified", _http_date(max(0, page["date"] - 86400 * 3))), ("Content-Type", ctype)]
        if page["transfer"] == "chunked":
            payload = _chunked(body, random.Random(f"webwinnow-sample:{self.seed}:chunks"))
            headers.append(("Transfer-Encoding", "chunked"))
        elif page["transfer"] == "gzip":
            payload = _gzip(body)
            headers += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding"), ("Content-Length", str(len(payload)))]
        else:
            payload = body
            headers.append(("Content-Length", str(len(payload))))
        headers.append(("Connection", "close"))
        return body, payload, headers


class _Writer:
    """Writes one WARC file with deterministic record ids and dates, and counts records."""

    def __init__(self, fh, ids: random.Random, counts: dict):
        self.w = WARCWriter(fh, gzip=True)
        self.ids = ids
        self.counts = counts
        self.info_id = None

    def new_id(self) -> str:
        return f"<urn:uuid:{uuid.UUID(int=self.ids.getrandbits(128), version=4)}>"

    def _write(self, rec) -> None:
        self.w.write_record(rec)
        t = rec.rec_headers.get_header("WARC-Type")
        self.counts[t] = self.counts.get(t, 0) + 1

    def warcinfo(self, filename: str, date: int, fields: dict) -> None:
        self.info_id = self.new_id()
        data = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("utf-8")
        rec = self.w.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(data), length=len(data),
            warc_headers_dict={"WARC-Record-ID": self.info_id, "WARC-Date": _warc_date(date), "WARC-Filename": filename},
        )
        self._write(rec)

    def _hdrs(self, rid: str, date: int, url: str, extra=()) -> dict:
        host = url.split("/")[2]
        d = {"WARC-Record-ID": rid, "WARC-Date": _warc_date(date), "WARC-Warcinfo-ID": self.info_id}
        if host in _IPS:
            d["WARC-IP-Address"] = _IPS[host]
        d.update(extra)
        return d

    def request(self, url: str, date: int, concurrent_to: str, gzip_ok=False) -> None:
        host = url.split("/")[2]
        path = url.split(host, 1)[1] or "/"
        headers = [("Host", host), ("User-Agent", "webwinnow-sample-crawler/1.0 (+http://sample.test/bot)"),
                   ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")]
        if gzip_ok:
            headers.append(("Accept-Encoding", "gzip"))
        headers.append(("Connection", "close"))
        http = StatusAndHeaders(f"GET {path} HTTP/1.1", headers, is_http_request=True)
        rec = self.w.create_warc_record(url, "request", http_headers=http,
                                        warc_headers_dict=self._hdrs(self.new_id(), date, url,
                                                                     {"WARC-Concurrent-To": concurrent_to}))
        self._write(rec)

    def response(self, url: str, date: int, status: str, headers: list, payload: bytes, rid: str) -> None:
        http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        rec = self.w.create_warc_record(url, "response", payload=io.BytesIO(payload), length=len(payload),
                                        http_headers=http, warc_headers_dict=self._hdrs(rid, date, url))
        self._write(rec)

    def revisit(self, url: str, date: int, headers: list, digest: str, refers_date: int, rid: str) -> None:
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        rec = self.w.create_revisit_record(url, digest, url, _warc_date(refers_date), http_headers=http,
                                           warc_headers_dict=self._hdrs(rid, date, url))
        self._write(rec)

    def metadata(self, url: str, date: int, concurrent_to: str, fields: list) -> None:
        data = "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")
        rec = self.w.create_warc_record(url, "metadata", payload=io.BytesIO(data), length=len(data),
                                        warc_content_type="application/warc-fields",
                                        warc_headers_dict=self._hdrs(self.new_id(), date, url,
                                                                     {"WARC-Concurrent-To": concurrent_to}))
        self._write(rec)


def write_sample(out_dir, *, pages: int = 300, seed: int = 2003, files: int = 3) -> dict:
    """Write the sample crawl into ``out_dir`` and return a summary.

    Writes ``files`` WARC files ``sample-00000.warc.gz`` ... and ``planted.json``. The output is
    byte-for-byte identical for the same arguments. ``pages`` is the number of ordinary HTML
    pages (mirrors, second versions, the 404 and the 301 come on top); at least ``MIN_PAGES``.

    The summary has ``warc_files`` (paths), ``planted`` (path), ``records`` (count per WARC-Type),
    ``records_per_file``, ``html_pages`` (HTML 200 responses), ``http_responses`` (by kind),
    ``planted_copies`` (total), ``copies_by_kind``, ``passages_by_class``, ``copies_cross_file`` and
    ``bytes`` (total size of the WARC files).
    """
    if pages < MIN_PAGES:
        raise ValueError(f"pages must be at least {MIN_PAGES}, got {pages}")
    if files < 1:
        raise ValueError(f"files must be at least 1, got {files}")
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)

    crawl = _Crawl(pages, seed, files)
    crawl.build()
    crawl.make_events()

    ids = random.Random(f"webwinnow-sample:{seed}:ids")
    counts: dict[str, int] = {}
    per_file = []
    paths = []
    kinds = {"html_200": 0, "html_other_status": 0, "non_html": 0, "revisit": 0}
    digests: dict[tuple[str, int], str] = {}
    # responses must be written before revisits that refer to them: sort by time within files,
    # and revisits always come later in time (a later file, or later in the same file)
    for f in range(files):
        name = f"sample-{f:05d}.warc.gz"
        path = os.path.join(out_dir, name)
        paths.append(path)
        file_counts: dict[str, int] = {}
        with open(path, "wb") as fh:
            w = _Writer(fh, ids, file_counts)
            w.warcinfo(name, f * _FILE_WINDOW, {
                "software": "webwinnow-sample/1 (warcio)",
                "format": "WARC File Format 1.0",
                "isPartOf": f"webwinnow-sample-seed{seed}",
                "description": "Generated sample crawl with planted copies; see planted.json",
                "robots": "ignore",
                "hostname": "sample.test",
            })
            events = sorted((e for e in crawl.events if e["file"] == f), key=lambda e: (e["date"], e["seq"]))
            for ev in events:
                rid = w.new_id()
                kind = ev["kind"]
                if kind == "page":
                    page = ev["page"]
                    _, payload, headers = crawl.page_payload(page)
                    w.request(page["url"], ev["date"], rid, gzip_ok=page["transfer"] == "gzip")
                    w.response(page["url"], ev["date"], "200 OK", headers, payload, rid)
                    digests[(page["url"], page["date"])] = _sha1_b32(payload)
                    kinds["html_200"] += 1
                    if page["metadata"]:
                        w.metadata(page["url"], ev["date"], rid, [
                            ("via", f"http://{page['host']}/"), ("hopsFromSeed", "L"), ("fetchTimeMs", "87"),
                            *[("outlink", f"http://{page['host']}{h} L a/@href") for _, h in crawl.sites["news"]["nav"][:5]],
                        ])
                elif kind == "revisit":
                    page = ev["page"]
                    _, payload, headers = crawl.page_payload(page)
                    headers = [(k, _http_date(ev["date"]) if k == "Date" else v) for k, v in headers]
                    w.request(page["url"], ev["date"], rid)
                    w.revisit(page["url"], ev["date"], headers, digests[(page["url"], page["date"])], page["date"], rid)
                    kinds["revisit"] += 1
                elif kind == "static":
                    headers = [("Date", _http_date(ev["date"])), ("Server", "Apache/1.3.27 (Unix)"),
                               ("Content-Type", ev["ctype"]), ("Content-Length", str(len(ev["body"]))),
                               ("Connection", "close")]
                    w.request(ev["url"], ev["date"], rid)
                    w.response(ev["url"], ev["date"], "200 OK", headers, ev["body"], rid)
                    kinds["non_html"] += 1
                elif kind == "status":
                    headers = [("Date", _http_date(ev["date"])), ("Server", "Apache/1.3.27 (Unix)")]
                    if ev["location"]:
                        headers.append(("Location", ev["location"]))
                    charset = "iso-8859-1" if ev["location"] else "utf-8"
                    headers += [("Content-Type", f"text/html; charset={charset}"),
                                ("Content-Length", str(len(ev["body"]))), ("Connection", "close")]
                    w.request(ev["url"], ev["date"], rid)
                    w.response(ev["url"], ev["date"], ev["status"], headers, ev["body"], rid)
                    kinds["html_other_status"] += 1
                else:  # pragma: no cover
                    raise AssertionError(kind)
        per_file.append(dict(sorted(file_counts.items())))
        for k, v in file_counts.items():
            counts[k] = counts.get(k, 0) + v

    copies = crawl.copy_records()
    copies_by_kind: dict[str, int] = {}
    by_class: dict[str, int] = {c: 0 for c in LENGTH_CLASSES}
    for c in copies:
        copies_by_kind[c["kind"]] = copies_by_kind.get(c["kind"], 0) + 1
        if c["kind"] == "passage":
            by_class[c["length_class"]] += 1
    planted = {
        "seed": seed,
        "pages": pages,
        "files": files,
        "normalization": "casefold, keep str.isalnum() characters",
        "length_classes": {k: list(v) for k, v in LENGTH_CLASSES.items()},
        "sentinels": {"script": SCRIPT_SENTINEL, "style": STYLE_SENTINEL},
        "hosts": {**HOSTS, "news_www": "www." + HOSTS["news"]},
        "special": crawl.special,
        "copies": copies,
    }
    planted_path = os.path.join(out_dir, "planted.json")
    with open(planted_path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(planted, ensure_ascii=False, indent=1) + "\n")

    return {
        "warc_files": paths,
        "planted": planted_path,
        "records": dict(sorted(counts.items())),
        "records_per_file": per_file,
        "html_pages": kinds["html_200"],
        "http_responses": kinds,
        "planted_copies": len(copies),
        "copies_by_kind": copies_by_kind,
        "passages_by_class": by_class,
        "copies_cross_file": sum(c["src_file"] != c["dst_file"] for c in copies),
        "bytes": sum(os.path.getsize(p) for p in paths),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m webwinnow.sample",
        description="Write the deterministic sample crawl (WARC files + planted.json) into OUT_DIR.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR")
    parser.add_argument("--pages", type=int, default=300, help="ordinary HTML pages (default 300, minimum %d)" % MIN_PAGES)
    parser.add_argument("--seed", type=int, default=2003, help="RNG seed (default 2003)")
    parser.add_argument("--files", type=int, default=3, help="number of WARC files (default 3)")
    args = parser.parse_args(argv)
    try:
        summary = write_sample(args.out_dir, pages=args.pages, seed=args.seed, files=args.files)
    except ValueError as exc:
        parser.error(str(exc))
    for path in summary["warc_files"]:
        print(f"warc: {path}")
    print(f"planted: {summary['planted']}")
    for key in ("records", "http_responses", "copies_by_kind", "passages_by_class"):
        print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in summary[key].items()))
    for key in ("html_pages", "planted_copies", "copies_cross_file", "bytes"):
        print(f"{key}: {summary[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
