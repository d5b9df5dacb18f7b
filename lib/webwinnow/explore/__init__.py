"""A run's output explored on one machine (pyarrow, numpy, matplotlib; no Spark).

The logic behind the notebooks in notebooks/ and the report's figures page:

>>> from webwinnow.explore import RunOutput, fingerprint_curve, max_df_sweep
>>> run = RunOutput("out/sample")          # a local folder, or an s3:// gs:// hdfs:// output
>>> fingerprint_curve(run).fit["slope"]

- run: RunOutput, reading tables with column projection and row filters, document samples;
- frequencies: rank–frequency curves (fingerprints; all k-grams of a sample), the fit's
  quality, boilerplate per host, the max_df sweep;
- density: density against w, robust against standard winnowing, the paper's table;
- copies: top pairs, clusters, passages side by side (escaped);
- figures: the figures, drawn with matplotlib's object API, and write_figures for the report.
"""

from ..crawl.hosts import host_of
from .copies import (
    cluster_table,
    escaped_html,
    pair_passages,
    pair_sample,
    passage_length_counts,
    passage_lengths,
    side_by_side_html,
    top_pairs,
)
from .density import density_by_w, paper_frame, paper_table, robust_vs_standard
from .frequencies import (
    Curve,
    FitQuality,
    MaxDfSweep,
    boilerplate_by_host,
    fingerprint_curve,
    fit_quality,
    max_df_sweep,
    pair_thresholds,
    sample_curves,
)
from .run import RunOutput, run_folder

__all__ = [
    "RunOutput",
    "run_folder",
    "host_of",
    "Curve",
    "FitQuality",
    "MaxDfSweep",
    "fingerprint_curve",
    "sample_curves",
    "fit_quality",
    "boilerplate_by_host",
    "max_df_sweep",
    "pair_thresholds",
    "density_by_w",
    "robust_vs_standard",
    "paper_table",
    "paper_frame",
    "top_pairs",
    "cluster_table",
    "passage_lengths",
    "passage_length_counts",
    "pair_sample",
    "pair_passages",
    "side_by_side_html",
    "escaped_html",
]
