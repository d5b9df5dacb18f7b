"""`webwinnow show`: a run's results on the terminal, for a server without a browser or notebook.

    webwinnow show --out OUT                   the run in words, then the top pairs
    webwinnow show --out OUT --pair 3          the third pair's passages side by side
    webwinnow show --out OUT --pair DOC_A DOC_B
    webwinnow show --out OUT --columns pairs   what each column of a table means (all tables: --columns)

Reads the tables with pyarrow (``explore.RunOutput``), local or on a store: no Spark. Crawled
text is shown with its bidirectional and control characters written visibly (``text.visible``).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import shutil
import sys
import textwrap
from typing import Any

from .. import schemas
from ..errors import UserError
from ..text.visible import visible

#: A column of a schema in schemas.py: ("name", pa.type(...)),  # what it means
_FIELD = re.compile(r'^\s*\("(\w+)",\s*pa\.[^#]*?\)\s*,?\s*(?:#\s*(.*))?$')
_SCHEMA = re.compile(r"^(\w+) = pa\.schema\(")


def column_meanings() -> dict[str, list[tuple[str, str]]]:
    """Every table's columns with what they mean, read from the comments in schemas.py (the one
    place they are written): {schema name: [(column, meaning)]}. A comment on the lines before a
    column is that column's; columns a schema takes from another are listed there."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    before: list[str] = []
    for line in inspect.getsource(schemas).splitlines():
        if m := _SCHEMA.match(line):
            current = found.setdefault(m.group(1), [])
            before = []
        elif current is not None and line.strip().startswith("#") and not line.strip().startswith("#:"):
            before.append(line.strip().lstrip("#").strip())
        elif current is not None and (m := _FIELD.match(line)):
            current.append((m.group(1), " ".join([*before, m.group(2) or ""]).strip()))
            before = []
    return found


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 160))


def _columns(table: str | None) -> list[str]:
    from ..schemas import TABLE_SCHEMAS

    meanings = column_meanings()
    by_schema = {id(value): name for name, value in vars(schemas).items() if name.isupper() and hasattr(value, "names")}
    tables = [table] if table else sorted(TABLE_SCHEMAS)
    unknown = [t for t in tables if t not in TABLE_SCHEMAS]
    if unknown:
        raise UserError(f"--columns {unknown[0]}: no such table; the tables are {', '.join(sorted(TABLE_SCHEMAS))}")
    lines = []
    for name in tables:
        schema = TABLE_SCHEMAS[name]
        said = dict(meanings.get(by_schema.get(id(schema), ""), []))
        for other in meanings.values():  # columns a schema takes from another (PAIRS from CANDIDATE_PAIRS ...)
            for column, meaning in other:
                said.setdefault(column, meaning)
        lines.append(f"{name}:")
        for field in schema:
            meaning = said.get(field.name) or ""
            if not meaning and field.name.endswith("_b") and field.name != "doc_b" and said.get(field.name[:-2] + "_a"):
                meaning = f"as {field.name[:-2]}_a, of doc_b"
            lines.append(f"  {field.name:<18} {str(field.type):<10} {meaning}".rstrip())
    return lines


def _top(run: Any, n: int) -> list[str]:
    from ..explore.copies import top_pairs

    lines = [visible(line) for line in (run.summary.get("headline") or [])]
    pairs = top_pairs(run, n)
    if pairs.empty:
        return [*lines, "no pair shares copied content"]
    unit = (run.config("fingerprints").get("winnow") or {}).get("unit", "char")
    noun = {"word": "words", "code": "tokens"}.get(unit, "chars")
    width = _width()
    lines += ["", f"{'#':>3}  {'content':>9}  {'share':>5}  source  pages (doc ids for --pair)"]
    for rank, r in enumerate(pairs.itertuples(index=False), 1):
        content = min(r.content_chars_a, r.content_chars_b)
        share = max(r.content_share_a, r.content_share_b)
        src = {"a": "A", "b": "B"}.get(r.source, r.source or "?")
        room = max(20, width - 40)
        lines.append(f"{rank:>3}  {content:>9,}  {share:>5.0%}  {src:<6}  A {visible(str(r.url_a))[:room]}")
        lines.append(f"{'':>3}  {'':>9}  {'':>5}  {'':<6}  B {visible(str(r.url_b))[:room]}  ({r.doc_a} {r.doc_b})")
    lines.append(f"content: {noun} outside template on the smaller side; share: of the page that copied more")
    return lines


def _pair(run: Any, which: list[int], n: int) -> list[str]:
    from ..explore.copies import pair_passages, top_pairs

    if len(which) == 1:
        top = top_pairs(run, which[0])
        if which[0] < 1 or len(top) < which[0]:
            raise UserError(f"--pair {which[0]}: the run lists {len(top)} pairs; give a rank from 1, or two doc ids")
        row = top.iloc[which[0] - 1]
        doc_a, doc_b = int(row["doc_a"]), int(row["doc_b"])
    else:
        doc_a, doc_b = sorted(which)
    found = run.frame("pairs", filters=[("doc_a", "=", doc_a), ("doc_b", "=", doc_b)])
    if found.empty:
        raise UserError(f"--pair {doc_a} {doc_b}: no such content pair in {run.out} (see 'webwinnow show --out ...')")
    pair = found.iloc[0]
    spans = run.frame("passages", filters=[("doc_a", "=", doc_a), ("doc_b", "=", doc_b)])
    template = {(int(s.start_a), int(s.start_b)): s.boilerplate for s in spans.itertuples(index=False)}
    passages = pair_passages(run, doc_a, doc_b, n)
    width = _width()
    half = (width - 3) // 2
    lines = [
        f"A {visible(str(pair['url_a']))}",
        f"B {visible(str(pair['url_b']))}",
        f"{int(pair['passages']):,} passages; content {int(pair['content_chars_a']):,} / {int(pair['content_chars_b']):,} "
        f"units outside template; likely source: {pair['source']} (by {pair['source_basis']})",
    ]
    for i, p in enumerate(passages, 1):
        share = template.get((p.start_a, p.start_b))
        said = f"{share:.0%} of its fingerprints are template" if share == share and share is not None else "no fingerprint"
        lines += ["", f"passage {i}: {p.length:,} units, A[{p.start_a}:{p.end_a}] B[{p.start_b}:{p.end_b}]; {said}"]
        left = textwrap.wrap(visible(" ".join(p.text_a.split())), half) or [""]
        right = textwrap.wrap(visible(" ".join(p.text_b.split())), half) or [""]
        for k in range(max(len(left), len(right))):
            a = left[k] if k < len(left) else ""
            b = right[k] if k < len(right) else ""
            lines.append(f"{a:<{half}} | {b}")
    if len(passages) < int(pair["passages"]):
        lines += ["", f"the {len(passages)} longest of {int(pair['passages']):,} passages (--passages N for more)"]
    return lines


def command(args: argparse.Namespace) -> int:
    from ..explore.run import RunOutput

    try:
        if args.columns is not None:
            lines = _columns(args.columns or None)
        elif not args.out:
            raise UserError("show needs --out OUT: the folder of a run (or --columns for what the tables hold)")
        else:
            run = RunOutput(args.out)
            lines = _pair(run, args.pair, args.passages) if args.pair else _top(run, args.top)
    except (UserError, ValueError) as exc:
        print(f"webwinnow: error: {exc}", file=sys.stderr)
        return 2
    try:
        print("\n".join(lines))
    except BrokenPipeError:  # `webwinnow show ... | head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - what Python flushes at exit
    return 0
