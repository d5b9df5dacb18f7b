"""The report's pair filters computed on the driver, against Spark's definition written out."""

from __future__ import annotations

import pyarrow as pa

from webwinnow.crawl.hosts import host_of
from webwinnow.stages._reportrows import _cross_host


def test_cross_host_pairs_are_those_whose_hosts_differ_or_are_missing():
    """Spark's not(coalesce(host_a = host_b, false)): a page without a host (no URL, an empty
    one, one urlsplit cannot read) makes its pairs cross-host; URLs repeat across chunks."""
    urls = [
        "http://a.example/x",
        "https://A.example/y",
        "http://b.example/",
        None,
        "",
        "http://[bad/",
        "mailto:someone",
        "http://a.example:8080/z",
    ]
    pairs = [(a, b) for a in urls for b in urls]
    table = pa.table(
        {
            "url_a": pa.chunked_array([[a for a, _ in pairs[:20]], [a for a, _ in pairs[20:]]], pa.string()),
            "url_b": pa.chunked_array([[b for _, b in pairs[:20]], [b for _, b in pairs[20:]]], pa.string()),
        }
    )
    expected = [not (host_of(a) is not None and host_of(b) is not None and host_of(a) == host_of(b)) for a, b in pairs]
    assert _cross_host(table).to_pylist() == expected
    assert expected.count(False) == 9 + 1  # a.example's three URLs with each other; mailto has none
    empty = pa.table({"url_a": pa.chunked_array([], pa.string()), "url_b": pa.chunked_array([], pa.string())})
    assert _cross_host(empty).to_pylist() == []
    # the hosts found carried from one table to the next: the same answers, each URL once
    known: dict = {}
    assert _cross_host(table, known).to_pylist() == expected
    assert _cross_host(table.slice(20), known).to_pylist() == expected[20:]
    assert known == {u: host_of(u) for u in urls if u is not None}
