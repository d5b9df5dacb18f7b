"""A URL's host, the one way every stage and page reads it."""

from __future__ import annotations

from urllib.parse import urlsplit


def host_of(url: str | None) -> str | None:
    """The URL's host, lower-cased, as Python's urlsplit reads it; None when it has none.

    Not Spark's parse_url (java.net.URI): that rejects hosts with '_' or non-ASCII letters and
    URLs with a space or '|' in them, which crawls are full of."""
    if not url:
        return None
    try:
        return urlsplit(url).hostname or None
    except ValueError:
        return None
