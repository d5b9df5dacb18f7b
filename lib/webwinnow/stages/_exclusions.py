"""Known template and licence text to leave out of pairing (MOSS's base files).

Every k-gram hash of the given texts is excluded, not only their winnowed fingerprints: winnowing
is local, so a document that embeds the template may select different k-grams of it than the
template selects on its own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import ExtractConfig
from ..core.distinct import distinct
from ..core.winnowing import kgram_hashes
from ..crawl.inputs import is_crawl_file
from ..crawl.records import file_rows
from ..text.html2text import html_code, html_to_text

_HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def exclusion_texts(paths: list[str], extract_cfg: ExtractConfig, code: bool = False) -> list[str]:
    """The texts of crawl files' ok documents, HTML files' text, or plain text files as they are
    (code=True: the code unit's, the code blocks of crawl and HTML files)."""
    texts: list[str] = []
    for spec in paths:
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"--exclude {spec}: no such file (give WARC/ARC, HTML or text files)")
        if is_crawl_file(path.name):
            texts.extend(
                r["text"]
                for r in file_rows(str(path.resolve()), extract_cfg, code)
                if r.get("table") == "documents" and r.get("status") == "ok"
            )
        else:
            raw = path.read_text(encoding="utf-8", errors="replace")
            html = path.name.lower().endswith(_HTML_SUFFIXES)
            texts.append((html_code(raw) if code else html_to_text(raw)) if html else raw)
    return texts


def exclusion_hashes(paths: list[str], k: int, extract_cfg: ExtractConfig, unit: str = "char", lexer: str = "c") -> np.ndarray:
    """Sorted unique k-gram hashes (of k units) of every exclusion text."""
    parts = [kgram_hashes(text, k, unit, lexer)[0] for text in exclusion_texts(paths, extract_cfg, unit == "code")]
    return distinct(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
