"""Fixed parameters of the sample crawl: sentinels, length classes, hosts, times; the test normalization."""

from __future__ import annotations

from datetime import datetime

SCRIPT_SENTINEL = "wwScriptSentinelQx"
STYLE_SENTINEL = "wwStyleSentinelQx"

#: Passage length classes, in normalized characters (inclusive bounds).
LENGTH_CLASSES = {
    "short": (20, 45),
    "threshold": (149, 200),
    "medium": (300, 800),
    "long": (1500, 4000),
}
# passages planted per class at the default 300 pages (scaled up for larger crawls, never down)
_CLASS_COUNTS = {"short": 6, "threshold": 8, "medium": 7, "long": 5}
_THRESHOLD_TARGETS = [149, 150, 151, 160, 175, 190, 200, 155]
_SHORT_TARGETS = [20, 25, 30, 35, 40, 45]

MIN_PAGES = 60
_BASE_TIME = datetime(2003, 5, 5, 0, 0, 0)
_FILE_WINDOW = 7 * 24 * 3600  # each WARC file covers one week of fetches

HOSTS = {
    "news": "news.sample.test",
    "docs": "docs.sample.test",
    "blog": "blog.sample.test",
    "mirror": "mirror.sample.test",
}
_IPS = {
    "news.sample.test": "192.0.2.10",
    "www.news.sample.test": "192.0.2.10",
    "docs.sample.test": "192.0.2.20",
    "blog.sample.test": "198.51.100.7",
    "mirror.sample.test": "203.0.113.99",
}


def normalize_text(text: str) -> str:
    """Casefold and keep only letters and digits (how planted lengths are measured)."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _nlen(text: str) -> int:
    return len(normalize_text(text))


# --------------------------------------------------------------------------------------------
# pseudo-English
