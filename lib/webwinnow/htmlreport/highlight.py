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

from ..text.visible import visible
from .model import merge_spans

#: Texts longer than this are cut (with a visible note) on the side-by-side page.
MAX_TEXT_CHARS = 300_000


def esc(value: object) -> str:
    """HTML-escape anything as text, quotes included (for element content and attributes), with
    bidirectional and control characters written visibly (text.visible)."""
    return html.escape(visible(str(value)), quote=True)


def esc_text(text: str) -> str:
    """esc for element content only, never an attribute: quotes stay as they are (three passes
    over the text where esc makes five; the side-by-side pages escape tens of megabytes)."""
    return html.escape(visible(text), quote=False)


def render_text(
    text: str,
    spans: Sequence[tuple[int, int, int]],
    side: str,
    other: str,
) -> tuple[str, set[int]]:
    """(HTML of ``text`` with marks and passage anchors, numbers of the passages anchored).

    ``spans`` are ``(number, start, end)`` offsets into ``text`` (Python str indices, end
    exclusive), clipped to ``len(text)``; a passage that is empty after clipping gets no anchor.
    ``side``/``other`` are the anchor id prefixes of this text and of the other one ("a"/"b"),
    so a passage's number links to the same passage in the other text.
    """
    if side not in ("a", "b") or other not in ("a", "b"):
        raise ValueError("side and other are 'a' or 'b'")
    n_chars = len(text)
    clipped = [(num, max(0, min(s, n_chars)), max(0, min(e, n_chars))) for num, s, e in spans]
    clipped = [(num, s, e) for num, s, e in clipped if e > s]
    marks = merge_spans((s, e) for _, s, e in clipped)
    anchors: dict[int, list[int]] = {}
    for num, s, _e in clipped:
        anchors.setdefault(s, []).append(num)

    starts = {s for s, _ in marks}
    ends = {e for _, e in marks}
    cuts = sorted(starts | ends | set(anchors) | {0, n_chars})
    pieces = esc_all([text[pos:end] for pos, end in zip(cuts, cuts[1:])])
    out: list[str] = []
    for i, pos in enumerate(cuts):
        if pos in ends:
            out.append("</mark>")
        for num in sorted(set(anchors.get(pos, ()))):
            out.append(
                f'<a class="pn" id="{side}{num:d}" href="#{other}{num:d}" data-n="{num:d}" '
                f'title="passage {num:d}: show it in the other text"></a>'
            )
        if pos in starts:
            out.append("<mark>")
        if i + 1 < len(cuts):
            out.append(pieces[i])
    return "".join(out), {num for num, _, _ in clipped}


#: Joins the texts esc_all escapes in one pass: a private-use character that esc leaves as it is.
_JOIN = "\ue000"


def esc_all(texts: Sequence[str]) -> list[str]:
    """[esc_text(t) for t in texts] (element content), escaped in one pass over them all where
    none holds _JOIN: esc_text maps each character on its own, so the escaped whole splits where
    the texts were joined. A page of a pair with hundreds of passages escapes a thousand pieces
    of its texts."""
    if len(texts) < 2 or any(_JOIN in t for t in texts):
        return [esc_text(t) for t in texts]
    return esc_text(_JOIN.join(texts)).split(_JOIN)
