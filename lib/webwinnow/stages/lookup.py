"""Stage (check only): the new documents' `fingerprints` + an index → the indexed documents to
compare them with: `indexed_documents`, `indexed_doc_stats`, `indexed_fingerprints`, and the
check's boilerplate, `index_boilerplate`.

Noplag's query, in three lookups that each read only the index's row groups holding the keys
(webwinnow.index.sortedfiles), so the cost follows the new input and what it matches, not the
index's size:

1. the document frequency in the index of every hash of the new fingerprints (hash_df);
   a hash's frequency in the check is that plus its frequency among the new documents, and
   above max_df it is boilerplate, exactly as `run` over the index and the new input together
   would say;
2. the indexed documents holding a hash below the cap (fingerprints), and their texts
   (documents), which are fingerprinted again here (the same settings as the index: the same
   fingerprints);
3. the frequency of those documents' other hashes (hash_df), so that their template text is
   marked as `run` would mark it.

The candidates stage then pairs every new document with the indexed ones (never two indexed ones),
and the later stages read the indexed documents beside the new ones.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.boilerplate import auto_max_df
from ..outputs.tables import write_table
from . import StageContext, _indexing
from ._frames import read_table, spark_schema
from ._session import cache_level
from .candidates import ok_documents
from .fingerprint import fingerprint_arrow


def run(ctx: StageContext) -> dict:
    spark, cfg, out, idx, manifest = ctx.spark, ctx.cfg, ctx.out, ctx.index, ctx.manifest
    s = manifest.settings
    query_docs = ok_documents(spark, out)
    max_df = cfg.pairing.max_df or auto_max_df(
        manifest.documents + query_docs, list(manifest.df_histogram), cfg.pairing.pair_budget
    )
    new = read_table(spark, out, "fingerprints")
    held = []
    reads: dict = {}  # what each lookup read of the index
    second: dict = {}
    try:
        query = new.groupBy("hash").agg(F.countDistinct("doc_id").alias("query_docs")).persist(cache_level(spark))
        held.append(query)
        in_index = (
            _indexing.lookup_keys(spark, idx, manifest, "hash_df", query.select("hash"), reads=reads)
            .groupBy("hash")
            .agg(F.sum("docs").alias("index_docs"))
        )
        freq = (
            query.join(in_index, "hash", "left")
            .fillna(0, subset=["index_docs"])
            .withColumn("docs", F.col("index_docs") + F.col("query_docs"))
            .persist(cache_level(spark))
        )
        held.append(freq)
        shared = freq.filter((F.col("index_docs") > 0) & (F.col("docs") <= max_df)).select("hash")
        matched = (
            _indexing.lookup_keys(spark, idx, manifest, "fingerprints", shared, ["hash", "doc_id"], reads=reads)
            .select("doc_id")
            .distinct()
        )
        found = _indexing.lookup_keys(spark, idx, manifest, "documents", matched, reads=reads).persist(
            cache_level(spark)
        )  # two tables from one read of the texts
        held.append(found)
        meta = {
            "index": idx,
            "max_df": max_df,
            "max_df_auto": not cfg.pairing.max_df,
            "self_pairs": cfg.check.self_pairs,
            **manifest.identity(),
        }
        write_table(found.select(*schemas.DOCUMENTS.names), out, "indexed_documents", cfg, "lookup", meta)
        write_table(found.select(*schemas.DOC_STATS.names), out, "indexed_doc_stats", cfg, "lookup", meta)

        def kernel(batches):
            for batch in batches:
                yield fingerprint_arrow(batch, s.k, s.w, s.robust, s.mod_p, s.unit, s.lexer or "c")

        rows = (
            read_table(spark, out, "indexed_documents")
            .select("doc_id", "text")
            .mapInArrow(kernel, spark_schema(schemas.FINGERPRINT_ROWS))
        )
        write_table(
            rows.filter(F.col("pos") >= 0).select("doc_id", "hash", "pos"), out, "indexed_fingerprints", cfg, "lookup", meta
        )
        _check_same_fingerprints(spark, out)
        theirs = (
            read_table(spark, out, "indexed_fingerprints")
            .select("hash")
            .distinct()
            .join(freq.select("hash"), "hash", "left_anti")
        )
        their_freq = (
            _indexing.lookup_keys(spark, idx, manifest, "hash_df", theirs, reads=second)
            .groupBy("hash")
            .agg(F.sum("docs").alias("index_docs"))
            .select("hash", F.col("index_docs").alias("docs"), "index_docs", F.lit(0).cast("long").alias("query_docs"))
        )
        boilerplate = freq.select(*schemas.INDEX_BOILERPLATE.names).unionByName(their_freq).filter(F.col("docs") > max_df)
        write_table(boilerplate, out, "index_boilerplate", cfg, "lookup", meta)
        counts = freq.agg(
            F.count(F.lit(1)).alias("hashes"),
            F.sum(((F.col("index_docs") > 0) & (F.col("docs") <= max_df)).cast("long")).alias("shared"),
            F.sum((F.col("docs") > max_df).cast("long")).alias("boilerplate"),
        ).first()
    finally:
        for frame in held:
            frame.unpersist()
    from ..outputs.tables import row_count

    return {
        **meta,
        "index_documents": manifest.documents,
        "index_segments": len(manifest.segments),
        "query_documents": query_docs,
        "query_hashes": counts["hashes"] or 0,
        "shared_hashes": counts["shared"] or 0,
        "boilerplate_hashes": row_count(out, "index_boilerplate"),
        "query_boilerplate_hashes": counts["boilerplate"] or 0,
        "indexed_documents": row_count(out, "indexed_documents"),
        "index_reads": {**reads, **({"hash_df_of_indexed": second["hash_df"]} if second else {})},
    }


def _check_same_fingerprints(spark: SparkSession, out: str) -> None:
    """The indexed documents fingerprinted again must give what the index holds (their counts):
    else the index was made by another webwinnow or is damaged."""
    counts = read_table(spark, out, "indexed_fingerprints").groupBy("doc_id").agg(F.count(F.lit(1)).alias("now"))
    differ = (
        read_table(spark, out, "indexed_doc_stats")
        .join(counts, "doc_id", "left")
        .fillna(0, subset=["now"])
        .filter(F.col("now") != F.col("fingerprints"))
        .limit(1)
        .collect()
    )
    if differ:
        from ..errors import UserError

        raise UserError(
            f"indexed document {differ[0]['doc_id']} has {differ[0]['now']} fingerprints now and "
            f"{differ[0]['fingerprints']} in the index: the index was made by another version of webwinnow "
            "or is damaged; rebuild it"
        )
