"""What the report collects from the tables: the top pairs, the detail pages' texts and passages,
the most frequent hashes, and the rows of the clusters, failures, dedup and check pages.

Every query reads its table on the driver with pyarrow when the table holds at most DRIVER_ROWS
rows (from its Parquet footers), one row group at a time keeping the best rows so far, and in
Spark otherwise: the same rows either way, in the same order (Spark's: ascending keys put nulls
first, descending ones last, NaN above every number). On the runs most users make, the report
then starts no Spark job and no Python worker: on the sample those jobs cost more CPU than the
passages stage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from ..core.distinct import distinct
from ..crawl.hosts import host_of
from ..htmlreport import ClusterView, HashView, RunPages
from ..outputs.tables import read_doc_rows, read_row_groups, row_count, table_meta, table_stats
from ..schemas import TABLE_SCHEMAS
from . import table_is_current
from ._frames import read_documents, read_table, url_host

#: A table of at most this many rows is read on the driver (row group by row group, a few
#: hundred MB at most); a larger one in Spark.
DRIVER_ROWS = 2_000_000

#: The pages' times and WARC coordinates a listed pair carries of each side (<column>_a, _b).
PAIR_DOC_COLUMNS = ("fetch_time", "last_modified", "http_date", "warc_file", "warc_offset")

#: A sort order: (column, descending).
Order = Sequence[tuple[str, bool]]


def on_driver(out: str, table: str) -> bool:
    return row_count(out, table) <= DRIVER_ROWS


def _sort_indices(table: pa.Table, order: Order) -> pa.Array:
    """The rows' order as Spark's orderBy gives it: an ascending key puts nulls first, a
    descending one last; NaN sorts above every number."""
    keys, columns = [], {}  # type: tuple[list, dict]
    for i, (name, desc) in enumerate(order):
        column = table.column(name)
        direction = "descending" if desc else "ascending"
        columns[f"v{i}"] = pc.is_valid(column)  # ascending: False (null) first; descending: True first
        keys.append((f"v{i}", direction))
        if pa.types.is_floating(column.type):
            columns[f"n{i}"] = pc.fill_null(pc.is_nan(column), False)
            keys.append((f"n{i}", direction))
        columns[f"k{i}"] = column
        keys.append((f"k{i}", direction))
    return pc.sort_indices(pa.table(columns), sort_keys=keys)


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def top_rows(
    out: str,
    table: str,
    columns: Sequence[str],
    order: Order,
    limit: int | None,
    derive: Callable[[pa.Table], pa.Table] | None = None,
    where: Callable[[pa.Table], pa.Array] | None = None,
) -> tuple[pa.Table, int]:
    """The first `limit` rows (None: all) of a table in `order`, read on the driver one row group
    at a time, of the rows `where` keeps (after `derive` added its columns); and how many it keeps."""
    best: pa.Table | None = None
    kept = 0
    for part in read_row_groups(out, table, list(columns)):
        part = part.cast(_nullable(part.schema))
        if derive is not None:
            part = derive(part)
        if where is not None:
            part = part.filter(where(part))
        kept += part.num_rows
        best = part if best is None else pa.concat_tables([best, part.cast(best.schema)])
        if limit is not None and best.num_rows > limit:
            best = best.take(_sort_indices(best, order)[:limit])
    if best is None:
        best = TABLE_SCHEMAS[table].empty_table().select(list(columns))
        if derive is not None:
            best = derive(best)
    return (best.take(_sort_indices(best, order)) if order else best), kept


def _documents(spark: SparkSession, out: str, doc_ids, columns: Sequence[str]) -> dict[int, dict]:
    """doc_id -> the columns of that document, from documents (and a check's indexed documents).

    A large table is read in Spark: the ids are hashes of where each record is, so every row
    group of it holds ids around the wanted ones, and the driver would read the doc_id column of
    every row group (a snapshot's: billions of them) to find a few hundred documents."""
    found: dict[int, dict] = {}
    ids = sorted({int(d) for d in doc_ids})
    tables = ["documents", *(["indexed_documents"] if table_meta(out, "indexed_documents") is not None else [])]
    for table in tables:
        if not ids:
            break
        if on_driver(out, table):
            rows = (row for part in read_doc_rows(out, table, ids, ["doc_id", *columns]) for row in part.to_pylist())
        else:
            wanted = spark.createDataFrame([(d,) for d in ids], "doc_id long")
            frame = read_table(spark, out, table).join(F.broadcast(wanted), "doc_id").select("doc_id", *columns)
            rows = (r.asDict() for r in frame.collect())
        for row in rows:
            found.setdefault(row["doc_id"], row)
    return found


def _pair_keys(table: pa.Table) -> pa.Table:
    """_c and _s of PAIR_ORDER as Spark's least and greatest make them: nulls skipped, and a NaN
    share the greater (Spark orders NaN above every number)."""
    a, b = table.column("content_share_a"), table.column("content_share_b")
    nan = pc.or_(pc.fill_null(pc.is_nan(a), False), pc.fill_null(pc.is_nan(b), False))
    greatest = pc.if_else(nan, pa.scalar(float("nan")), pc.max_element_wise(a, b))
    least = pc.min_element_wise(table.column("content_chars_a"), table.column("content_chars_b"))
    return table.append_column("_c", least).append_column("_s", greatest)


#: The top pairs' order: copied content (characters outside template, the smaller side), then the
#: larger share of a page, then the pair.
PAIR_ORDER: Order = (("_c", True), ("_s", True), ("doc_a", False), ("doc_b", False))


def _cross_host(table: pa.Table, known: dict[str, str | None] | None = None) -> pa.Array:
    """Pairs whose pages are on different hosts, or where a page has none (Spark's
    not(coalesce(host_a = host_b, false))). Each distinct URL's host is found once: a pair
    table names each page in many pairs (docs corpus: 73,000 URLs, 13,000 distinct); `known`,
    URL -> host, carries them from one row group (and side) to the next."""
    known = {} if known is None else known

    def hosts(urls: pa.ChunkedArray) -> pa.Array:
        coded = pc.dictionary_encode(urls.combine_chunks())
        found = [known[u] if u in known else known.setdefault(u, host_of(u)) for u in coded.dictionary.to_pylist()]
        return pa.array(found, pa.string()).take(coded.indices)

    same = pc.fill_null(pc.equal(hosts(table.column("url_a")), hosts(table.column("url_b"))), False)
    return pc.invert(same)


def top_pairs(spark: SparkSession, out: str, limit: int, cross_host: bool = False) -> tuple[list[dict], int]:
    """The pairs the report lists (with their pages' fetch times and WARC coordinates), best
    first (PAIR_ORDER); and how many such pairs there are."""
    if on_driver(out, "pairs"):
        known: dict[str, str | None] = {}  # each URL's host, found once over the row groups
        top, total = top_rows(
            out,
            "pairs",
            TABLE_SCHEMAS["pairs"].names,
            PAIR_ORDER,
            limit,
            _pair_keys,
            (lambda table: _cross_host(table, known)) if cross_host else None,
        )
        rows = top.to_pylist()
        docs = _documents(spark, out, [r[f"doc_{x}"] for r in rows for x in "ab"], PAIR_DOC_COLUMNS)
        for r in rows:
            for x in "ab":
                doc = docs.get(r[f"doc_{x}"], {})
                r.update({f"{c}_{x}": doc.get(c) for c in PAIR_DOC_COLUMNS})
        return rows, total
    pairs = read_table(spark, out, "pairs")
    if cross_host:
        pairs = pairs.filter(~F.coalesce(url_host(F.col("url_a")) == url_host(F.col("url_b")), F.lit(False)))
    total = pairs.count()
    docs = read_documents(spark, out).select("doc_id", *PAIR_DOC_COLUMNS)

    def side(x: str):
        return docs.select(*(F.col(c).alias(f"{c}_{x}" if c != "doc_id" else f"doc_{x}") for c in docs.columns))

    order = [F.desc(c) if desc else F.col(c) for c, desc in PAIR_ORDER]
    top = (
        pairs.withColumn("_c", F.least("content_chars_a", "content_chars_b"))
        .withColumn("_s", F.greatest("content_share_a", "content_share_b"))
        .orderBy(*order)
        .limit(limit)
        .join(side("a"), "doc_a", "left")
        .join(side("b"), "doc_b", "left")
        .orderBy(*order)
        .collect()
    )
    return [r.asDict() for r in top], total


def pair_details(spark: SparkSession, out: str, keys: set[tuple[int, int]]) -> tuple[dict, dict, set]:
    """For the pairs given: their pages' texts (doc_id -> text), their passages ((doc_a, doc_b) ->
    [(start_a, end_a, start_b, end_b, length)], sorted) and which of them hit a cap."""
    spans: dict[tuple[int, int], list] = defaultdict(list)
    capped: set[tuple[int, int]] = set()
    if not keys:
        return {}, spans, capped
    columns = ["doc_a", "doc_b", "start_a", "end_a", "start_b", "end_b", "length", "capped"]
    if on_driver(out, "passages"):
        wanted_a = pa.array(sorted({a for a, _ in keys}), pa.int64())
        wanted_b = pa.array(sorted({b for _, b in keys}), pa.int64())
        found, _ = top_rows(
            out,
            "passages",
            columns,
            (),
            None,
            where=lambda t: pc.and_(pc.is_in(t.column("doc_a"), wanted_a), pc.is_in(t.column("doc_b"), wanted_b)),
        )
        # a column at a time, not a dict per row (the docs corpus's 200 pairs have 56,000 passages)
        rows: Iterable[tuple] = zip(*(found.column(c).to_pylist() for c in columns), strict=True)
    else:
        wanted = spark.createDataFrame(sorted(keys), "doc_a long, doc_b long")
        joined = read_table(spark, out, "passages").join(F.broadcast(wanted), ["doc_a", "doc_b"]).collect()
        rows = (tuple(r[c] for c in columns) for r in joined)
    for doc_a, doc_b, start_a, end_a, start_b, end_b, length, was_capped in rows:
        key = (doc_a, doc_b)
        if key not in keys:
            continue
        spans[key].append((start_a, end_a, start_b, end_b, length))
        if was_capped:
            capped.add(key)
    for found in spans.values():
        found.sort()
    ids = sorted({d for key in keys for d in key})
    texts = {d: row["text"] for d, row in _documents(spark, out, ids, ["text"]).items()}
    return texts, spans, capped


#: The boilerplate page's order: the most documents, then the most occurrences.
HASH_ORDER: Order = (("docs", True), ("occurrences", True), ("hash", False))


def top_hashes(spark: SparkSession, out: str, limit: int) -> list[HashView]:
    columns = ["hash", "docs", "occurrences", "hosts", "snippet"]
    if on_driver(out, "hash_freq"):
        rows = top_rows(out, "hash_freq", columns, HASH_ORDER, limit)[0].to_pylist()
    else:
        order = [F.desc(c) if desc else F.col(c) for c, desc in HASH_ORDER]
        rows = [r.asDict() for r in read_table(spark, out, "hash_freq").orderBy(*order).limit(limit).collect()]
    return [HashView(**{c: r[c] for c in columns}) for r in rows]


def _failures(spark: SparkSession, out: str) -> tuple[tuple, tuple]:
    """The failed files (file, reason, records_seen, parsed) by name, and the records' outcomes
    that did not become text (status, reason, count), the most frequent first."""
    if on_driver(out, "ledger"):
        columns = ["kind", "file", "status", "reason", "records_seen", "parsed"]
        failed_rows = top_rows(
            out,
            "ledger",
            columns,
            (("file", False),),
            None,
            where=lambda t: pc.and_kleene(pc.equal(t.column("kind"), "file"), pc.equal(t.column("status"), "failed")),
        )[0].to_pylist()
        records, _ = top_rows(
            out, "ledger", ["kind", "status", "reason"], (), None, where=lambda t: pc.equal(t.column("kind"), "record")
        )
        grouped = records.group_by(["status", "reason"], use_threads=False).aggregate([([], "count_all")])
        counted = pa.table({"status": grouped["status"], "reason": grouped["reason"], "count": grouped["count_all"]})
        outcome_rows = counted.take(_sort_indices(counted, (("count", True), ("status", False), ("reason", False)))).to_pylist()
    else:
        ledger = read_table(spark, out, "ledger")
        failed_rows = [
            r.asDict() for r in ledger.filter((F.col("kind") == "file") & (F.col("status") == "failed")).orderBy("file").collect()
        ]
        outcome_rows = [
            r.asDict()
            for r in ledger.filter(F.col("kind") == "record")
            .groupBy("status", "reason")
            .count()
            .orderBy(F.desc("count"), "status", "reason")
            .collect()
        ]
    failed = tuple((r["file"], r["reason"], r["records_seen"], r["parsed"]) for r in failed_rows)
    outcomes = tuple((r["status"], r["reason"], r["count"]) for r in outcome_rows)
    return failed, outcomes


def _clusters(spark: SparkSession, out: str, shown: int, members_shown: int) -> tuple[tuple, int]:
    """The `shown` largest clusters, each with its first members_shown members by doc_id (and
    its source's URL); and how many clusters there are. A cluster of a crawl's exact duplicates
    can hold millions of documents, and the page shows a few."""
    if on_driver(out, "clusters"):
        table, _ = top_rows(out, "clusters", TABLE_SCHEMAS["clusters"].names, (("cluster_id", False), ("doc_id", False)), None)
        cluster = table.column("cluster_id").to_numpy(zero_copy_only=False)
        total = int(len(distinct(cluster)))
        grouped = table.group_by("cluster_id", use_threads=False).aggregate(
            [("cluster_size", "first"), ("identical", "max"), ("source_doc", "first")]
        )
        per = pa.table(
            {
                "cluster_id": grouped["cluster_id"],
                "size": grouped["cluster_size_first"],
                "identical": grouped["identical_max"],
                "source_doc": grouped["source_doc_first"],
            }
        )
        biggest = per.take(_sort_indices(per, (("size", True), ("cluster_id", False)))[:shown]).to_pylist()
        # each row's rank by doc_id within its cluster (the rows are sorted by cluster, then doc)
        doc = table.column("doc_id").to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, cluster[1:] != cluster[:-1]]) if len(cluster) else np.zeros(0, np.int64)
        rank = np.arange(len(cluster)) - np.repeat(starts, np.diff(np.r_[starts, len(cluster)])) + 1
        source = table.column("source_doc").to_numpy(zero_copy_only=False)
        keep = np.isin(cluster, [c["cluster_id"] for c in biggest]) & ((rank <= members_shown) | (doc == source))
        known = _documents(spark, out, doc[keep], ["url"])
        members = [
            {"cluster_id": int(c), "doc_id": int(d), "_n": int(n), "url": known[int(d)]["url"]}
            for c, d, n in zip(cluster[keep], doc[keep], rank[keep])
            if int(d) in known
        ]
    else:
        clusters = read_table(spark, out, "clusters")
        total = clusters.select("cluster_id").distinct().count()
        top = (
            clusters.groupBy("cluster_id")
            .agg(
                F.first("cluster_size").alias("size"),
                F.max("identical").alias("identical"),
                F.first("source_doc").alias("source_doc"),
            )
            .orderBy(F.desc("size"), "cluster_id")
            .limit(shown)
        )
        members = [
            r.asDict()
            for r in clusters.join(F.broadcast(top.select("cluster_id")), "cluster_id")
            .withColumn("_n", F.row_number().over(Window.partitionBy("cluster_id").orderBy("doc_id")))
            .filter((F.col("_n") <= members_shown) | (F.col("doc_id") == F.col("source_doc")))
            .join(read_documents(spark, out).select("doc_id", "url"), "doc_id")
            .collect()
        ]
        biggest = [r.asDict() for r in top.collect()]
    urls = {m["doc_id"]: m["url"] for m in members}
    by_cluster: dict[int, list] = defaultdict(list)
    for m in sorted(members, key=lambda m: m["doc_id"]):
        if m["_n"] <= members_shown:
            by_cluster[m["cluster_id"]].append((m["doc_id"], m["url"]))
    views = tuple(
        ClusterView(
            c["cluster_id"],
            c["size"],
            c["identical"],
            c["source_doc"],
            urls.get(c["source_doc"]),
            tuple(by_cluster[c["cluster_id"]]),
        )
        for c in biggest
    )
    return views, total


