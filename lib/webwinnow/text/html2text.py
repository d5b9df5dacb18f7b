"""HTML to plain text with selectolax (Lexbor): body text only, block elements on their own lines.

One pre-pass over the bytes (a Numba kernel, before Lexbor sees them) does three things:

* estimates the nesting depth and rejects pathological pages, because Lexbor's parse time grows
  with depth times the number of block tags (200k nested divs take about 70 s);
* writes a line break before every start and end tag of a block element, so block boundaries
  survive as text while inline tags (``Hel<b>lo</b>``) join words as a browser shows them. The
  break is a form feed: whitespace to the parser like a newline, but rare enough in pages that it
  tells our breaks apart from the source's own newlines, which are plain spaces in HTML;
* cuts out script, style, title, iframe, noembed and noframes elements. Their content is raw text
  that ends at the first matching end tag (script's ``<!--`` escapes included), so the cut is
  exactly where the tokenizer would end them, and Lexbor parses less;
* drops every tag's attributes but where the tree builder reads them (``_keeps_attributes``),
  reading them as the tokenizer does (a quoted value runs to its quote), so a tag ends where
  the tokenizer ends it. Attributes are half the bytes of a typical page and hold no text:
  Lexbor's parse takes a third less.

Whitespace text never changes which element a later text run lands in, and the elements cut out
hold no visible text, so the result is the text Lexbor gives for the original page, plus line
breaks. Elements whose end the tokenizer does not fix (noscript, svg, math, object) are removed
from the tree after parsing, and only when the pre-pass saw one.

Measured alternatives: inserting a text node per block element from Python cost three times the
parse; a regular expression over the tags runs at 20-40 MB/s, below Lexbor's own speed.
"""

from __future__ import annotations

import numpy as np
from selectolax.lexbor import LexborHTMLParser

from ..core.jit import JIT_OPTIONS, njit

__all__ = ["CODE_BLOCK_BREAK", "DEFAULT_MAX_HTML_BYTES", "DEFAULT_MAX_NESTING", "HtmlRejected", "html_code", "html_to_text"]

DEFAULT_MAX_NESTING = 2000
DEFAULT_MAX_HTML_BYTES = 16 * 2**20


