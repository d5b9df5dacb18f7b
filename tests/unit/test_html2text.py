"""HTML to text: block separation, dropped elements, whitespace, guards, and real crawled pages."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from webwinnow.crawl.httpbody import body_to_text, charset_from_content_type, decode_body
from webwinnow.text.html2text import _TAG_CLASSES, _TAG_KEYS, DEFAULT_MAX_NESTING, HtmlRejected, _prepare, html_to_text

from paths import SHARED

REAL_WARCS = SHARED / "data" / "warc" / "real"


def body(inner: str) -> str:
    return f"<!DOCTYPE html><html><head><title>Title</title></head><body>{inner}</body></html>"


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("Hel<b>lo</b> world", "Hello world"),
        ("<span>a</span><a href=x>b</a><em>c</em><code>d</code><strong>e</strong><i>f</i>", "abcdef"),
        ("<p>one</p><p>two</p>", "one\ntwo"),
        ("<div>a<div>b</div>c</div>", "a\nb\nc"),
        ("x<br>y<br/>z", "x\ny\nz"),
        ("<h1>T</h1><ul><li>one<li>two</ul><ol><li>three</li></ol>", "T\none\ntwo\nthree"),
        ("<dl><dt>term<dd>def</dl>", "term\ndef"),
        ("<table><tr><td>a</td><td>b</td></tr><tr><th>c<td>d</table>after", "a\nb\nc\nd\nafter"),
        ("<table><caption>Cap</caption><tr><td>x</td></tr></table>", "Cap\nx"),
        ("<section><article><header>h</header><main>m</main><footer>f</footer></article></section>", "h\nm\nf"),
        ("<blockquote>q</blockquote><pre>p</pre><figure><figcaption>c</figcaption></figure><hr>e", "q\np\nc\ne"),
        ("<details><summary>s</summary>d</details><address>a</address>", "s\nd\na"),
        ("<form><fieldset><legend>l</legend><select><option>o1<option>o2</select></fieldset></form>", "l\no1\no2"),
        ("<nav>n</nav><aside>a</aside>", "n\na"),
    ],
)
def test_blocks_separate_and_inline_joins(html: str, text: str) -> None:
    assert html_to_text(body(html)) == text


@pytest.mark.parametrize(
    "dropped",
    [
        "<script>var x = '<p>no</p>';</script>",
        "<script><!-- document.write('<script>x</script>'); --></script>",
        "<SCRIPT type=text/javascript>if (a<b && c>d) {}</SCRIPT >",
        "<style>p { color: red }</style>",
        "<noscript><p>enable js</p></noscript>",
        "<template><p>tpl</p></template>",
        "<svg><text>svg</text><path d='M0'/></svg>",
        "<math><mi>x</mi></math>",
        "<iframe>fallback</iframe>",
        "<object><param name=a>obj</object>",
        "<title>late title</title>",
        "<noembed>ne</noembed><noframes>nf</noframes>",
        "<!-- <p>comment</p> -->",
    ],
)
def test_dropped_elements(dropped: str) -> None:
    assert html_to_text(body(f"<p>before</p>{dropped}<p>after</p>")) == "before\nafter"


def test_head_is_not_text() -> None:
    html = "<html><head><title>T</title><meta charset=utf-8><style>x</style></head><body>b</body></html>"
    assert html_to_text(html) == "b"


def test_entities_are_decoded() -> None:
    assert html_to_text(body("A &amp; B &lt;c&gt; &eacute;&#233;&#xE9; &quot;q&quot;&nbsp;z")) == 'A & B <c> ééé "q" z'


def test_whitespace_rules() -> None:
    html = body("  lots \t of\n\n\n   space  <p>  line  </p>\n\n<p></p><div> \u00a0\u3000 </div> x\u2003y ")
    assert html_to_text(html) == "lots of space\nline\nx y"


def test_pre_collapses_too() -> None:
    assert html_to_text(body("<pre>  a   b\n\n\n  c</pre>")) == "a b\nc"


def test_attributes_with_angle_brackets() -> None:
    html = body('<div title="a>b" onclick="if(x<y)">attr</div><td title="<b>">cell</td>')
    assert html_to_text(html) == "attr\ncell"


def test_lexbor_gets_tags_without_attributes() -> None:
    # Attributes are half a page's bytes and no text: the pre-pass drops them, keeping the
    # self-closing slash (it matters in SVG) and reading quoted values whole ("a>b" ends no tag).
    html = '<div class="a>b" id=x>t<br/><img src="p.png" alt=\'i\' /><svg viewBox="0 0"><path d="M0"/></svg></div  x="y">'
    out, length, _ = _prepare(
        np.frombuffer(html.encode(), np.uint8),
        np.frombuffer(html.encode(), np.uint64, count=len(html) // 8),
        _TAG_KEYS,
        _TAG_CLASSES,
        100,
        True,
    )
    assert out[:length].tobytes() == b"\f<div>t\f<br/><img/><svg><path/></svg>\f</div>"


@pytest.mark.parametrize(
    ("html", "text"),
    [
        # a hidden input leaves a frameset possible: the frameset replaces the body
        ('<input type="hidden"><frameset><frame></frameset>x', ""),
        # <font color> leaves SVG, so its text is shown
        ('<p><svg><font color="red">shown</font></svg>', "shown"),
        # an HTML annotation holds its <div> inside MathML, which is not shown
        ('<math><annotation-xml encoding="text/html"><div>hidden</div></annotation-xml></math>', ""),
    ],
)
def test_attributes_the_parser_reads_reach_it(html: str, text: str) -> None:
    assert html_to_text(html) == text


def _lexbor_input(html: str, keep_inline: bool = False) -> bytes:
    data = html.encode()
    out, length, _ = _prepare(
        np.frombuffer(data, np.uint8),
        np.frombuffer(data, np.uint64, count=len(data) // 8),
        _TAG_KEYS,
        _TAG_CLASSES,
        100,
        keep_inline,
    )
    return out[:length].tobytes()


def test_phrasing_tags_are_left_out_of_the_parse() -> None:
    # span, a, code, em...: their text comes in the same order without them, and Lexbor builds
    # no element for them; the depth estimate still counts them
    assert _lexbor_input('<body><p>x<span class="k">y</span><a href="/">z</a><code>w</code></p>') == b"<body>\fxyzw\f"
    assert _lexbor_input("<body><code>w</code>", keep_inline=True) == b"<body><code>w</code>"
    # a search icon in every page's header: SVG's elements end as they open, nothing to prepare again
    assert _lexbor_input('<body><div><em>a</em><svg><path d="M0"></path></svg><span>b</span></div>') == (
        b"<body>\fa<svg><path></path></svg>b\f"
    )
    # around SVG (a search icon in a page's header), not inside it: there an <a> is SVG's own
    assert _lexbor_input('<body><em>a</em><svg><a><path d="M0"/></a></svg><span>b</span>') == b"<body>a<svg><a><path/></a></svg>b"
    with pytest.raises(HtmlRejected):
        html_to_text("<body>" + "<span>" * 30 + "x", max_nesting=20)


def test_block_containers_are_left_out_but_their_line_breaks() -> None:
    assert _lexbor_input("<body><div><p>a</p><ul><li>b</li></ul></div>") == b"<body>\fa\fb\f"
    assert html_to_text("<body><div><p>a</p><ul><li>b</li></ul></div>") == "a\nb"
    with pytest.raises(HtmlRejected):
        html_to_text("<body>" + "<div>" * 30 + "x", max_nesting=20)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        # before <body> a phrasing tag starts the body: the <noscript> after it is the body's
        ("<i><noscript><p>t</p></noscript>", ""),
        ("<template><body></template><i><noscript><p>t</p></noscript>", ""),
        # on a page with SVG, </u> and </span> end the <svg> their start tags are outside of
        ("<body><u>a<svg></u>b</svg>", "ab"),
        ("<body><span>a<svg></span>b</svg>", "ab"),
        # a container's end tag, or a block start tag that closes a <p>, ends a <noscript> or an
        # <svg> inside the container; and a container stops an end tag's search for its element
        ("<body><div><noscript></div>x</noscript>", "x"),
        ("<body><p>a<noscript><div>b</div></noscript>c", "ab\nc"),
        ("<p>a<body><noscript><div>b</noscript>c", "abc"),
        ("<body><div><svg></div>x</svg>", "x"),
        # <nobr> ends the <math>, so the <noscript> is HTML's, though </math> comes after it
        ("<p>a<body><math><nobr><noscript></math><dt>b", "ab"),
        ("<body><g><h1><mi><svg></g>x</svg>", ""),
        # the text on either side must not join into a tag or a character reference
        ("<body>x<<a>b</a>", "x<b"),
        ("<body>&amp<b>;</b>", "&;"),
        ("<body>&#6<em>5;</em>", "\x065;"),
    ],
)
def test_phrasing_tags_stay_where_leaving_them_out_changes_text(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_page_ending_inside_a_tag() -> None:
    # the tokenizer drops a tag cut off by the end of the page, and everything after its name
    assert html_to_text('a<p>b<div title="x <p>y') == "a\nb"
    assert html_to_text("a<p>b<div") == "a\nb"


def test_nul_in_a_tag_name_makes_another_tag() -> None:
    # the tokenizer reads U+FFFD for it: "script\0" is not a script, and its text is shown
    assert html_to_text("<p>a<script\x00>b</script\x00>c</p>") == "abc"


def test_textarea_text_is_kept() -> None:
    assert html_to_text(body("<textarea>typed <b>x</b></textarea>")) == "typed <b>x</b>"


def test_plaintext_swallows_the_rest() -> None:
    assert html_to_text(body("x<plaintext><div>raw</div>")) == "x\n<div>raw</div></body></html>"


def test_unclosed_script_hides_the_rest_as_browsers_do() -> None:
    assert html_to_text("a<script>never closed <p>zzz") == "a"


def test_str_and_bytes_agree() -> None:
    html = body("<p>caf\u00e9 \u65e5\u672c</p>")
    assert html_to_text(html) == html_to_text(html.encode()) == "caf\u00e9 \u65e5\u672c"


@pytest.mark.parametrize("html", ["", "   ", "<html></html>", "<frameset><frame src=a></frameset>", "<!-- x -->"])
def test_pages_without_text(html: str) -> None:
    assert html_to_text(html) == ""


@pytest.mark.parametrize("offset", range(17))
def test_tags_at_every_alignment(offset: int) -> None:
    # The pre-pass skips text a machine word at a time; a tag may start at any byte of a word.
    html = "x" * offset + "<p>a</p>" + "y" * (offset + 20) + "<div>b<br>c</div>" + "z" * offset
    assert html_to_text(html) == "\n".join(filter(None, ["x" * offset, "a", "y" * (offset + 20), "b", "c", "z" * offset]))


def test_text_without_markup() -> None:
    assert html_to_text("just  text") == "just text"


# --------------------------------------------------------------------------- guards


def test_too_large() -> None:
    with pytest.raises(HtmlRejected) as caught:
        html_to_text(body("x" * 1000), max_html_bytes=500)
    assert caught.value.reason == "html_too_large"
    assert isinstance(caught.value, ValueError) and "max_html_bytes" in str(caught.value)


@pytest.mark.parametrize(
    "html",
    [
        "<div>" * 200_000 + "deep" + "</div>" * 200_000,
        "<b><i>" * 300_000 + "unclosed",
        "<table><tr><td>" * 50_000 + "cell" + "</td></tr></table>" * 50_000,
        "<div></span>" * 10_000,
    ],
    ids=["div-200k", "unclosed-b-i", "table-50k", "stray-end-tags"],
)
def test_deep_nesting_is_rejected(html: str) -> None:
    with pytest.raises(HtmlRejected) as caught:
        html_to_text(body(html))
    assert caught.value.reason == "html_too_deep"
    assert "max_nesting" in str(caught.value)


def test_nesting_below_the_limit_parses() -> None:
    depth = DEFAULT_MAX_NESTING - 10
    assert html_to_text(body("<div>" * depth + "deep" + "</div>" * depth)) == "deep"


def test_limit_can_be_raised() -> None:
    assert html_to_text(body("<div>" * 5000 + "deep" + "</div>" * 5000), max_nesting=10_000) == "deep"


@pytest.mark.parametrize(
    "html",
    [
        "<p>para" * 10_000,
        "<ul>" + "<li>item" * 10_000 + "</ul>",
        "<table>" + "<tr><td>a<td>b" * 10_000 + "</table>",
        "x<br><img src=a><input><hr><meta><link><wbr>" * 5_000,
        "<svg>" + "<path d='M0'/><circle r=1/>" * 5_000 + "</svg>",
        "<script>" + "if (a<b) c<d;" * 5_000 + "</script><style>" + "a<b{}" * 5_000 + "</style>",
        "<!--" + "<div>" * 5_000 + "-->",
        "<div>x</div>" * 10_000,
        "<span>x</span>" * 10_000,
    ],
    ids=[
        "unclosed-p",
        "unclosed-li",
        "unclosed-td",
        "void",
        "svg-self-closing",
        "script-style",
        "comment",
        "div-siblings",
        "span-siblings",
    ],
)
def test_wide_pages_are_not_deep(html: str) -> None:
    html_to_text(body(html))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<",
                ">",
                "/",
                "</",
                "<!--",
                "-->",
                "<!",
                "<?",
                "=",
                '"',
                "'",
                " ",
                "\n",
                "x",
                "\u00e9",
                "\u3000",
                "\u00a0",
                "div",
                "p",
                "td",
                "table",
                "script",
                "style",
                "title",
                "textarea",
                "plaintext",
                "svg",
                "noscript",
                "<script>",
                "</script>",
                "<td>",
                "</table>",
                "<br>",
                "&amp;",
                "\x00",
            ]
        ),
        max_size=60,
    ).map("".join)
)
def test_any_markup_gives_text_or_a_reason(html: str) -> None:
    try:
        text = html_to_text(html)
    except HtmlRejected:
        return
    assert text == text.strip() and "\n\n" not in text and "  " not in text


_PIECES = [
    "<", ">", "/", "/>", "</", "=", '"', "'", " ", "\n", "x", "y", "\u00e9", "\x00", "div", "p", "b", "td", "table",
    "tr", "pre", "input", "font", "svg", "math", "annotation-xml", "script", "textarea", "title", "<!--", "-->",
    "<div", "<p", "<b", "<a", "<td", "<table", "<svg", "<math", "<font", "<input", "<pre", "<textarea", "<script",
    "<annotation-xml", "</div", "</b", "</p", "</td", "</table", "</svg", "</script", "</textarea", " class=",
    ' title="', "'>", '">', " type=hidden", " color=red", ' encoding="text/html"', "<frameset>", "<br/>", "<br>",
    "<span", "</span", "<em", "</em", "<code", "</code", "<i>", "</i>", "<u>", "</u>", "<a>", "</a>", "</b>", "<small>",
    "<tr>", "<td>", "<li>", "<select>", "<option>", "<caption>", "<colgroup>", "<nobr>", "<head>", "</head>",
    "<noscript>", "</noscript>", "<template>", "</template>", "<mtext>", "</math>", "<button>", "<object>", "<body>",
    "</body>", "&amp", "&", "&#", "#", "1;", ";", "<svg>", "</svg>", "<path/>", "<g>", "</g>", "<div>", "</div>", "<p>", "</p>", "<li>", "</li>",
    "<dl>", "<dd>", "<h1>", "</h1>", "<section>", "<blockquote>", "<mi>",
]  # fmt: skip


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(
    st.sampled_from(["", "<body>", "<template><body></template>"]), st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
)
def test_markup_gives_lexbors_text_of_the_untouched_page(start: str, markup: str) -> None:
    # Attributes dropped, phrasing tags left out, raw text cut, line breaks added: with
    # whitespace removed, the text is what Lexbor gives for the page as it came.
    html = start + markup
    try:
        text = html_to_text(html)
    except HtmlRejected:
        return
    tree = LexborHTMLParser(html)
    tree.strip_tags(_DROPPED_BY_HTML_TO_TEXT)
    reference = tree.body.text() if tree.body else ""
    assert _WHITESPACE.sub("", text) == _WHITESPACE.sub("", reference)


# --------------------------------------------------------------------------- real pages


def _real_html_pages():
    """(name, html text) for each HTML response in the shared real WARC and ARC files."""
    from warcio.archiveiterator import ArchiveIterator

    for path in sorted(REAL_WARCS.iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, arc2warc=True):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                headers = record.http_headers
                content_type = headers.get_header("Content-Type") or ""
                if "html" not in content_type.lower():
                    continue
                coding = (headers.get_header("Content-Encoding") or "").lower()
                if "br" in coding:
                    # warcio expects the old brotlipy API and fails on brotli >= 1.2 (no unused_data).
                    result = decode_body(record.raw_stream.read(), headers.headers)
                    assert result.body is not None, (path.name, result.reason)
                    payload = result.body
                else:
                    payload = record.content_stream().read()
                yield (
                    f"{path.name} {headers.get_statuscode()}",
                    body_to_text(payload, charset_from_content_type(content_type)).text,
                )


_DROPPED_BY_HTML_TO_TEXT = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "title",
    "noembed",
    "noframes",
]
_WHITESPACE = re.compile(r"\s+")


def test_real_pages() -> None:
    if not REAL_WARCS.is_dir():
        pytest.skip(f"{REAL_WARCS} is absent: lay out the shared/ folder beside the repo to run this")
    pages = nonempty = 0
    for name, html in _real_html_pages():
        pages += 1
        try:
            text = html_to_text(html)
        except HtmlRejected:
            continue
        nonempty += bool(text)
        # The pre-pass may only add line breaks: with whitespace removed, the text is exactly what
        # Lexbor gives for the untouched page with the same elements removed.
        tree = LexborHTMLParser(html)
        tree.strip_tags(_DROPPED_BY_HTML_TO_TEXT)
        reference = tree.body.text() if tree.body else ""
        assert _WHITESPACE.sub("", text) == _WHITESPACE.sub("", reference), name
    assert pages > 500
    assert nonempty > 0.9 * pages, f"only {nonempty} of {pages} pages gave text"
