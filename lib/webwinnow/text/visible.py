"""Crawled text made safe to show: characters that change how text around them reads.

A URL or a page holding U+202E (right-to-left override) shows ``https://evil.example/exe.txt``
for what is ``https://evil.example/txt.exe``; a NUL byte from a WET record vanishes or cuts a
line. Wherever webwinnow shows crawled text to a person (the report, the terminal, the
notebooks' tables) such characters are written visibly, as ``⟨U+202E⟩``: the bidirectional
controls and the control characters other than tab, newline, carriage return and form feed (a
code text's block separator). Tables keep the text as it was.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: Bidirectional embeddings, overrides, isolates and marks, and the C0/C1 controls but \t \n \f \r.
INVISIBLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


#: The ASCII characters INVISIBLE leaves as they are.
_SHOWN_ASCII = bytes(c for c in range(128) if not INVISIBLE.match(chr(c)))


def visible(text: str) -> str:
    """text with every INVISIBLE character written as ⟨U+XXXX⟩."""
    # ASCII text, most pages, is checked by deleting its shown bytes: a third of the regular
    # expression's scan (the report's side-by-side pages show tens of megabytes of text)
    if text.isascii() and not text.encode("ascii").translate(None, _SHOWN_ASCII):
        return text
    return INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def shows_as_is(text: str) -> bool:
    """Whether visible(text) is text: it holds no INVISIBLE character."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _SHOWN_ASCII)
    return INVISIBLE.search(text) is None


def href_safe(url: str) -> str:
    """url with every INVISIBLE character percent-encoded: the link goes where a browser would
    send it anyway, and its text shows nothing reversed."""
    return INVISIBLE.sub(lambda m: quote(m.group(), safe=""), url)