class HtmlRejected(ValueError):
    """The page was not parsed; ``reason`` is ``html_too_large`` or ``html_too_deep``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# Tag classes for the pre-pass, as bits of a uint16.
_BLOCK = 1  # a line break before its start and end tags
_FLAT = 2  # never holds the parser's stack deeper: void, or closed implicitly by its next sibling
_RAW = 4  # raw text or RCDATA: no tags inside until its own end tag
_PLAIN = 8  # <plaintext>: everything after it is text
_CUT = 16  # raw-text element cut out of the bytes
_SCRIPT = 32  # script data, with its own escape rules for the end tag
_TREE_DROP = 64  # removed from the tree after parsing
# Table cells get their line break after the start tag and a table after its end tag, inside a
# cell or in body: whitespace between table parts goes through the parser's slower table-text
# path (about +5% parse instructions on table-heavy pages).
_BREAK_AFTER = 128
_INLINE = 256  # phrasing markup left out of html_to_text's parse (_INLINE_NAMES)
_CONTAINER = 512  # block containers left out of it, their line breaks kept (_CONTAINER_NAMES)

_BLOCK_NAMES = (
    "address article aside blockquote br button center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr legend li listing main "
    "marquee menu nav ol optgroup option p plaintext pre search section select summary table textarea "
    "ul xmp"
)
_BREAK_AFTER_NAMES = "td th caption table"
_FLAT_NAMES = (
    "area base basefont bgsound br col embed frame hr image img input isindex keygen link meta nextid "
    "param source spacer track wbr "
    "p li dt dd tr td th thead tbody tfoot option optgroup colgroup caption rb rt rp rtc html head body "
    # SVG shapes are written self-closing ("<path/>"), which holds in foreign content
    "circle ellipse line path polygon polyline rect stop use"
)
_RAW_NAMES = "script style textarea title xmp iframe noembed noframes"
# noembed and noframes hold fallback text that browsers do not show.
_CUT_NAMES = "script style title iframe noembed noframes"
# Phrasing elements whose tags change no text when left out: the tree builder gives their
# text in the same order without them (formatting elements only add clones around text; their
# misnesting moves elements, not text), and none is read by name afterwards. Syntax-highlighted
# documentation is mostly these (the docs corpus: 1.1 M of its 2.6 M tags are span, a, code and
# em). Not inside SVG or MathML (from <svg> or <math> to its end tag), where most of them end
# the foreign element; and an end tag of one there (</u>, </span>) that does not end the element
# it is in ends the foreign element too when its start tag is open around it, so such an end
# tag after any was left out has the page prepared again keeping them all. <font> ends it only with attributes. Not before <body> either (a phrasing
# tag starts the body: a <noscript> after it is no longer the head's), nor where the text around
# the tag would join into a tag or a character reference. The code unit reads pre and code by
# name: html_code keeps them.
_INLINE_NAMES = (
    "a abbr b bdi bdo big cite code data del dfn em i ins kbd mark q s samp small span strike strong sub sup time tt u var"
)
# Block containers whose tags change no text when left out but their line break (kept): the
# elements they close or that close them hold text in the same order. As for phrasing tags,
# and not while a <noscript> is open either: an end tag (</div>), or a block start tag that
# closes a <p>, ends the <noscript> when the element is open around it, so such a tag inside
# SVG, MathML or a <noscript> after any container was left out has the page prepared again.
_CONTAINER_NAMES = (
    "address article aside blockquote center dd dir div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 header "
    "hgroup li main menu nav ol p search section ul"
)
# <template> needs nothing: its content is a separate fragment that text() never reaches.
_TREE_DROP_NAMES = ["noscript", "svg", "math", "object"]

_BREAK = 12  # form feed
_LONG_NAME = np.uint64(1 << 63)
_SLOTS = 512  # power of two, a few times the number of names, so probes stay short
_HASH_MUL = 0x9E3779B97F4A7C15
_HASH_SHIFT = 64 - 9


def _name_key(name: str) -> int:
    """The kernel's key for a tag name: its first 8 lower-cased bytes, plus a bit if it is longer."""
    raw = name.lower().encode("ascii")
    key = int.from_bytes(raw[:8], "little")
    return key | int(_LONG_NAME) if len(raw) > 8 else key


def _tag_table() -> tuple[np.ndarray, np.ndarray]:
    """Open-addressing hash table from name key to class bits (key 0 marks an empty slot)."""
    classes: dict[int, int] = {}
    groups = [
        (_BLOCK_NAMES, _BLOCK),
        (_FLAT_NAMES, _FLAT),
        (_RAW_NAMES, _RAW),
        ("plaintext", _PLAIN),
        (_INLINE_NAMES, _INLINE),
        (_CONTAINER_NAMES, _CONTAINER),
        (_CUT_NAMES, _CUT),
        ("script", _SCRIPT),
        (" ".join(_TREE_DROP_NAMES), _TREE_DROP),
        (_BREAK_AFTER_NAMES, _BREAK_AFTER),
    ]
    for names, bit in groups:
        for name in names.split():
            key = _name_key(name)
            classes[key] = classes.get(key, 0) | bit
    keys = np.zeros(_SLOTS, dtype=np.uint64)
    bits = np.zeros(_SLOTS, dtype=np.uint16)
    for key, cls in classes.items():
        slot = ((key * _HASH_MUL) & (2**64 - 1)) >> _HASH_SHIFT
        while keys[slot]:
            slot = (slot + 1) % _SLOTS
        keys[slot] = key
        bits[slot] = cls
    return keys, bits


_TAG_KEYS, _TAG_CLASSES = _tag_table()
# How far below the top of the open-element stack an end tag may find its element; bounds the
# cost of stray end tags, which the parser ignores.
_END_TAG_REACH = 256
_SCRIPT_KEY = np.uint64(_name_key("script"))
# The start tags whose attributes the tree builder reads (HTML Standard, tree construction):
# <input type=hidden> keeps a frameset possible and stays in a table, <font color|face|size>
# leaves SVG and MathML, <annotation-xml encoding=text/html> makes HTML inside MathML, and a
# <meta charset> could change the encoding. Every other tag goes to Lexbor without attributes.
_INPUT_KEY = np.uint64(_name_key("input"))
_FONT_KEY = np.uint64(_name_key("font"))
_META_KEY = np.uint64(_name_key("meta"))
_ANNOTATION_KEY = np.uint64(_name_key("annotation-xml"))
_TABLE_KEY = np.uint64(_name_key("table"))
_PRE_KEY = np.uint64(_name_key("pre"))
_SVG_KEY = np.uint64(_name_key("svg"))
_BODY_KEY = np.uint64(_name_key("body"))
_NOSCRIPT_KEY = np.uint64(_name_key("noscript"))
_TEMPLATE_KEY = np.uint64(_name_key("template"))
_MATH_KEY = np.uint64(_name_key("math"))


