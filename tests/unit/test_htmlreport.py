"""The static HTML report: escaping, highlighting, paging, missing stats; then in a real browser."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.analysis import powerlaw
from webwinnow.htmlreport import MAX_TEXT_CHARS, ClusterView, HashView, PairView, RunPages, merge_spans, write_report
from webwinnow.htmlreport.highlight import esc, esc_all, esc_text, render_text
from webwinnow.htmlreport.pages import safe_href
from webwinnow.text.visible import visible

from reportdata import FIT, HOSTILE_TEXT, HOSTILE_URLS, RUNS, STATS, Dom, check_safe_markup, html_files, pair, written


def test_hostile_strings_never_become_markup(tmp_path):
    pairs = [
        pair(
            i,
            url_a=url,
            url_b=HOSTILE_TEXT,
            text_a=HOSTILE_TEXT + " copied text " + url,
            text_b="copied text",
            passages=((len(HOSTILE_TEXT) + 1, len(HOSTILE_TEXT) + 12, 0, 11, 10),),
        )
        for i, url in enumerate(HOSTILE_URLS)
    ]
    hashes = [HashView(hash=-5, docs=900, occurrences=1000, hosts=7, snippet=HOSTILE_TEXT)]
    stats = dict(STATS, tag="<script>alert('tag')</script>", weird=HOSTILE_TEXT, nested={"x": HOSTILE_TEXT})
    run = RunPages(
        failed_files=((HOSTILE_TEXT, HOSTILE_TEXT, 3, 0),),
        record_outcomes=(("failed", HOSTILE_TEXT, 2),),
        clusters=(ClusterView(1, 2, 1, 1, HOSTILE_URLS[0], ((1, HOSTILE_TEXT), (2, HOSTILE_URLS[1]))),),
        total_clusters=1,
        trimmed=((5, HOSTILE_TEXT, 100, 50, None),),
        dedup={
            "kept": 1,
            "documents": 2,
            "near_duplicates": 1,
            "emptied": 0,
            "removed_chars": 50,
            "original_chars": 100,
            "copied_chars_removed": 50,
            "trimmed_documents": 1,
            "template_chars_removed": 0,
            "min_passage": 149,
        },
        contamination={
            "index": HOSTILE_TEXT,
            "index_documents": 3,
            "documents": 2,
            "contaminated": 1,
            "half_covered": 1,
            "covered": 0,
            "t": 149,
        },
        covered=((HOSTILE_TEXT, 400, 300, 0.75, 250, 1, (HOSTILE_TEXT,)),),
    )
    index = written(tmp_path, stats=stats, pairs=pairs, boilerplate=hashes, run=run)
    root = index.parent
    files = html_files(root)
    # index, cross-host, clusters, dedup, index check, failures, boilerplate, figures and a page per pair
    assert len(files) == 8 + len(pairs)
    for name in ("clusters.html", "failures.html", "dedup.html", "contamination.html"):
        assert HOSTILE_TEXT in Dom((root / name).read_text(encoding="utf-8")).text(), name
    for path in files:
        check_safe_markup(path)
        source = path.read_text(encoding="utf-8")
        assert '"><img' not in source and "'><svg" not in source
        assert 'href="javascript' not in source.lower() and 'href="data:' not in source.lower()
    # shown, escaped, not dropped
    index_src = index.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index_src
    assert "javascript:alert(1)" in index_src  # as text
    dom = Dom(index_src)
    assert HOSTILE_TEXT in dom.text() and "javascript:alert(1)" in dom.text()
    hrefs = [a["href"] for a in dom.named("a")]
    assert not any("script" in h.lower() and not h.startswith("https://x.example/") for h in hrefs)
    pair_dom = Dom((root / "pair" / f"{pairs[0].key}.html").read_text(encoding="utf-8"))
    assert pair_dom.column_text("text-a") == pairs[0].text_a
    assert pair_dom.marks == [("text-a", "copied text"), ("text-b", "copied text")]
    boiler = (root / "boilerplate.html").read_text(encoding="utf-8")
    assert HOSTILE_TEXT in Dom(boiler).text()
    # stats.json is JSON (never rendered as HTML), keys sorted, with fit and shares
    record = json.loads((root / "stats.json").read_text())
    assert record["weird"] == HOSTILE_TEXT and record["fit"]["slope"] == FIT["slope"]
    assert list(record) == sorted(record)


def test_safe_href():
    assert safe_href("https://example.org/a?b=c#d") == "https://example.org/a?b=c#d"
    assert safe_href("HTTP://EXAMPLE.ORG") == "HTTP://EXAMPLE.ORG"
    for url in HOSTILE_URLS[:5] + ["http://x.example/a\nb", "//evil.example/x", "https://", "http:///x", "ftp://x", None, 5]:
        assert safe_href(url) is None, url


def test_doc_ids_must_be_integers_they_name_files():
    with pytest.raises(TypeError):
        pair(0, doc_a="../../etc/passwd")
    with pytest.raises(TypeError):
        pair(0, doc_b=1.0)
    with pytest.raises(TypeError):
        pair(0, doc_a=True)
    p = pair(0, doc_a=-3, doc_b=7)
    assert p.key == "-3-7"


# ---------------------------------------------------------------------------- highlighting


def rendered(text: str, spans: list[tuple[int, int, int]]) -> Dom:
    body, _ = render_text(text, spans, "a", "b")
    return Dom(f'<div id="text-a">{body}</div>')


def expected_marks(text: str, spans) -> list[str]:
    n = len(text)
    return [text[s:e] for s, e in merge_spans((min(max(s, 0), n), min(max(e, 0), n)) for _, s, e in spans)]


@pytest.mark.parametrize(
    "text,spans,marks",
    [
        ("abcdefghij", [(1, 2, 5), (2, 4, 8)], ["cdefgh"]),  # overlapping
        ("abcdefghij", [(1, 2, 5), (2, 5, 8)], ["cdefgh"]),  # adjacent: one mark
        ("abcdefghij", [(1, 0, 3), (2, 7, 10)], ["abc", "hij"]),  # at start and end
        ("abcdefghij", [(1, 0, 10)], ["abcdefghij"]),  # everything
        ("abcdefghij", [(1, 3, 6), (2, 4, 5)], ["def"]),  # nested
        ("abcdefghij", [(1, 5, 5), (2, 8, 30)], ["ij"]),  # empty; past the end (clipped)
        ("naïve 日本語 😀 e\u0301 x", [(1, 2, 5), (2, 6, 9), (3, 10, 11), (4, 12, 14)], ["ïve", "日本語", "😀", "e\u0301"]),
        ("<b>&amp;</b>", [(1, 0, 3), (2, 3, 8)], ["<b>&amp;"]),
    ],
)
def test_highlight_marks(text, spans, marks):
    dom = rendered(text, spans)
    assert [m for _, m in dom.marks] == marks
    assert dom.column_text("text-a") == text  # anchors add no text; nothing lost or doubled
    ids = [a["id"] for a in dom.named("a")]
    assert ids == [f"a{n}" for n, s, e in sorted(spans, key=lambda x: (x[1], x[0])) if min(e, len(text)) > min(s, len(text))]
    for a in dom.named("a"):
        assert a["href"] == "#b" + a["id"][1:] and a["data-n"] == a["id"][1:]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\té日😀\u0301")), max_size=60),
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70)), max_size=8),
)
def test_highlight_property(text, raw):
    spans = [(n + 1, min(s, e), max(s, e)) for n, (s, e) in enumerate(raw)]
    dom = rendered(text, spans)
    assert dom.column_text("text-a") == text
    assert [m for _, m in dom.marks] == expected_marks(text, spans)


def test_merge_spans_and_copied_characters():
    assert merge_spans([(5, 9), (0, 2), (2, 4), (8, 12), (20, 20)]) == [(0, 4), (5, 12)]
    p = pair(0, passages=((0, 10, 100, 110, 8), (5, 15, 200, 210, 8), (30, 31, 105, 120, 1)))
    assert (p.copied_a, p.copied_b) == (16, 30)
    with pytest.raises(ValueError):
        pair(0, passages=((5, 4, 0, 1, 1),))
    with pytest.raises(ValueError):
        pair(0, passages=((1, 2, 3),))


def test_pair_page_passages_numbered_alike_on_both_sides(tmp_path):
    text_a = "xx ONE yy TWO zz"
    text_b = "TWO ... ONE"
    p = pair(0, text_a=text_a, text_b=text_b, passages=((10, 13, 0, 3, 3), (3, 6, 8, 11, 3)))
    root = written(tmp_path, pairs=[p]).parent
    dom = Dom((root / "pair" / f"{p.key}.html").read_text(encoding="utf-8"))
    # numbered by position in A: ONE is 1, TWO is 2, on both sides
    anchors = {a["id"]: a for a in dom.named("a") if a.get("class") == "pn"}
    assert set(anchors) == {"a1", "a2", "b1", "b2"}
    assert [m for m in dom.marks] == [("text-a", "ONE"), ("text-a", "TWO"), ("text-b", "TWO"), ("text-b", "ONE")]
    source = (root / "pair" / f"{p.key}.html").read_text(encoding="utf-8")
    assert source.index('id="b2"') < source.index('id="b1"')  # TWO comes first in B
    # the passage list links to both anchors
    hrefs = [a["href"] for a in dom.named("a")]
    for ident in ("#a1", "#a2", "#b1", "#b2"):
        assert ident in hrefs


def test_long_text_is_cut_with_a_note_and_missing_text_noted(tmp_path):
    long_a = "x" * (MAX_TEXT_CHARS + 5000) + "TAIL"
    n = len(long_a)
    p = pair(0, text_a=long_a, text_b=None, passages=((0, 5, 0, 5, 5), (n - 4, n, 10, 14, 4)), capped=True)
    root = written(tmp_path, pairs=[p]).parent
    source = (root / "pair" / f"{p.key}.html").read_text(encoding="utf-8")
    dom = Dom(source)
    assert len(dom.column_text("text-a")) == MAX_TEXT_CHARS
    assert f"first {MAX_TEXT_CHARS:,} of {n:,} characters" in source
    assert "not available" in source  # text_b is None
    assert "text-b" not in {a.get("id") for _, a in dom.tags}
    assert "(not shown)" in source  # passage 2 lies past the cut
    assert "cap" in source and "more copied passages may exist" in source
    assert dom.marks == [("text-a", "xxxxx")]


# ---------------------------------------------------------------------------- paging and files


def test_paging_and_detail_pages(tmp_path):
    pairs = [pair(i, containment_a=1 - i / 200) for i in range(120)]
    index = written(tmp_path, pairs=pairs, page_size=50, detail_pages=30)
    root = index.parent
    names = sorted(p.name for p in root.iterdir())
    assert names == [
        "boilerplate.html",
        "clusters.html",
        "cross-host.html",
        "failures.html",
        "figures.html",
        "index.html",
        "pair",
        "pairs-002.html",
        "pairs-003.html",
        "rank_frequency.png",
        "stats.json",
    ]
    assert sorted(p.name for p in (root / "pair").iterdir()) == sorted(f"{p.key}.html" for p in pairs[:30])
    # pages hold 50, 50, 20 rows, ranks continue across pages
    for name, first, count in (("index.html", 1, 50), ("pairs-002.html", 51, 50), ("pairs-003.html", 101, 20)):
        dom = Dom((root / name).read_text(encoding="utf-8"))
        rows = [t for t in dom.named("tr")]
        assert len(rows) == count + 1, name  # + header row
        assert f"Pairs {first}–{first + count - 1} of 120" in dom.text()
    # every relative link in every page resolves to a written file or an anchor in that page
    for path in html_files(root):
        source = path.read_text(encoding="utf-8")
        dom = Dom(source)
        ids = {a.get("id") for _, a in dom.tags}
        for _tag, attrs in dom.tags:
            for key in ("href", "src"):
                target = attrs.get(key)
                if not target or target.startswith(("http://", "https://")):
                    continue
                if target.startswith("#"):
                    assert target[1:] in ids, (path, target)
                else:
                    assert (path.parent / target).resolve().exists(), (path, target)
    index_dom = Dom(index.read_text(encoding="utf-8"))
    detail_links = [a["href"] for a in index_dom.named("a") if a["href"].startswith("pair/")]
    assert len(detail_links) == 30


def test_page_counts_at_the_edges(tmp_path):
    root = written(tmp_path, pairs=[pair(i) for i in range(50)], page_size=50).parent
    assert not list(root.glob("pairs-*.html"))
    root = written(tmp_path, pairs=[pair(i) for i in range(51)], page_size=50, detail_pages=0).parent
    assert [p.name for p in root.glob("pairs-*.html")] == ["pairs-002.html"]
    assert not list((root / "pair").iterdir())


def test_missing_stats_keys_and_empty_inputs(tmp_path):
    fit = powerlaw.fit_power_law([])
    index = write_report(tmp_path / "r", stats={}, pairs=[], boilerplate=[], rank_freq=[], fit=fit)
    source = index.read_text(encoding="utf-8")
    assert "No pairs" in source
    check_safe_markup(index)
    boiler = (index.parent / "boilerplate.html").read_text(encoding="utf-8")
    assert "no fit" in boiler and (index.parent / "rank_frequency.png").stat().st_size > 1000
    record = json.loads((index.parent / "stats.json").read_text())
    assert record["shares"]["hashes"] == 0 and record["fit"]["slope"] is None
    # partial stats, fit None, odd values
    odd = {
        "documents": 5,
        "parsed": 4,
        "k": 50,
        "elapsed": float("nan"),
        "inputs": ["a.warc", "b.warc"],
        "records_seen": 9,
        "skipped": 1,
        "failed": 0,
        "flagged": 1,
    }
    index = write_report(tmp_path / "r", stats=odd, pairs=[pair(0)], boilerplate=[], rank_freq=RUNS, fit=None)
    text = Dom(index.read_text(encoding="utf-8")).text()
    assert "does not add up" in text  # 4 + 1 + 0 + 1 != 9
    assert "input files" in text and "2" in text
    assert "t = w + k" not in text  # w missing: t is not made up
    assert json.loads((index.parent / "stats.json").read_text())["elapsed"] is None


def test_summary_shows_known_figures(tmp_path):
    index = written(tmp_path)
    text = Dom(index.read_text(encoding="utf-8")).text()
    for fragment in (
        "1,000 = 900 parsed + 60 skipped + 10 failed + 30 flagged",
        "149",
        "0.02000",
        "0.01980",
        f"slope {FIT['slope']:.3f}",
        "1 doc",
        "boilerplate hashes",
    ):
        assert fragment in text, fragment
    assert "does not add up" not in text


def test_existing_report_replaced_foreign_folder_refused(tmp_path):
    written(tmp_path, pairs=[pair(i) for i in range(120)])
    root = written(tmp_path, pairs=[pair(0)]).parent
    assert not (root / "pairs-002.html").exists() and len(list((root / "pair").iterdir())) == 1
    assert not list(tmp_path.glob(".report.*"))
    (root / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        written(tmp_path)
    assert (root / "notes.txt").exists()


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        written(tmp_path, page_size=0)
    with pytest.raises(TypeError):
        written(tmp_path, pairs=[{"doc_a": 1}])
    with pytest.raises(ValueError):
        written(tmp_path, rank_freq=[(1, 5, 3, 2)])


def test_from_rows():
    row = {
        "doc_a": 1,
        "doc_b": 2,
        "url_a": "http://a",
        "url_b": None,
        "shared": 3,
        "fp_a": 4,
        "fp_b": 5,
        "resemblance": 0.5,
        "containment_a": 0.75,
        "containment_b": 0.6,
    }
    passages = [
        {"doc_a": 1, "doc_b": 2, "start_a": 0, "end_a": 4, "start_b": 2, "end_b": 6, "length": 4, "capped": False},
        {"doc_a": 1, "doc_b": 2, "start_a": 9, "end_a": 12, "start_b": 7, "end_b": 8, "length": 1, "capped": True},
    ]
    p = PairView.from_row(row, passages, text_a="abcdefghijklmn")
    assert p.passages == ((0, 4, 2, 6, 4), (9, 12, 7, 8, 1)) and p.capped and p.text_b is None
    h = HashView.from_row({"hash": 7, "docs": 3, "occurrences": 4, "hosts": 2, "doc_id": 1, "snippet": "x"})
    assert (h.hash, h.docs, h.hosts, h.snippet) == (7, 3, 2, "x")


def test_odd_python_values_are_written(tmp_path):
    """A lone surrogate (possible from Python callers, never from Arrow) is written as '?', one
    character for one; numpy scalars and paths in stats become plain JSON."""
    np = pytest.importorskip("numpy")
    p = pair(0, text_a="ab\ud800cd copied", text_b="copied", passages=((6, 12, 0, 6, 6),))
    stats = {"documents": np.int64(5), "density": np.float32(0.5), "out": Path("/x/y"), "ids": {3, 1}}
    root = written(tmp_path, stats=stats, pairs=[p]).parent
    dom = Dom((root / "pair" / f"{p.key}.html").read_text(encoding="utf-8"))
    assert dom.column_text("text-a") == "ab?cd copied" and dom.marks[0] == ("text-a", "copied")
    record = json.loads((root / "stats.json").read_text())
    assert (record["documents"], record["density"], record["out"], record["ids"]) == (5, 0.5, "/x/y", [1, 3])


def test_the_figures_page_lists_what_the_stage_drew_and_why_one_is_missing(tmp_path):
    from webwinnow.htmlreport import FigureEntry

    def draw(folder):
        (folder / "max_df.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        return [
            FigureEntry("max_df.png", "The cap", "pairs <b>per</b> cap", "hash_frequencies.ipynb"),
            FigureEntry("gaps.png", "Gaps", "gaps", error="ValueError: no <documents>"),
        ]

    index = written(tmp_path, figures=draw)
    root = index.parent
    page = (root / "figures.html").read_text(encoding="utf-8")
    check_safe_markup(root / "figures.html")
    assert 'src="figures/max_df.png"' in page and 'src="figures/gaps.png"' not in page
    assert "Not drawn: ValueError: no &lt;documents&gt;" in page and "pairs &lt;b&gt;per&lt;/b&gt; cap" in page
    assert (root / "figures" / "max_df.png").exists()
    written(tmp_path)  # a report without figures replaces it, figures/ included: all of it is the report's
    assert not (root / "figures").exists()
    assert "No figures were drawn" in (root / "figures.html").read_text(encoding="utf-8")


def test_listings_say_how_many_pairs_there_are_and_rank_by_content(tmp_path):
    """The report lists the table's top pairs and says of how many; per pair the URLs, hosts,
    fetch dates, the source side, content characters and template share."""
    pairs = [
        pair(
            i,
            content_a=1000 - i,
            content_b=990 - i,
            norm_copied_a=1200,
            norm_copied_b=1200,
            share_a=0.5,
            share_b=0.25,
            fetch_a="2003-04-01T00:00:00Z",
            fetch_b="2003-05-01T00:00:00Z",
            source="a",
            source_basis="last_modified",
            url_b=f"https://a.example/other/{i}" if i % 3 else f"http://b.example/{i}",
        )
        for i in range(120)
    ]
    index = written(
        tmp_path, stats=STATS, pairs=pairs, total_pairs=1600, total_cross_host=900, cross_host=[p for p in pairs if p.cross_host]
    )
    root = index.parent
    text = Dom(index.read_text(encoding="utf-8")).text()
    assert "Pairs 1–50 of the top 120 (1,600 pairs in all)" in text
    assert "a.example · 2003-04-01" in text and "b.example · 2003-05-01" in text and "source" in text
    assert "1,000" in text and "50% / 25% of the pages" in text and "18%" in text  # 1 − 990/1200 template
    cross = Dom((root / "cross-host.html").read_text(encoding="utf-8")).text()
    assert "of the top 40 (900 pairs in all)" in cross
    assert "https://a.example/other/1" not in cross and "http://b.example/3" in cross  # same-host pairs not listed
    page = Dom((root / "pair" / f"{pairs[0].key}.html").read_text(encoding="utf-8")).text()
    assert "Pair #1: https://a.example/0 ↔ http://b.example/0" in page
    assert "1,000 normalized characters outside template in A" in page


def test_a_pane_opens_at_its_first_copied_passage(tmp_path):
    lead = "navigation line\n" * 200
    p = pair(
        0,
        text_a=lead + "the copied text here",
        text_b="short intro\nthe copied text here",
        passages=((len(lead), len(lead) + 20, 12, 32, 17),),
    )
    index = written(tmp_path, stats=STATS, pairs=[p])
    source = (index.parent / "pair" / f"{p.key}.html").read_text(encoding="utf-8")
    dom = Dom(source)
    assert dom.column_text("text-a") == p.text_a and dom.column_text("text-b") == p.text_b  # nothing lost
    assert source.count('<details class="lead">') == 1  # only A's long lead is folded
    folded = source.split('<details class="lead">')[1].split("</details>")[0]
    assert "the copied text" not in folded and len(lead) - 2 * 300 <= folded.count("navigation line") * 16


def test_the_summary_lays_stage_statistics_out_as_a_table(tmp_path):
    stats = dict(STATS, stages={"passages": {"pairs": 48, "template_pairs": 75}, "dedup": {"kept": 300}})
    index = written(tmp_path, stats=stats, pairs=[])
    source = index.read_text(encoding="utf-8")
    assert '<table class="stages">' in source and "<code>{" not in source
    assert '<td>passages</td><td class="what">template_pairs</td><td class="num">75</td>' in source


def test_the_headline_says_the_run_in_words():
    from webwinnow.htmlreport.summary import headline

    stats = {
        "unit": "word",
        "pairs": 3,
        "passages": 4,
        "content_chars": 120,
        "template_pairs": 2,
        "max_df": 10,
        "clusters": 1,
        "clustered_documents": 2,
        "fit": {"r2": 0.95},
    }
    runs = [(1, 1, 50, 1), (2, 3, 10, 2), (4, 9, 1, 100)]  # one hash in 50 pages, two in 10, 100 in one
    lines = headline(stats, runs, pair(0, content_a=70, content_b=60, unit="word"))
    assert lines[0] == (
        "3 page pairs share copied content (4 passages, 120 words outside site template); the largest "
        "copy, 60 words, is between https://a.example/0 and http://b.example/0."
    )
    assert lines[1].startswith("Site template (fingerprints in more than max_df = 10 pages) is 29.4% of what the pages hold")
    assert lines[2] == "1 near-duplicate clusters hold 2 pages." and len(lines) == 3  # a good fit says nothing
    assert "poor (R² 0.50)" in headline({**stats, "fit": {"r2": 0.5}}, runs, None)[-1]
    assert headline({"pairs": 0}, [], None) == ["No two pages share copied content outside site template."]


def test_every_page_reaches_every_page_and_dedup_and_index_check_only_when_run(tmp_path):
    bare = written(tmp_path / "bare").parent
    assert not (bare / "dedup.html").exists() and not (bare / "contamination.html").exists()
    dedup = {
        "kept": 1,
        "documents": 2,
        "near_duplicates": 1,
        "emptied": 0,
        "removed_chars": 50,
        "original_chars": 100,
        "copied_chars_removed": 50,
        "trimmed_documents": 1,
        "template_chars_removed": 0,
        "min_passage": 149,
    }
    deduped = written(tmp_path / "deduped", run=RunPages(dedup=dedup)).parent
    assert (deduped / "dedup.html").exists() and not (deduped / "contamination.html").exists()
    for root, optional in ((bare, set()), (deduped, {"dedup.html"})):
        for page in html_files(root):
            prefix = "../" if page.parent.name == "pair" else ""
            navs = re.findall(r'<nav class="top">(.*?)</nav>', page.read_text(encoding="utf-8"))
            assert len(navs) == 1, page
            linked = {h.removeprefix(prefix) for h in re.findall(r'href="([^"]+)"', navs[0])}
            wanted = {"index.html", "cross-host.html", "clusters.html", "failures.html", "boilerplate.html", "figures.html"}
            assert wanted | optional <= linked and not ({"dedup.html", "contamination.html"} - optional) & linked, page


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab &<>\"'\x00\x07\n\t\u202e\u200f\ue000é🙂")), max_size=12), max_size=8))
def test_texts_escaped_together_are_each_escaped_alone(texts):
    """esc_all escapes a page's pieces of text in one pass: the same strings as one esc_text
    each, whatever they hold (the character it joins them with too); as element content each
    reads back as the text shown visibly, with no markup in it."""
    escaped = esc_all(texts)
    assert escaped == [esc_text(t) for t in texts]
    for text, got in zip(texts, escaped, strict=True):
        assert "<" not in got and ">" not in got and html.unescape(got) == visible(text)
        assert html.unescape(esc(text)) == visible(text)  # esc: the same text, quotes escaped too


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab &<>\n\u202e\x00é🙂")), max_size=40),
    st.lists(st.tuples(st.integers(-3, 45), st.integers(-3, 45)), max_size=6),
)
def test_a_page_text_known_to_show_as_is_renders_as_one_searched_piece_by_piece(text, spans):
    """The side-by-side pages ask once per page text whether it holds an invisible character
    (page_as_is) and escape its pieces without searching them again: the same HTML as searching
    every piece, for texts with and without such characters, wherever the passages cut them."""
    from webwinnow.htmlreport.highlight import forget_pages, page_as_is

    numbered = [(n + 1, s, e) for n, (s, e) in enumerate(spans)]
    as_is = page_as_is(text)
    assert as_is == (visible(text) == text)
    assert render_text(text, numbered, "a", "b", as_is) == render_text(text, numbered, "a", "b")
    assert esc_all(text.split(" "), as_is) == esc_all(text.split(" "))
    forget_pages()
    assert page_as_is.cache_info().currsize == 0


def test_log_axes_label_their_ticks_in_plain_text_without_mathtext(tmp_path, monkeypatch):
    """The rank-frequency plot's log ticks read "10³", never mathtext, whose parser costs
    milliseconds a label: drawing it parses no mathtext at all."""
    import matplotlib.mathtext

    from webwinnow.htmlreport.plot import laid_out, plain_label, write_rank_frequency_png

    assert plain_label(r"$\mathdefault{10^{3}}$") == "10³"
    assert plain_label(r"$\mathdefault{2\times10^{-2}}$") == "2×10⁻²"
    assert plain_label(r"$\mathdefault{0}$") == "0" and plain_label("") == ""
    parsed = []
    real = matplotlib.mathtext.MathTextParser.parse
    monkeypatch.setattr(
        matplotlib.mathtext.MathTextParser, "parse", lambda self, s, *a, **k: parsed.append(s) or real(self, s, *a, **k)
    )
    write_rank_frequency_png(tmp_path / "rf.png", RUNS, FIT, 3)
    assert (tmp_path / "rf.png").read_bytes().startswith(b"\x89PNG") and parsed == []

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([1, 10, 1000], [0.01, 1, 5])
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    laid_out(fig)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
    assert "10³" in labels and "0" in labels and not any("$" in t for t in labels) and parsed == []


def test_a_laid_out_figure_is_drawn_once_when_saved(monkeypatch):
    """savefig draws a figure that has a layout engine once more before it renders it; the one
    tight_layout leaves behind is gone, and the PNG is the same bytes as with it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from webwinnow.explore.figures import png_bytes
    from webwinnow.htmlreport.plot import laid_out

    def figure():
        fig = Figure(figsize=(4, 3))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot([1, 10, 1000], [3, 1, 2], label="copies")
        ax.set_xscale("log")
        ax.set_xlabel("rank")
        ax.legend()
        return fig

    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: draws.append(self) or real(self, renderer))
    fig = figure()
    laid_out(fig)
    assert fig.get_layout_engine() is None
    once = png_bytes(fig)
    assert len(draws) == 1
    kept = figure()
    laid_out(kept)
    kept.set_layout_engine("tight")
    kept.set_layout_engine("none")  # the placeholder tight_layout used to leave
    draws.clear()
    assert png_bytes(kept) == once and len(draws) == 2