def _trimmed(spark: SparkSession, out: str, shown: int) -> tuple:
    """The most trimmed pages the dedup stage kept: (doc_id, url, original_chars, removed_chars, dropped_reason)."""
    columns = ["doc_id", "url", "original_chars", "removed_chars", "dropped_reason"]
    order: Order = (("removed_chars", True), ("doc_id", False))
    if on_driver(out, "deduped"):
        rows = top_rows(out, "deduped", columns, order, shown, where=lambda t: pc.is_null(t.column("dropped_reason")))[
            0
        ].to_pylist()
    else:
        frame = read_table(spark, out, "deduped").filter(F.col("dropped_reason").isNull())
        rows = [r.asDict() for r in frame.orderBy(F.desc("removed_chars"), "doc_id").limit(shown).collect()]
    return tuple(
        (r["doc_id"], r["url"], r["original_chars"], r["removed_chars"], r["dropped_reason"]) for r in rows if r["removed_chars"]
    )


def _covered(spark: SparkSession, out: str, shown: int) -> tuple:
    """A check's most covered new documents (see RunPages.covered)."""
    order: Order = (("covered_share", True), ("covered_chars", True), ("doc_id", False))
    if on_driver(out, "contamination"):
        rows = top_rows(
            out,
            "contamination",
            TABLE_SCHEMAS["contamination"].names,
            order,
            shown,
            where=lambda t: pc.greater(t.column("covered_chars"), 0),
        )[0].to_pylist()
    else:
        frame = read_table(spark, out, "contamination").filter(F.col("covered_chars") > 0)
        rows = [
            r.asDict() for r in frame.orderBy(F.desc("covered_share"), F.desc("covered_chars"), "doc_id").limit(shown).collect()
        ]
    return tuple(
        (
            r["item_id"] if not r["url"] or r["url"] == r["item_id"] else r["url"],
            r["norm_chars"],
            r["covered_chars"],
            r["covered_share"],
            r["longest"],
            r["indexed_documents"],
            tuple(m["url"] for m in (r["matches"] or [])[:3]),
        )
        for r in rows
    )


def run_pages(
    spark: SparkSession, out: str, clusters_shown: int = 50, members_shown: int = 20, trimmed_shown: int = 50
) -> RunPages:
    """The clusters, failed files, dedup and check pages' content."""
    failed, outcomes = _failures(spark, out)
    views, total_clusters = _clusters(spark, out, clusters_shown, members_shown)
    dedup, trimmed = None, ()  # type: tuple[dict | None, tuple]
    if table_is_current(out, "deduped"):
        dedup, trimmed = table_stats(out, "deduped"), _trimmed(spark, out, trimmed_shown)
    contamination, covered = None, ()  # type: tuple[dict | None, tuple]
    if table_is_current(out, "contamination"):
        contamination = {**(table_stats(out, "indexed_documents") or {}), **(table_stats(out, "contamination") or {})}
        covered = _covered(spark, out, trimmed_shown * 4)
    return RunPages(
        failed_files=failed,
        record_outcomes=outcomes,
        clusters=views,
        total_clusters=total_clusters,
        dedup=dedup,
        trimmed=trimmed,
        contamination=contamination,
        covered=covered,
    )
