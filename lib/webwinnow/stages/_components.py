"""Connected components of a document graph in Spark: the alternating large-star / small-star
algorithm (Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii, "Connected Components in
MapReduce and Beyond", SoCC 2014), the one NeMo Curator and text-dedup use at web scale.

Every round is a few joins and aggregations of the edge list: no machine holds more than a
node's neighbourhood, and the driver holds nothing but counts. Both steps only ever link a node
to a smaller one, so the labels converge to each component's smallest doc_id: deterministic
(never monotonically_increasing_id, which gives wrong components under AQE). The number of rounds
grows with the logarithm of the components' diameter (a chain of 10,000 documents: 16); each
round's edges are checkpointed locally so the plan does not grow with the rounds.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

#: A graph whose components take more rounds than this is refused (a chain of 10^9 takes ~60).
MAX_ROUNDS = 100


class NotConverged(RuntimeError):
    """The rounds ran out before every component was a star."""


def _large_star(edges: DataFrame) -> DataFrame:
    """Each node's larger neighbours are linked to the smallest node of its neighbourhood."""
    both = edges.select(F.col("a").alias("u"), F.col("b").alias("v")).unionByName(
        edges.select(F.col("b").alias("u"), F.col("a").alias("v"))
    )
    least = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return both.filter(F.col("v") > F.col("u")).join(least, "u").select(F.col("v").alias("a"), F.col("m").alias("b")).distinct()


def _small_star(edges: DataFrame) -> DataFrame:
    """Each node and its smaller neighbours are linked to the smallest of them."""
    down = edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v"))
    least = down.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    linked = down.join(least, "u").select(F.col("v").alias("a"), F.col("m").alias("b"))
    return (
        linked.unionByName(least.select(F.col("u").alias("a"), F.col("m").alias("b"))).filter(F.col("a") != F.col("b")).distinct()
    )


def _stars(edges: DataFrame) -> bool:
    """Whether every edge (a > b) links a node to its root: each a on one edge only, and no b the
    a of another edge. Both steps then leave the edges as they are, and each star's root is its
    component's smallest node."""
    roots = edges.select(F.col("a").alias("b")).distinct()
    if edges.join(roots, "b", "left_semi").limit(1).count():
        return False
    return not edges.groupBy("a").count().filter(F.col("count") > 1).limit(1).count()


def spark_components(edges: DataFrame, max_rounds: int = MAX_ROUNDS) -> tuple[DataFrame, int]:
    """(doc_id, cluster_id) for every document on an edge of `edges` (columns a, b), cluster_id
    the smallest doc_id of its component; and the rounds it took. Self-loops and repeated edges
    are allowed. Raises NotConverged past max_rounds."""
    edges = edges.select("a", "b").localCheckpoint()  # read once, however it was made
    current = (
        edges.select(F.greatest("a", "b").alias("a"), F.least("a", "b").alias("b")).filter(F.col("a") != F.col("b")).distinct()
    )
    nodes = edges.select(F.col("a").alias("doc_id")).unionByName(edges.select(F.col("b").alias("doc_id"))).distinct()
    current = current.localCheckpoint()
    rounds = 0
    while not _stars(current):
        if rounds == max_rounds:
            raise NotConverged(f"the clusters' components did not converge in {max_rounds} rounds")
        rounds += 1
        current = _small_star(_large_star(current)).localCheckpoint()
    # after the last round every non-root points at its root; a root is on no edge's left
    labels = nodes.join(current.select(F.col("a").alias("doc_id"), F.col("b").alias("cluster_id")), "doc_id", "left")
    return labels.select("doc_id", F.coalesce("cluster_id", "doc_id").alias("cluster_id")), rounds
