"""A document's text as HTML with its copied passages marked.

Every passage span of one side is clipped to the shown text; the union of the spans (overlapping
and touching ones merged) becomes ``<mark>`` elements, so each highlighted run of text is one
mark whose text content is exactly the copied characters. Passage numbers are empty anchors
(``<a class="pn" id="a3" href="#b3" data-n="3">``) at each passage's start, inside or before
the mark; the number itself is drawn by CSS (``::before { content: attr(data-n) }``), so it adds
nothing to the document's text. Everything between tags is ``html.escape``d (``&``, ``<``, ``>``:
quotes need no escape outside attributes), bidirectional and control characters written visibly
(``⟨U+202E⟩``: text.visible).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import lru_cache

from ..text.visible import shows_as_is, visible
from .model import merge_spans

#: Texts longer than this are cut (with a visible note) on the side-by-side page.
MAX_TEXT_CHARS = 300_000


def esc(value: object) -> str:
    """HTML-escape anything as text, quotes included (for element content and attributes), with
    bidirectional and control characters written visibly (text.visible)."""
    return html.escape(visible(str(value)), quote=True)


def esc_text(text: str, as_is: bool = False) -> str:
    """esc for element content only, never an attribute: quotes stay as they are (three passes
    over the text where esc makes five; the side-by-side pages escape tens of megabytes).
    `as_is`: the text is known to hold no character visible() rewrites (page_as_is)."""
    return html.escape(text if as_is else visible(text), quote=False)


@lru_cache(maxsize=1024)
def page_as_is(text: str) -> bool:
    """shows_as_is(text), asked once per page text: the side-by-side pages show a page's text in
    pieces, each searched for invisible characters again, and the same pages in many pairs (the
    docs corpus's 200 pair pages show 138 texts, every one with non-ASCII characters: the
    searches were a fifth of writing the pages). Keyed by the text itself, whose hash Python
    keeps with it: the same page's text object is found without reading it again.
    forget_pages() lets the texts go."""
    return shows_as_is(text)


def forget_pages() -> None:
    """Drop the texts page_as_is holds (a report is written)."""
    page_as_is.cache_clear()


def render_text(
    text: str,
    spans: Sequence[tuple[int, int, int]],
    side: str,
    other: str,
    as_is: bool = False,
) -> tuple[str, set[int]]:
    """(HTML of ``text`` with marks and passage anchors, numbers of the passages anchored).

    ``spans`` are ``(number, start, end)`` offsets into ``text`` (Python str indices, end
    exclusive), clipped to ``len(text)``; a passage that is empty after clipping gets no anchor.
    ``side``/``other`` are the anchor id prefixes of this text and of the other one ("a"/"b"),
    so a passage's number links to the same passage in the other text. ``as_is``: the text is
    known to hold no character visible() rewrites.
    """
    if side not in ("a", "b") or other not in ("a", "b"):
        raise ValueError("side and other are 'a' or 'b'")
    n_chars = len(text)
    # clipped to the text (conditional expressions: a pair page clips a hundred thousand spans)
    clipped = [
        (num, 0 if s < 0 else n_chars if s > n_chars else s, 0 if e < 0 else n_chars if e > n_chars else e) for num, s, e in spans
    ]
    clipped = [(num, s, e) for num, s, e in clipped if e > s]
    marks = merge_spans((s, e) for _, s, e in clipped)
    anchors: dict[int, list[int]] = {}
    for num, s, _e in clipped:
        anchors.setdefault(s, []).append(num)

    starts = {s for s, _ in marks}
    ends = {e for _, e in marks}
    cuts = sorted(starts | ends | set(anchors) | {0, n_chars})
    pieces = esc_all([text[pos:end] for pos, end in zip(cuts, cuts[1:])], as_is)
    out: list[str] = []
    append = out.append
    pieces.append("")  # after the text's end: nothing
    for pos, piece in zip(cuts, pieces):
        if pos in ends:
            append("</mark>")
        nums = anchors.get(pos)
        if nums:
            for num in sorted(set(nums)):
                append(
                    f'<a class="pn" id="{side}{num:d}" href="#{other}{num:d}" data-n="{num:d}" '
                    f'title="passage {num:d}: show it in the other text"></a>'
                )
        if pos in starts:
            append("<mark>")
        append(piece)
    return "".join(out), {num for num, _, _ in clipped}


#: Joins the texts esc_all escapes in one pass: a private-use character that esc leaves as it is.
_JOIN = "\ue000"


def esc_all(texts: Sequence[str], as_is: bool = False) -> list[str]:
    """[esc_text(t, as_is) for t in texts] (element content), escaped in one pass over them all
    where none holds _JOIN: esc_text maps each character on its own, so the escaped whole splits
    where the texts were joined. A page of a pair with hundreds of passages escapes a thousand
    pieces of its texts."""
    if len(texts) < 2 or any(_JOIN in t for t in texts):
        return [esc_text(t, as_is) for t in texts]
    return esc_text(_JOIN.join(texts), as_is).split(_JOIN)
