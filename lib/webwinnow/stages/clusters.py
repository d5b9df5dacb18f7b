"""Stage: `pairs` → `clusters`: documents linked by pairs with resemblance >= the threshold.

The linking edges are collected to the driver and joined by union–find (webwinnow.clusters):
near-duplicate links are a small part of all pairs, and one machine handles 10^8 of them.
Documents in no such pair are in no cluster (a singleton is not a near-duplicate).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.components import components
from ..config import RunConfig
from ..tables import write_arrow
from ._frames import read_table


def run(spark: SparkSession, cfg: RunConfig, out: str) -> dict:
    threshold = float(cfg.pairs.cluster_resemblance)
    edges = (
        read_table(spark, out, "pairs")
        .filter(F.col("resemblance") >= threshold)
        .select("doc_a", "doc_b")
        .toArrow()
    )
    doc, cluster, size = components(edges.column("doc_a").to_numpy(), edges.column("doc_b").to_numpy())
    table = pa.table({"doc_id": doc, "cluster_id": cluster, "cluster_size": size}, schema=schemas.CLUSTERS)
    # The driver holds the components already: written from here, no Spark job.
    write_arrow(table, out, "clusters", cfg, "clusters", {"cluster_resemblance": threshold})
    stats = {
        "cluster_resemblance": threshold,
        "clusters": int(len(set(cluster.tolist()))),
        "clustered_documents": int(len(doc)),
        "largest": int(size.max()) if len(size) else 0,
    }
    return stats
