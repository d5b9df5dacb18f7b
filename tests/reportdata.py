"""Report inputs and markup checks shared by the report's unit tests and its browser tests."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from webwinnow.analysis import powerlaw
from webwinnow.htmlreport import PairView, write_report
from webwinnow.htmlreport.pages import CSP, safe_href

# ---------------------------------------------------------------------------- helpers

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Dom(HTMLParser):
    """A small DOM reading: every start tag with its attributes, all text, and the text of every
    <mark> together with the id of the text column (div#text-a / div#text-b) it is in."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[tuple[str, str | None]] = []
        self.texts: dict[str, list[str]] = {}  # column id -> its text, pieces
        self.marks: list[tuple[str | None, str]] = []
        self.data: list[str] = []
        self._mark: list[str] | None = None
        self.feed(source)
        self.close()

    def _column(self) -> str | None:
        for _tag, ident in reversed(self.stack):
            if ident in ("text-a", "text-b"):
                return ident
        return None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "mark":
            self._mark = []
        if tag not in VOID:
            self.stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "mark" and self._mark is not None:
            self.marks.append((self._column(), "".join(self._mark)))
            self._mark = None
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        self.data.append(data)
        if self._mark is not None:
            self._mark.append(data)
        col = self._column()
        if col:
            self.texts.setdefault(col, []).append(data)

    def text(self) -> str:
        return "".join(self.data)

    def column_text(self, ident: str) -> str:
        return "".join(self.texts.get(ident, []))

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def pair(i: int, **kw) -> PairView:
    base = dict(
        doc_a=100 + i,
        doc_b=900 + i,
        url_a=f"https://a.example/{i}",
        url_b=f"http://b.example/{i}",
        shared=10,
        fp_a=20,
        fp_b=40,
        resemblance=0.2,
        containment_a=0.5,
        containment_b=0.25,
    )
    base.update(kw)
    return PairView(**base)


RUNS = powerlaw.rank_frequency({500: 1, 120: 3, 40: 10, 9: 60, 3: 400, 2: 2000, 1: 12000})
FIT = powerlaw.fit_power_law(RUNS)
STATS = {
    "inputs": 3,
    "records_seen": 1000,
    "parsed": 900,
    "skipped": 60,
    "failed": 10,
    "flagged": 30,
    "documents": 900,
    "kgrams": 1_000_000,
    "fingerprints": 20_000,
    "k": 50,
    "w": 100,
    "t": 149,
    "robust": True,
    "density": 0.02,
    "expected_density": 2 / 101,
    "max_df": 100,
    "pairs": 3,
    "clusters": 1,
    "passages": 2,
}

HOSTILE_TEXT = "<script>alert(1)</script> \"><img src=x onerror=alert(2)> '><svg onload=alert(3)> &amp; </div></mark>"
HOSTILE_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    'http://x.example/"><img src=x onerror=alert(1)>',
    "https://x.example/<script>alert(1)</script>",
    "http://x.example/a\nb",
    "//evil.example/x",
    "vbscript:msgbox(1)",
]


def html_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.html"))


def written(tmp_path: Path, **kw) -> Path:
    args = dict(stats=STATS, pairs=[pair(0)], boilerplate=[], rank_freq=RUNS, fit=FIT)
    args.update(kw)
    return write_report(tmp_path / "report", **args)


# Relative links the report makes: page files, pair pages, in-page anchors, stats.json, the plot.
RELATIVE = re.compile(
    r"(\.\./)?(index\.html|boilerplate\.html|figures\.html|cross-host\.html|clusters\.html|failures\.html|dedup\.html|contamination\.html|stats\.json|pairs-\d{3,}\.html|pair/-?\d+--?\d+\.html|"
    r"-?\d+--?\d+\.html)|#[ab]\d+|figures/[a-z_]+\.png|#[a-z_]+\.png"
)


def check_safe_markup(path: Path) -> None:
    """No script, no event handler, no foreign embed, only http(s) or report-internal links."""
    source = path.read_text(encoding="utf-8")
    low = source.lower()
    for needle in ("<script", "<img src=x", "<svg", "<iframe", "<object", "<embed"):
        assert needle not in low, (path, needle)  # shown escaped (&lt;script), never as markup
    dom = Dom(source)
    tags = {t for t, _ in dom.tags}
    assert tags <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "nav",
        "h1",
        "h2",
        "h3",
        "p",
        "b",
        "br",
        "span",
        "a",
        "div",
        "dl",
        "dt",
        "dd",
        "section",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "mark",
        "code",
        "img",
        "ul",
        "li",
    }, (path, tags)
    for tag, attrs in dom.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (path, tag, name)
            if name == "href":
                assert value and (RELATIVE.fullmatch(value) or safe_href(value) == value), (path, value)
            if name == "src":
                assert tag == "img" and re.fullmatch(r"rank_frequency\.png|figures/[a-z_]+\.png", value), (path, value)
    metas = dom.named("meta")
    assert {"http-equiv": "Content-Security-Policy", "content": CSP} in metas, path
    assert "default-src 'none'" in CSP and "img-src 'self'" in CSP and "style-src 'unsafe-inline'" in CSP


# ---------------------------------------------------------------------------- escaping