@njit(**JIT_OPTIONS)
def _is_space(b):
    return b == 32 or b == 9 or b == 10 or b == 12 or b == 13


@njit(**JIT_OPTIONS)
def _read_name(buf, j, n):
    """Key of the tag name starting at j, and the index just after it (names end at space, / or >)."""
    key = np.uint64(0)
    shift = np.uint64(0)
    k = 0
    while j < n:
        b = buf[j]
        if _is_space(b) or b == 47 or b == 62:
            break
        if k < 8:
            if b >= 65 and b <= 90:
                b |= np.uint8(32)
            elif b == 0:  # the tokenizer reads U+FFFD: "script\0" is no script
                b = np.uint8(0xFD)
            key |= np.uint64(b) << shift
            shift += np.uint64(8)
        k += 1
        j += 1
    if k > 8:
        key |= _LONG_NAME
    return key, j


@njit(**JIT_OPTIONS)
def _class_of(keys, classes, key):
    slot = (key * np.uint64(_HASH_MUL)) >> np.uint64(_HASH_SHIFT)
    while keys[slot] != np.uint64(0):
        if keys[slot] == key:
            return classes[slot]
        slot = (slot + np.uint64(1)) & np.uint64(_SLOTS - 1)
    return np.uint16(0)


@njit(**JIT_OPTIONS)
def _tag_end(buf, j, n):
    """Where the tag whose name ends at j ends, as the tokenizer's attribute states read it:
    (index of its ">", or -1 when the page ends inside it; its self-closing flag; whether it has
    attributes). A quoted value runs to its quote whatever it holds; an unquoted one to space or
    ">"; "/" sets the flag only right before ">"."""
    attributes = False
    while j < n:
        b = buf[j]
        if _is_space(b):
            j += 1
            continue
        if b == 62:
            return j, False, attributes
        if b == 47:
            if j + 1 < n and buf[j + 1] == 62:
                return j + 1, True, attributes
            j += 1
            continue
        attributes = True
        j += 1  # the name's first byte, "=" included
        while j < n:
            b = buf[j]
            if _is_space(b) or b == 47 or b == 62 or b == 61:
                break
            j += 1
        while j < n and _is_space(buf[j]):
            j += 1
        if j < n and buf[j] == 61:
            j += 1
            while j < n and _is_space(buf[j]):
                j += 1
            if j >= n:
                break
            q = buf[j]
            if q == 34 or q == 39:
                j += 1
                while j < n and buf[j] != q:
                    j += 1
                j += 1
            elif q != 62:
                while j < n and not _is_space(buf[j]) and buf[j] != 62:
                    j += 1
    return -1, False, attributes


@njit(**JIT_OPTIONS)
def _joins_nothing(out, m, buf, copied, i):
    """Whether the text before buf[i] (buf[copied:i] after out[:m]) ends so that it cannot join
    the text after a tag left out there into markup: a lone "<" would start a tag, and "&" with
    letters, digits or "#" a character reference (their text was literal with the tag between)."""
    at = i - 1
    while at >= 0 and i - at < 40:
        b = buf[at] if at >= copied else (out[m - (copied - at)] if m - (copied - at) >= 0 else np.uint8(32))
        if b == 60 or b == 38:
            return False
        if not ((b >= 48 and b <= 57) or ((b | 32) >= 97 and (b | 32) <= 122) or b == 35):
            return True
        at -= 1
    return True


@njit(**JIT_OPTIONS)
def _keeps_attributes(key):
    return key == _INPUT_KEY or key == _FONT_KEY or key == _META_KEY or key == _ANNOTATION_KEY


