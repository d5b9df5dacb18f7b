"""A static, self-contained HTML report of a run: open ``index.html`` in a browser.

>>> from webwinnow.htmlreport import write_report, PairView, HashView
>>> index = write_report("out/report", stats=stats, pairs=pairs, boilerplate=hashes,
...                      rank_freq=runs, fit=powerlaw.fit_power_law(runs))

Pages: ``index.html`` (run summary and the first page of top pairs), ``pairs-002.html`` ...,
``pair/<doc_a>-<doc_b>.html`` (the two texts side by side, copied passages marked),
``cross-host.html`` (pairs of pages on different hosts), ``clusters.html``, ``failures.html``
(failed files and records), ``dedup.html`` (what dedup removed),
``boilerplate.html`` (most frequent fingerprints, ``rank_frequency.png``), ``figures.html``
(the PNGs of ``figures/``, drawn by the caller), ``stats.json``.
No JavaScript; a Content-Security-Policy on every page; every crawl string HTML-escaped.
"""

from .highlight import MAX_TEXT_CHARS
from .model import ClusterView, FigureEntry, HashView, PairView, RunPages, merge_spans
from .writer import write_report

__all__ = ["write_report", "PairView", "HashView", "FigureEntry", "ClusterView", "RunPages", "merge_spans", "MAX_TEXT_CHARS"]
