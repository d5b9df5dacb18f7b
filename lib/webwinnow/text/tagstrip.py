"""Linear-time HTML → text without a DOM: the fallback for pages too deep to parse.

Lexbor's parse time grows with nesting depth; a page nesting 200,000 elements takes minutes.
Such pages still carry text, so instead of dropping them we cut the tags out with regular
expressions: script/style/noscript/template contents removed, block tags as line breaks,
entities decoded. Cruder than the parser (no implied end tags, no foreign content) but linear,
so a hostile page costs milliseconds.
"""

from __future__ import annotations

import html
import re

_HIDDEN = re.compile(r"<(script|style|noscript|template|title|iframe|svg|math)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BLOCK_TAG = re.compile(
    r"</?(?:address|article|aside|blockquote|br|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|"
    r"h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|tbody|td|tfoot|th|thead|tr|ul)\b[^>]*>",
    re.I,
)
_TAG = re.compile(r"<[^>]*>")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_LINES = re.compile(r"\s*\n\s*")


def strip_tags_text(markup: str) -> str:
    """Visible text of markup, block elements on their own lines, whitespace collapsed."""
    text = _COMMENT.sub(" ", markup)
    text = _HIDDEN.sub(" ", text)
    text = _BLOCK_TAG.sub("\n", text)
    text = _TAG.sub("", text)
    text = html.unescape(text)
    text = _SPACES.sub(" ", text)
    return _LINES.sub("\n", text).strip()