@njit(**JIT_OPTIONS)
def _is_end_tag(buf, j, n, key):
    if j + 1 < n and buf[j] == 60 and buf[j + 1] == 47:
        other, after = _read_name(buf, j + 2, n)
        return other == key
    return False


@njit(**JIT_OPTIONS)
def _raw_end(buf, j, n, key):
    """Index of the "<" of the end tag named by key at or after j (n if none)."""
    while j < n:
        if buf[j] == 60 and _is_end_tag(buf, j, n, key):
            return j
        j += 1
    return n


@njit(**JIT_OPTIONS)
def _script_end(buf, j, n):
    """Index of the "<" of the tag that ends script data at j (n if none).

    Inside "<!--" a nested "<script" starts a double-escaped run in which "</script" does not end
    the element; "-->" leaves both (HTML Standard, script data states).
    """
    state = 0  # 0 data, 1 escaped, 2 double escaped
    while j < n:
        b = buf[j]
        if b == 60:
            if _is_end_tag(buf, j, n, _SCRIPT_KEY):
                if state != 2:
                    return j
                state = 1
            elif state == 0 and j + 3 < n and buf[j + 1] == 33 and buf[j + 2] == 45 and buf[j + 3] == 45:
                state = 1
                j += 4
                continue
            elif state == 1 and j + 1 < n:
                key, after = _read_name(buf, j + 1, n)
                if key == _SCRIPT_KEY and after < n:
                    state = 2
        elif b == 45 and state != 0 and j + 2 < n and buf[j + 1] == 45 and buf[j + 2] == 62:
            state = 0
            j += 3
            continue
        j += 1
    return n


@njit(**JIT_OPTIONS)
def _copy(out, m, buf, start, stop):
    """Append buf[start:stop] to out[:m]; returns the new length."""
    if stop <= start:
        return m
    dst = out[m:]
    src = buf[start:stop]
    # Unsigned indices on views skip the negative-index fix-up, so LLVM emits a block copy.
    for k in range(np.uint64(stop - start)):
        dst[k] = src[k]
    return m + stop - start


@njit(**JIT_OPTIONS)
def _copy_lines(out, m, buf, start, stop):
    """_copy for text inside <pre>: its newlines are line breaks, so they become ours."""
    for k in range(start, stop):
        b = buf[k]
        out[m] = _BREAK if b == 10 else b
        m += 1
    return m


