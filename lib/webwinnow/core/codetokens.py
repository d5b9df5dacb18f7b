"""Code tokens: program text as a sequence of token codes, by a Pygments lexer (the ``code`` unit).

MOSS's and Analogi's normalization: what a copier changes without changing the program is made
equal, what shapes the program is kept.

* identifiers (Pygments' ``Name`` tokens, builtins excepted) all become one token ``ID``, so a
  renamed variable hides nothing;
* string literals become ``STR`` (a run of string tokens, quotes, escapes and interpolations
  included, is one literal), numbers ``NUM``, other literals ``LIT``;
* comments and whitespace are dropped; so are the lexer's ``Text`` tokens that are whitespace,
  while other ``Text`` (a shell lexer's command words) is cut at whitespace into words kept as
  they are;
* everything else (keywords, operators, punctuation, builtins, preprocessor lines) is kept as
  its exact text;
* a run of one token repeated (after the above) is one token: a rule of dashes or stars, a row
  of numbers, `ID ID ID` of a table's header. Code repeats a token rarely, but pages' `<pre>`
  blocks hold text art: on the Debian docs corpus half the passages a code run reported were
  runs of one or two tokens (1,155 of 3,000 sampled were dashes alone), and they filled the
  span cap of every long pair.

A token's code is a 63-bit BLAKE2b of its class and text: the same in every process (Python's
own ``hash`` of a string is not). Its range is the token's characters in the text; a literal
spans all its parts.

One lexer tokenizes every text of a run (``winnow.lexer``), so the same code is always the
same tokens: a lexer picked per page from its markup would tokenize a copy differently whenever
two sites label the same snippet differently. Any Pygments lexer name works; ``c`` (the
default) tokenizes the C family, JavaScript, Java and shell-like snippets usefully too.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

DEFAULT_LEXER = "c"
#: The normalization's version: raised whenever the same text would give other tokens (2: a run
#: of one token is one token; 3: a literal's part that is only whitespace, an unterminated
#: string's tail, is no token). With the Pygments release it names what an index's code
#: fingerprints and a run's code tables were made with (tokenizer()).
NORMALIZATION = 3


def tokenizer() -> str:
    """What made a code run's tokens: this module's normalization and the Pygments release (a
    release may lex the same text otherwise). An index made by another refuses code queries."""
    import pygments

    return f"webwinnow-code-{NORMALIZATION} pygments-{pygments.__version__}"


@functools.lru_cache(maxsize=16)
def lexer(name: str):
    """The Pygments lexer called `name`, configured to leave the text as it is (positions stay
    offsets of the text given)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=False, tabsize=0)
    except ClassNotFound:
        raise ValueError(
            f"no Pygments lexer is called {name!r}: name one 'pygmentize -L lexers' lists "
            "(python, c, java, javascript, bash, ...)"
        ) from None


def check_lexer(name: str) -> str:
    """name, if Pygments has such a lexer (else a ValueError saying how to find one)."""
    lexer(name)
    return name


@functools.lru_cache(maxsize=1 << 16)
def _code(kind: str, text: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{kind}\0{text}".encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big") >> 1


def _kind(tokentype) -> str | None:
    """The normalized class of a Pygments token type: ID, STR, NUM, LIT, "" (kept as its text),
    None (dropped), or TEXT (cut into words)."""
    from pygments import token as T

    if tokentype in T.Comment:
        return "" if tokentype in T.Comment.Preproc or tokentype in T.Comment.PreprocFile else None
    if tokentype in T.Name:
        return "" if tokentype in T.Name.Builtin else "ID"
    if tokentype in T.Literal.String:
        return "STR"
    if tokentype in T.Literal.Number:
        return "NUM"
    if tokentype in T.Literal:
        return "LIT"
    if tokentype in T.Text:  # Text, Text.Whitespace
        return "TEXT"
    return ""


_KINDS: dict = {}


def code_tokens(text: str, lexer_name: str = DEFAULT_LEXER) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes int64, starts int64, ends int64) of the tokens of `text`, in text order. A form
    feed separates blocks (a page's code blocks: webwinnow.text.html2text.html_code), each
    tokenized alone."""
    lex = lexer(lexer_name)
    codes: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for block in text.split("\f"):
        _block_tokens(lex, block, at, codes, starts, ends)
        at += len(block) + 1
    return (np.asarray(codes, np.int64), np.asarray(starts, np.int64), np.asarray(ends, np.int64))


def _block_tokens(lex, text: str, at: int, codes: list[int], starts: list[int], ends: list[int]) -> None:
    literal = False  # the last token kept was a literal that the next string part extends
    first = len(codes)  # this block's first token: a run never joins tokens of two blocks

    def add(code: int, start: int, end: int) -> None:
        if len(codes) > first and codes[-1] == code:
            ends[-1] = end  # a run of one token is one token
        else:
            codes.append(code)
            starts.append(start)
            ends.append(end)

    # a line comment at the very end needs its newline (the C lexer's rule ends with one)
    for start, tokentype, value in lex.get_tokens_unprocessed(text + "\n"):
        if start >= len(text):
            break
        value = value[: len(text) - start]
        start += at
        kind = _KINDS.get(tokentype, 0)
        if kind == 0:
            kind = _KINDS[tokentype] = _kind(tokentype)
        if kind is None:
            literal = False
            continue
        if kind == "TEXT":
            literal = False
            offset = 0
            for word in value.split():
                begin = value.index(word, offset)
                offset = begin + len(word)
                add(_code("", word), start + begin, start + offset)
            continue
        if kind == "STR" and literal:
            ends[-1] = start + len(value)
            continue
        if not value.strip():  # whitespace is no token, whatever the lexer calls it
            literal = False
            continue
        if kind == "":
            start += len(value) - len(value.lstrip())
            value = value.strip()
        add(_code(kind, value if kind == "" else ""), start, start + len(value))
        literal = kind == "STR"
