"""Crawled text shown to a person never reverses or hides what is around it."""

from __future__ import annotations

import io

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from webwinnow.app.console import Console
from webwinnow.explore.copies import escaped_html, side_by_side_html
from webwinnow.text.visible import INVISIBLE, href_safe, shows_as_is, visible


def test_bidi_and_control_characters_are_written_as_code_points():
    assert visible("a\u202eb\x00c\u2066d") == "a⟨U+202E⟩b⟨U+0000⟩c⟨U+2066⟩d"
    assert visible("tab\tline\nform\fcr\r") == "tab\tline\nform\fcr\r"  # layout stays layout
    assert visible("日本語 naïve — ok") == "日本語 naïve — ok"
    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, 0x7F, 0x85, 0x9F):
        assert INVISIBLE.fullmatch(chr(code)), hex(code)
    assert href_safe("https://x.example/\u202eexe") == "https://x.example/%E2%80%AEexe"


def _by_the_expression(text: str) -> str:
    return INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text())
def test_ascii_text_checked_by_its_bytes_is_shown_as_the_expression_shows_it(text):
    """visible's ASCII path (its shown bytes deleted, nothing left: nothing to write) gives what
    the regular expression gives, for every ASCII character and any text."""
    assert visible(text) == _by_the_expression(text)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(max_codepoint=0x7F))
    | st.text()
    | st.text(alphabet=st.sampled_from("ab é—\n\t\u202e\u200e\x85\x00\u061c\u2066\x7f"))
)
def test_a_text_shows_as_is_exactly_when_the_expression_leaves_it_as_it_is(text):
    assert shows_as_is(text) == (_by_the_expression(text) == text)


def test_every_ascii_control_is_written_whichever_path_finds_it():
    for code in range(128):
        text = f"ab{chr(code)}cd"
        assert visible(text) == _by_the_expression(text), code
    assert visible("plain ascii\ttext\n") == "plain ascii\ttext\n"


def test_the_terminal_and_the_notebooks_show_them_visibly():
    console = Console()
    console._err = io.StringIO()  # type: ignore[attr-defined]
    console.error("input /crawl/\u202etxt.warc is unreadable")
    assert console._err.getvalue() == "webwinnow: input /crawl/⟨U+202E⟩txt.warc is unreadable\n"  # type: ignore[attr-defined]
    frame = pd.DataFrame({"url": ["https://e.example/\u202eab"], "n": [1]})
    assert "⟨U+202E⟩" in escaped_html(frame) and "\u202e" not in escaped_html(frame)
    assert frame["url"][0] == "https://e.example/\u202eab"  # the data stays as it was
    from webwinnow.explore.copies import Passage

    html = side_by_side_html([Passage(5, 0, 5, 0, 5, "a\x00b", "c")], "u\u202e", None)
    assert "⟨U+0000⟩" in html and "⟨U+202E⟩" in html


def test_quiet_keeps_the_warnings_and_the_output_line():
    console = Console(quiet=True)
    console._out = io.StringIO()  # type: ignore[attr-defined]
    console.result(["7 documents", "warning: no fingerprint was made: lower --k", "output: /x"])
    assert console._out.getvalue() == "webwinnow: warning: no fingerprint was made: lower --k\nwebwinnow: output: /x\n"  # type: ignore[attr-defined]