@njit(**JIT_OPTIONS)
def _prepare(buf, words, keys, classes, max_depth, keep_inline):
    """Copy buf with a line break at each block tag and raw-text elements cut out; without
    keep_inline, the tags of _INLINE_NAMES left out where that changes no text (see there).

    Returns (out, length, seen): length is -1 as soon as the depth estimate passes max_depth, -2
    when a phrasing end tag inside SVG or MathML that does not end the element it is in comes
    after a phrasing tag was left out (call again keeping them: the end tag can end the foreign
    element); seen is True when an element to drop from the tree occurs.

    The estimate keeps a stack of open elements that can nest. An end tag pops back to the
    nearest open element of its name, as the parser does, and is ignored when none is open within
    _END_TAG_REACH of the top, so it errs high: void elements and those closed implicitly by a
    sibling (p, li, td, ...) never count, everything else does until its end tag.
    """
    n = buf.shape[0]
    # Every line break goes before a tag of at least three bytes ("<p>"), save one at the very end.
    out = np.empty(n + n // 3 + 2, dtype=np.uint8)
    m = 0  # bytes written to out
    copied = 0  # buf[:copied] is dealt with
    stack = np.empty(min(max_depth, n) + 2, dtype=np.uint64)
    depth = 0
    pre = 0  # open <pre> elements; pre start and end tags are block tags, so every copy of text
    # inside one happens between the two
    seen = False
    svgs = 0  # <svg> start tags not yet ended
    opened = np.uint64(0)  # the key of the tag before this one when it was a start tag, else 0
    maths = 0
    dropped = False  # a phrasing tag was left out
    dropped_block = False  # a container's tag was
    noscripts = 0  # <noscript> start tags not yet ended
    body = False  # a <body> start tag has come, and no <template> before it
    template = False
    i = 0
    while i < n:
        if buf[i] != 60:
            i += 1
            # Text runs are skipped a word at a time: a word without "<" has no zero byte once
            # XORed with "<<<<<<<<" (the classic has-zero-byte test).
            while i & 7 == 0 and (i >> 3) < words.shape[0]:
                x = words[i >> 3] ^ np.uint64(0x3C3C3C3C3C3C3C3C)
                if (x - np.uint64(0x0101010101010101)) & ~x & np.uint64(0x8080808080808080):
                    break
                i += 8
            continue
        if i + 1 >= n:
            break
        c = buf[i + 1]
        if c == 33:  # "<!": comment, doctype or bogus comment
            if i + 3 < n and buf[i + 2] == 45 and buf[i + 3] == 45:
                j = i + 4
                if j < n and buf[j] == 62:  # "<!-->"
                    i = j + 1
                elif j + 1 < n and buf[j] == 45 and buf[j + 1] == 62:  # "<!--->"
                    i = j + 2
                else:
                    while j + 2 < n and not (buf[j] == 45 and buf[j + 1] == 45 and buf[j + 2] == 62):
                        j += 1
                    i = j + 3
                continue
            j = i + 2
            while j < n and buf[j] != 62:
                j += 1
            i = j + 1
            continue
        closing = c == 47
        j = i + 2 if closing else i + 1
        if j >= n:
            break
        first = buf[j] | 32
        if first < 97 or first > 122:
            if closing or c == 63:  # "</3" and "<?": bogus comment up to ">"
                while j < n and buf[j] != 62:
                    j += 1
                i = j + 1
            else:
                i += 1  # a lone "<" in text
            continue
        key, j = _read_name(buf, j, n)
        end, closes_itself, attributes = _tag_end(buf, j, n)
        if end < 0:
            break  # the page ends inside this tag: the tokenizer drops it and all after it
        cls = _class_of(keys, classes, key)
        if cls & _TREE_DROP:
            seen = True
        foreign = svgs > 0 or maths > 0
        # the element it is in: the one just opened (SVG's <path ...></path>, which the depth
        # estimate does not keep), or the estimate's innermost
        ends_current = key == opened or (depth and stack[depth - 1] == key)
        opened = np.uint64(0) if closing or closes_itself else key
        if foreign and closing and ((dropped and cls & _INLINE) or dropped_block) and not ends_current:
            # not the foreign element it is in: it may reach one left out, or (any end tag) pass
            # where a container left out would have stopped it
            return out, -2, seen
        if dropped_block and cls & _BLOCK and (foreign or noscripts):
            return out, -2, seen
        if key == _NOSCRIPT_KEY:  # also where it may be foreign: counting errs safe
            noscripts = max(noscripts - 1, 0) if closing else noscripts + 1
        elif key == _SVG_KEY:
            svgs = max(svgs - 1, 0) if closing else svgs + (0 if closes_itself else 1)
        elif key == _MATH_KEY:
            maths = max(maths - 1, 0) if closing else maths + (0 if closes_itself else 1)
        elif not closing:
            if key == _TEMPLATE_KEY:
                template = True
            elif key == _BODY_KEY and not template:
                body = True
        breaks_after = False
        if cls & _BLOCK and not (closing and key == _TABLE_KEY):
            m = _copy_lines(out, m, buf, copied, i) if pre else _copy(out, m, buf, copied, i)
            copied = i
            if key == _PRE_KEY:
                pre = max(pre - 1, 0) if closing else pre + 1
            # Turning the space before the tag into the line break adds no text node for Lexbor
            # to build; indented HTML nearly always has one.
            if m and _is_space(out[m - 1]):
                out[m - 1] = _BREAK
            else:
                out[m] = _BREAK
                m += 1
        elif cls & _BREAK_AFTER and closing == (key == _TABLE_KEY):
            breaks_after = True
        # The tag goes to Lexbor without its attributes (half a page's bytes, and no text) unless
        # the tree builder reads them; a raw-text element cut out goes whole.
        if cls & _INLINE and body and not (keep_inline or foreign) and _joins_nothing(out, m, buf, copied, i):
            m = _copy_lines(out, m, buf, copied, i) if pre else _copy(out, m, buf, copied, i)
            copied = end + 1  # the depth estimate still counts it: pages rejected stay rejected
            dropped = True
        elif cls & _CONTAINER and body and not (keep_inline or foreign or noscripts):
            copied = end + 1  # after its line break (a _BLOCK tag)
            dropped_block = True
        elif attributes and (closing or not (_keeps_attributes(key) or cls & _CUT)):
            m = _copy_lines(out, m, buf, copied, j) if pre else _copy(out, m, buf, copied, j)
            if closes_itself:
                out[m] = 47
                m += 1
            out[m] = 62
            m += 1
            copied = end + 1
        if breaks_after and end + 1 < n:
            m = _copy_lines(out, m, buf, copied, end + 1) if pre else _copy(out, m, buf, copied, end + 1)
            out[m] = _BREAK
            m += 1
            copied = end + 2 if _is_space(buf[end + 1]) else end + 1
        if closing:
            if cls & (_FLAT | _RAW) == 0:
                k = depth - 1
                while k >= 0 and k >= depth - _END_TAG_REACH:
                    if stack[k] == key:
                        depth = k
                        break
                    k -= 1
            i = end + 1
        elif cls & _PLAIN:
            break
        elif cls & _RAW:
            text_end = _script_end(buf, end + 1, n) if cls & _SCRIPT else _raw_end(buf, end + 1, n, key)
            if cls & _CUT:
                m = _copy_lines(out, m, buf, copied, i) if pre else _copy(out, m, buf, copied, i)
                copied = n
                if text_end < n:  # through the end tag's ">", read as the tokenizer reads a tag
                    _, after = _read_name(buf, text_end + 2, n)
                    close, _, _ = _tag_end(buf, after, n)
                    copied = n if close < 0 else close + 1
                i = copied
            else:
                i = text_end
        else:
            if cls & _FLAT == 0:
                if depth >= max_depth:
                    return out, -1, seen
                stack[depth] = key
                depth += 1
            i = end + 1
        if i < copied:  # a line break was written after this tag's ">"
            i = copied
    m = _copy_lines(out, m, buf, copied, n) if pre else _copy(out, m, buf, copied, n)
    return out, m, seen


@njit(**JIT_OPTIONS)
def _space_len(buf, i, n):
    """Length of the whitespace character at buf[i] (UTF-8), 0 if it is not one; form feed excluded.

    The set is what str.split() splits on: ASCII 9-11, 13, 28-31, space, and Unicode White_Space
    (NBSP, the U+2000 block, ideographic space, ...).
    """
    b = buf[i]
    if b < 128:
        return 1 if (b == 32 or (b >= 9 and b <= 11) or b == 13 or (b >= 28 and b <= 31)) else 0
    if i + 1 >= n:
        return 0
    b1 = buf[i + 1]
    if b == 0xC2:
        return 2 if (b1 == 0xA0 or b1 == 0x85) else 0
    if i + 2 >= n:
        return 0
    b2 = buf[i + 2]
    if b == 0xE1:
        return 3 if (b1 == 0x9A and b2 == 0x80) else 0
    if b == 0xE2:
        if b1 == 0x80 and ((b2 >= 0x80 and b2 <= 0x8A) or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF):
            return 3
        return 3 if (b1 == 0x81 and b2 == 0x9F) else 0
    if b == 0xE3:
        return 3 if (b1 == 0x80 and b2 == 0x80) else 0
    return 0


@njit(**JIT_OPTIONS)
def _collapse(buf):
    """Our line breaks become newlines and other whitespace runs one space; lines are stripped and
    blank lines dropped (UTF-8 in and out)."""
    n = buf.shape[0]
    out = np.empty(n, dtype=np.uint8)
    m = 0
    space = False
    newline = False
    i = 0
    while i < n:
        b = buf[i]
        if b == _BREAK:
            newline = True
            i += 1
            continue
        if b <= 32 or b >= 128:
            w = _space_len(buf, i, n)
            if w:
                space = True
                i += w
                continue
        if m:
            if newline:
                out[m] = 10
                m += 1
            elif space:
                out[m] = 32
                m += 1
        space = False
        newline = False
        out[m] = b
        m += 1
        i += 1
    return out, m


def _parsed(html: str | bytes, max_nesting: int, max_html_bytes: int, keep_inline: bool) -> LexborHTMLParser | None:
    """The page parsed after the pre-pass (None: empty), or HtmlRejected as html_to_text says;
    keep_inline for a tree whose phrasing elements are read (_prepare)."""
    if max_nesting < 1 or max_html_bytes < 1:
        raise ValueError(
            f"max_nesting and max_html_bytes must be positive, got {max_nesting} and {max_html_bytes}; "
            f"the defaults are {DEFAULT_MAX_NESTING} and {DEFAULT_MAX_HTML_BYTES}"
        )
    data = html.encode("utf-8", errors="replace") if isinstance(html, str) else bytes(html)
    if len(data) > max_html_bytes:
        raise HtmlRejected(
            "html_too_large",
            f"HTML is {len(data):,} bytes, above max_html_bytes={max_html_bytes:,}; raise max_html_bytes to parse it anyway",
        )
    if not data:
        return None
    page, words = np.frombuffer(data, dtype=np.uint8), np.frombuffer(data, dtype=np.uint64, count=len(data) // 8)
    out, length, seen = _prepare(page, words, _TAG_KEYS, _TAG_CLASSES, max_nesting, keep_inline)
    if length == -2:
        out, length, seen = _prepare(page, words, _TAG_KEYS, _TAG_CLASSES, max_nesting, True)
    if length < 0:
        raise HtmlRejected(
            "html_too_deep",
            f"HTML nests deeper than max_nesting={max_nesting} by the pre-parse estimate; raise "
            "max_nesting to parse it anyway, at a parse time that grows with the square of the depth",
        )
    tree = LexborHTMLParser(out[:length].tobytes())
    if seen:
        tree.strip_tags(_TREE_DROP_NAMES)
    return tree


#: Between two code blocks of a page in the code unit's text: each block is tokenized alone
#: (webwinnow.core.codetokens), so a string a block leaves open does not swallow the next one.
CODE_BLOCK_BREAK = "\n\f\n"


def html_code(
    html: str | bytes,
    *,
    max_nesting: int = DEFAULT_MAX_NESTING,
    max_html_bytes: int = DEFAULT_MAX_HTML_BYTES,
) -> str:
    """The program code of an HTML page, for the ``code`` unit: the text of every ``<pre>``
    element, and of every ``<code>`` element outside one that spans lines (inline ``<code>`` is a
    name in prose, not a program), as the source wrote it, blocks in page order joined by
    CODE_BLOCK_BREAK. Rejects pages as html_to_text does."""
    tree = _parsed(html, max_nesting, max_html_bytes, True)
    if tree is None or tree.body is None:
        return ""
    blocks = []
    for node in tree.body.css("pre, code"):
        parent, inside = node.parent, False
        while parent is not None and not inside:
            inside = parent.tag == "pre" or (parent.tag == "code" and node.tag == "code")
            parent = parent.parent
        if inside:
            continue  # its text is in the block around it
        # the pre-pass wrote the block's own line breaks as form feeds (see _copy_lines)
        text = node.text(deep=True, separator="").replace("\f", "\n").strip("\n")
        if text.strip() and (node.tag == "pre" or "\n" in text):
            blocks.append(text)
    return CODE_BLOCK_BREAK.join(blocks)


def html_to_text(
    html: str | bytes,
    *,
    max_nesting: int = DEFAULT_MAX_NESTING,
    max_html_bytes: int = DEFAULT_MAX_HTML_BYTES,
) -> str:
    """Visible body text of an HTML page: one line per block, inline markup joined, spaces collapsed.

    ``bytes`` must be UTF-8 (decode other charsets first, e.g. with ``httpbody.body_to_text``).
    Raises :class:`HtmlRejected` for pages above ``max_html_bytes`` or nested deeper than
    ``max_nesting``, as estimated before parsing (an over-estimate: elements that can nest count
    from their start tag to their end tag, or to the end tag of an element around them).
    """
    tree = _parsed(html, max_nesting, max_html_bytes, False)
    if tree is None:
        return ""
    body = tree.body
    if body is None:  # a <frameset> page has no body
        return ""
    text = body.text(deep=True, separator="")
    if not text:
        return ""
    out, length = _collapse(np.frombuffer(text.encode("utf-8", errors="surrogatepass"), dtype=np.uint8))
    return out[:length].tobytes().decode("utf-8", errors="replace")