def test_the_boilerplate_pages_hashes_can_come_when_the_page_is_written(tmp_path):
    """`boilerplate` as a callable (the report stage hands over what its figure task read, else
    reads them itself): asked once, when boilerplate.html is written, after the pair pages; the
    same report as with the list; what it gives is checked as a list is."""
    hashes = [HashView(7, 40, 52, 3, HOSTILE_TEXT), HashView(-2, 30, 30, None, None)]
    listed = written(tmp_path / "listed", boilerplate=hashes).parent
    asked = []

    def later():
        asked.append(sorted(p.name for p in (tmp_path / "later" / ".report.incomplete").glob("*.html")))
        return iter(hashes)

    given = written(tmp_path / "later", boilerplate=later).parent
    assert len(asked) == 1 and "index.html" in asked[0] and "boilerplate.html" not in asked[0]
    assert {p.relative_to(listed): p.read_bytes() for p in listed.rglob("*") if p.is_file()} == {
        p.relative_to(given): p.read_bytes() for p in given.rglob("*") if p.is_file()
    }
    assert HOSTILE_TEXT not in (given / "boilerplate.html").read_text()  # escaped, as listed
    with pytest.raises(TypeError, match="boilerplate must be HashView objects"):
        written(tmp_path / "bad", boilerplate=lambda: [("not", "a", "view")])
