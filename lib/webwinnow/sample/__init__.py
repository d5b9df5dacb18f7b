"""A deterministic sample crawl with planted copies: the project's own test and demo input.

``write_sample(out_dir)`` writes ``sample-00000.warc.gz`` ... (one gzip member per record, as
crawlers write them) and ``planted.json``, the ground truth of every copy planted in the crawl.
Every byte depends only on the arguments: record ids come from the seeded RNG, dates are fixed,
gzip headers carry no time, and Python's salted ``hash()`` is never used.

What is in the crawl (all text is generated here from small vocabularies, nothing is copied):

* HTML pages on two site templates, a news site (``news.sample.test``) and a documentation wiki
  (``docs.sample.test``), plus a small blog (``blog.sample.test``). Each template repeats its header,
  navigation menu, sidebar and footer on every page (boilerplate), and every page has ``<script>``
  and ``<style>`` blocks holding the sentinels ``SCRIPT_SENTINEL`` / ``STYLE_SENTINEL`` (they must
  never reach extracted text), headings, paragraphs, lists, tables and inline markup.
* Planted copies, listed in ``planted.json``:
  ``passage`` (whole sentences copied into another page, with other markup, whitespace and in two
  cases other letter case; four length classes measured in normalized characters),
  ``mirror_exact`` / ``mirror_edited`` (a page's ``<main>`` published again under another URL, as is
  or with about a tenth of its sentences changed or inserted) and ``version`` (the same URL fetched
  twice, with small edits). The visible text of a page's copied content is always inside its one
  ``<main>`` element; site templates sit outside it.
* Records that exercise skip accounting: a ``warcinfo`` per file, a ``request`` before every
  response, non-HTML responses (PNG, PDF, CSS, JSON, robots.txt), two ``revisit`` records, a 404,
  a 301 and a ``metadata`` record.
* Transport and charset cases: a chunked body kept chunked, a ``Content-Encoding: gzip`` body, an
  ISO-8859-1 page declared only in the HTTP header, a windows-1252 page declared only by
  ``<meta charset>``, an undeclared UTF-8 page, and Greek, Cyrillic and Japanese pages (the Greek
  one is mirrored). ``planted.json["special"]`` names their URLs.

Run ``python -m webwinnow.sample OUT_DIR [--pages N] [--seed S] [--files F]``.
"""

from __future__ import annotations

from .constants import LENGTH_CLASSES, MIN_PAGES, SCRIPT_SENTINEL, STYLE_SENTINEL, normalize_text
from .warcs import clear_old_sample, main, sample_folder, write_sample

__all__ = [
    "LENGTH_CLASSES",
    "MIN_PAGES",
    "SCRIPT_SENTINEL",
    "STYLE_SENTINEL",
    "clear_old_sample",
    "main",
    "normalize_text",
    "sample_folder",
    "write_sample",
]
