"""Stage: `pairs` + `passages` + `clusters` + `documents` → `deduped` (Parquet) and
`deduped_jsonl` (gzipped JSON lines in the datatrove/Dolma shape): the crawl with its copies removed.

What is removed, per ok document:

- **Near-duplicates** (dedup.drop_near_duplicates): a cluster keeps its `source_doc` (its
  earliest member; the passages it copied from other kept pages are cut like any page's) and
  drops every other member (`dropped_reason = near_duplicate`,
  `duplicate_of`). The threshold is the clusters' (clusters.resemblance); identical texts
  are one cluster whatever max_df said.
- **Copied passages**: every passage of a content pair at least dedup.min_passage normalized
  characters long (default t, the guarantee's length) that is content on the copying side (at
  least k characters outside its template) is cut out of the copy, and kept in the source: the
  earlier page in one order of the whole crawl, the clusters' (Last-Modified, WARC-Date, Date,
  a missing time last), then crawl order (WARC file, offset): the first occurrence. Where both
  pages have the same kinds of time this is the pair's `source`. A copy loses a passage only to
  a source that is itself kept, so a passage copied from a dropped near-duplicate stays where no
  kept page holds it, and one order means a passage is never cut from all its pages. The
  passages table's caps do not bound the cuts: a capped pair is grown again whole, and every
  other occurrence in a copy of a text it loses is cut (webwinnow.analysis.cuts).
- **Template text** (dedup.strip_template): cut from every kept page of a host but the first in
  crawl order (webwinnow.analysis.template defines it); a page without a host keeps its own. A
  source keeps what a copy lost to it, though it be the source's template (but what the copy
  would lose as its own template too).
- A page left with fewer than dedup.min_kept_chars letters and digits is dropped (`emptied`),
  unless a copy lost a passage to it.

Cuts use the passages' character offsets, so they are exact (webwinnow.analysis.removal). The
JSONL holds the kept pages only, one JSON object per line:
{"id", "text", "source": "webwinnow", "created": WARC-Date, "metadata": {url, WARC coordinates,
cluster, character counts}}.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import Window
from pyspark.sql import functions as F

from .. import schemas
from ..analysis.cuts import all_spans, needed_sources, outside, repeat_spans, repeats_unseeded, unit_span
from ..analysis.removal import cut, merge_spans, original_spans, span_chars, subtract_spans
from ..analysis.template import text_template
from ..config import RunConfig
from ..core.winnowing import units
from ..outputs.tables import read_table_config, write_table
from . import StageContext
from ._frames import read_table, spark_schema, url_host
from ._pairtable import SOURCE_BASES
from ._session import broadcast_rows, cache_level
from ._shared import share
from .candidates import boilerplate_array
from .hash_freq import BROADCAST_ROWS
from .passages import template_kgram_hashes

#: What a dedup task gets per document.
_IN = (
    "doc_id",
    "url",
    "warc_file",
    "warc_offset",
    "record_id",
    "fetch_time",
    "text",
    "cluster_id",
    "cluster_size",
    "duplicate_of",
    "cuts",
    "keep",
    "strip",
)

#: A page's place in the crawl's one order (run(): times in microseconds, a missing one last).
ORDER = pa.struct(
    [*((c, pa.int64()) for _, c in SOURCE_BASES), ("warc_file", pa.string()), ("warc_offset", pa.int64()), ("doc_id", pa.int64())]
)

#: A capped pair grown again (analysis.cuts.all_spans): its cuts in the copy, and one row with
#: complete = false and no span when even the bound of the regrowth was reached.
GROWN_CUTS = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("content", pa.int64()),
        ("source", pa.int64()),
        ("source_start", pa.int64()),
        ("source_end", pa.int64()),
        ("source_order", ORDER),
        ("complete", pa.bool_()),
    ]
)
#: What a source keeps for a copy: units lo..hi (counted from the passage's first unit, which both
#: sides share) of the passage starting at character `start` of the source.
KEEP_ROWS = pa.schema([("doc_id", pa.int64()), ("start", pa.int64()), ("lo", pa.int64()), ("hi", pa.int64())])
#: The regrowth's work bound: units compared per pair, in multiples of passages.max_compared.
REGROWTH_WORK = 64


def dedup_arrow(
    batches: Iterator[pa.RecordBatch], cfg: RunConfig, boilerplate: np.ndarray, template_kgrams: np.ndarray | None = None
) -> Iterator[pa.RecordBatch]:
    """DEDUPED rows for batches of _IN rows (cuts: the passages to remove, with their sources;
    keep: spans the page keeps whatever else is cut, since later pages lost them to it)."""
    w = cfg.winnow
    min_passage = cfg.dedup.min_passage or w.t
    for batch in batches:
        rows = batch.to_pylist()
        out: dict[str, list] = {f.name: [] for f in schemas.DEDUPED}
        for r in rows:
            text = r["text"] or ""
            n = len(text)
            lost = sorted({(c["start"], c["end"]) for c in r["cuts"] or ()})
            copies = merge_spans(lost, n)
            if copies and repeats_unseeded(text, w, cfg.pairing.max_repeats):
                # a passage pasted again in the copy seeds nothing past pairing.max_repeats: its
                # other occurrences are the same copy of the same source
                copies = merge_spans(copies + repeat_spans(text, lost, min_passage, w.unit, w.lexer), n)
            sources = sorted({c["source"] for c in r["cuts"] or ()})
            keep: list[tuple[int, int]] = []
            if r["keep"]:
                _, starts, ends = units(text, w.unit)
                keep = merge_spans((unit_span(starts, ends, c["start"], c["lo"], c["hi"]) for c in r["keep"]), n)
            template: list[tuple[int, int]] = []
            if r["strip"] and r["duplicate_of"] is None:
                template = template_spans(text, w.k, w.w, w.robust, w.mod_p, boilerplate, w.unit, template_kgrams)
                template = subtract_spans(subtract_spans(template, copies), keep)
            removed = merge_spans(copies + template, n)
            kept: str | None = cut(text, removed)
            reason = "near_duplicate" if r["duplicate_of"] is not None else None
            if reason is None and not keep and sum(ch.isalnum() for ch in kept or "") < cfg.dedup.min_kept_chars:
                reason = "emptied"  # never a page that later pages lost passages to
            if reason is not None:
                removed, kept = ([(0, n)] if n else []), None
            for name in ("doc_id", "url", "warc_file", "warc_offset", "record_id", "fetch_time", "cluster_id", "duplicate_of"):
                out[name].append(r[name])
            out["cluster_size"].append(r["cluster_size"] or 1)
            out["text"].append(kept)
            out["original_chars"].append(n)
            out["removed_chars"].append(span_chars(removed))
            out["kept_chars"].append(n - span_chars(removed))
            out["template_chars"].append(span_chars(template) if reason is None else 0)
            out["removed_spans"].append([{"start": s, "end": e} for s, e in removed])
            out["copied_from"].append(sources)
            out["dropped_reason"].append(reason)
        yield pa.RecordBatch.from_pydict(out, schema=schemas.DEDUPED)


def regrow_arrow(
    batches: Iterator[pa.RecordBatch],
    cfg: RunConfig,
    min_passage: int,
    boilerplate: np.ndarray,
    template_kgrams: np.ndarray | None = None,
) -> Iterator[pa.RecordBatch]:
    """GROWN_CUTS rows for batches of capped (copy doc_id, text, source, source_text, source_order)."""
    w = cfg.winnow
    bound = cfg.passages.max_compared * REGROWTH_WORK
    for batch in batches:
        out: dict[str, list] = {f.name: [] for f in GROWN_CUTS}
        for r in batch.to_pylist():
            spans, complete = all_spans(
                r["text"] or "",
                r["source_text"] or "",
                boilerplate,
                k=w.k,
                w=w.w,
                robust=w.robust,
                mod_p=w.mod_p,
                unit=w.unit,
                lexer=w.lexer,
                max_compared=bound,
                template_kgrams=template_kgrams,
            )
            rows: list[tuple[int | None, ...]] = [
                (s.copy_start, s.copy_end, s.content, s.source_start, s.source_end) for s in spans if s.length >= min_passage
            ]
            if not complete:
                rows.append((None, None, None, None, None))
            for start, end, content, s_start, s_end in rows:
                out["doc_id"].append(r["doc_id"])
                out["start"].append(start)
                out["end"].append(end)
                out["content"].append(content)
                out["source"].append(r["source"])
                out["source_start"].append(s_start)
                out["source_end"].append(s_end)
                out["source_order"].append(r["source_order"])
                out["complete"].append(True if start is not None else False)
        yield pa.RecordBatch.from_pydict(out, schema=GROWN_CUTS)


def needed_arrow(
    batches: Iterator[pa.RecordBatch], cfg: RunConfig, boilerplate: np.ndarray, template_kgrams: np.ndarray | None = None
) -> Iterator[pa.RecordBatch]:
    """KEEP_ROWS for batches of kept copies (doc_id, text, cuts, strip): what each source keeps of
    what a copy lost to it (analysis.cuts.needed_sources), less what the copy would have lost
    as its own template anyway."""
    w = cfg.winnow
    for batch in batches:
        out: dict[str, list] = {f.name: [] for f in KEEP_ROWS}
        for r in batch.to_pylist():
            cuts = r["cuts"] or []
            needed = needed_sources([(c["start"], c["end"], tuple(c["source_order"].values()), c["source"]) for c in cuts])
            if not needed:
                continue
            text = r["text"] or ""
            if r["strip"]:
                starts, ends, lo, hi = template_units(text, w.k, w.w, w.robust, w.mod_p, boilerplate, w.unit, template_kgrams)
            else:
                _, starts, ends = units(text, w.unit)
                lo = hi = np.zeros(0, np.int64)
            for i in needed:
                c = cuts[i]
                for part_lo, part_hi in outside(starts, ends, c["start"], c["end"], lo, hi):
                    out["doc_id"].append(c["source"])
                    out["start"].append(c["source_start"])
                    out["lo"].append(part_lo)
                    out["hi"].append(part_hi)
        yield pa.RecordBatch.from_pydict(out, schema=KEEP_ROWS)


def template_spans(
    text: str,
    k: int,
    w: int,
    robust: bool,
    mod_p: int,
    boilerplate: np.ndarray,
    unit: str = "char",
    template_kgrams: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """A page's template text as merged character spans of the original text."""
    offsets, ends, lo, hi = template_units(text, k, w, robust, mod_p, boilerplate, unit, template_kgrams)
    return merge_spans(original_spans(offsets, lo, hi, ends), len(text))


def template_units(
    text: str,
    k: int,
    w: int,
    robust: bool,
    mod_p: int,
    boilerplate: np.ndarray,
    unit: str = "char",
    template_kgrams: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A page's units (their character starts and ends) and its template text as intervals of
    their indices (webwinnow.analysis.template): the passages stage's template k-grams included."""
    return text_template(text, k, w, robust, mod_p, boilerplate, template_kgrams, unit)


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    d = cfg.dedup
    k = cfg.winnow.k
    min_passage = d.min_passage or cfg.winnow.t
    docs = (
        read_table(spark, out, "documents")
        .filter(F.col("status") == "ok")
        .select("doc_id", "url", "warc_file", "warc_offset", "record_id", "fetch_time", "text", *{c for _, c in SOURCE_BASES})
    )
    clusters = read_table(spark, out, "clusters").select("doc_id", "cluster_id", "cluster_size", "source_doc")
    duplicate_of = (
        F.when(F.col("source_doc") != F.col("doc_id"), F.col("source_doc"))
        if d.drop_near_duplicates
        else F.lit(None).cast("long")
    )
    placed = (
        docs.join(clusters, "doc_id", "left").withColumn("duplicate_of", duplicate_of).withColumn("host", url_host(F.col("url")))
    )
    # One order of the whole crawl, so a passage always stays somewhere: the clusters' (Last-Modified,
    # WARC-Date, Date, a missing or malformed time last), then crawl order. On pages with the same
    # kinds of time it is the pairs' source; a pairwise choice could make each of three pages
    # another's copy.
    never = F.lit(2**62).cast("long")
    earliest = F.struct(
        *(F.coalesce(F.unix_micros(F.col(c).try_cast("timestamp")), never).alias(c) for _, c in SOURCE_BASES),
        "warc_file",
        "warc_offset",
        "doc_id",
    )
    coords = placed.select("doc_id", earliest.alias("order"), F.col("duplicate_of").isNull().alias("kept"))

    def side(x: str):
        return coords.select(*(F.col(c).alias(f"{c}_{x}") for c in ("doc_id", "order", "kept")))

    passages = (
        read_table(spark, out, "passages")
        .join(side("a"), F.col("doc_a") == F.col("doc_id_a"))
        .join(side("b"), F.col("doc_b") == F.col("doc_id_b"))
        .withColumn("copy_is_b", F.col("order_a") < F.col("order_b"))
    )
    pick = lambda b, a: F.when(F.col("copy_is_b"), F.col(b)).otherwise(F.col(a))
    edges = passages.filter(pick("kept_a", "kept_b")).select(
        pick("doc_b", "doc_a").alias("doc_id"),
        pick("start_b", "start_a").alias("start"),
        pick("end_b", "end_a").alias("end"),
        "length",
        pick("content_chars_b", "content_chars_a").alias("content"),
        pick("doc_a", "doc_b").alias("source"),
        pick("start_a", "start_b").alias("source_start"),
        pick("end_a", "end_b").alias("source_end"),
        pick("order_a", "order_b").alias("source_order"),
        "capped",
    )

    # what the passages stage said of its caps: no capped pair, nothing to grow again
    any_capped = bool(read_table_config(out, "passages").get("stats", {}).get("capped_spans", 1))
    boilerplate = np.zeros(0, np.int64)
    if d.strip_template or any_capped:
        max_df = read_table_config(out, "candidate_pairs")["max_df"]
        boilerplate = boilerplate_array(spark, out, max_df)
    shared = share(spark, boilerplate, out)
    kgrams = template_kgram_hashes(out) if d.strip_template or any_capped else np.zeros(0, np.int64)
    shared_kgrams = share(spark, kgrams, out)

    cut_cols = ["doc_id", "start", "end", "content", "source", "source_start", "source_end", "source_order"]
    cuts = edges.filter(F.col("length") >= min_passage).select(*cut_cols)
    grown = None
    if any_capped:
        # A pair that hit the passage search's cap is grown again, whole: the passages table reports
        # at most max_spans passages of a pair, and dedup must cut every one (analysis.cuts).
        # few pairs (16 on the docs corpus): broadcast to the documents rather than the documents'
        # texts shuffled to them; many, joined by a shuffle, never through the driver
        capped = edges.filter("capped").select("doc_id", "source", "source_order").distinct().localCheckpoint()
        sources = capped.select("source").distinct()
        if capped.count() <= broadcast_rows(spark, 24, BROADCAST_ROWS):
            capped, sources = F.broadcast(capped), F.broadcast(sources)
        texts = docs.select("doc_id", "text")
        regrow_in = texts.join(capped, "doc_id").join(
            texts.select(F.col("doc_id").alias("source"), F.col("text").alias("source_text")).join(sources, "source"),
            "source",
        )

        def regrown(batches):
            yield from regrow_arrow(batches, cfg, min_passage, shared.value, shared_kgrams.value)

        grown = regrow_in.repartition("doc_id").mapInArrow(regrown, spark_schema(GROWN_CUTS)).persist(cache_level(spark))
        cuts = cuts.join(capped.select("doc_id", "source"), ["doc_id", "source"], "left_anti").unionByName(
            grown.filter(F.col("start").isNotNull()).select(*cut_cols)
        )
    cuts = cuts.filter(F.col("content") >= k)
    per_copy = cuts.groupBy("doc_id").agg(
        F.collect_list(F.struct("start", "end", "source", "source_order", "source_start", "source_end")).alias("cuts")
    )
    first_of_host = F.row_number().over(Window.partitionBy("host").orderBy("warc_file", "warc_offset", "doc_id"))
    kept_docs = placed.filter(F.col("duplicate_of").isNull() & F.col("host").isNotNull())
    keepers = kept_docs.withColumn("_n", first_of_host).filter(F.col("_n") == 1).select("doc_id", F.lit(True).alias("_keeps"))
    # a page without a host is the first of its own
    strip = F.lit(d.strip_template) & F.col("host").isNotNull() & F.col("_keeps").isNull()
    base = placed.join(per_copy, "doc_id", "left").join(keepers, "doc_id", "left").withColumn("strip", strip)

    def needed(batches):
        yield from needed_arrow(batches, cfg, shared.value, shared_kgrams.value)

    if d.strip_template or d.min_kept_chars > 1:
        # which sources keep what their kept copies lose, though it be their template or all that
        # is left of them: said by the copies, sent to the sources. (Without template stripping,
        # and with pages emptied only when nothing is left, a source loses only what an earlier
        # page keeps: nothing copied is lost.)
        keeps = (
            base.filter(F.col("cuts").isNotNull() & F.col("duplicate_of").isNull())
            .select("doc_id", "text", "cuts", "strip")
            .mapInArrow(needed, spark_schema(KEEP_ROWS))
            .groupBy("doc_id")
            .agg(F.collect_list(F.struct("start", "lo", "hi")).alias("keep"))
        )
        rows = base.join(keeps, "doc_id", "left").select(*_IN)
    else:
        rows = base.withColumn("keep", F.lit(None).cast("array<struct<start:long,lo:long,hi:long>>")).select(*_IN)

    def deduped(batches):
        yield from dedup_arrow(batches, cfg, shared.value, shared_kgrams.value)

    # documents' order: the same rows whatever Spark's partitioning (tests compare runs)
    table = rows.repartition("doc_id").mapInArrow(deduped, spark_schema(schemas.DEDUPED)).sortWithinPartitions("doc_id")
    meta = {"min_passage": min_passage}
    write_table(table, out, "deduped", cfg, "dedup", meta)
    written = read_table(spark, out, "deduped")
    dolma = written.filter(F.col("dropped_reason").isNull()).select(
        F.col("doc_id").cast("string").alias("id"),
        "text",
        F.lit("webwinnow").alias("source"),
        F.col("fetch_time").alias("created"),
        F.struct(
            "url",
            "warc_file",
            "warc_offset",
            F.col("record_id").alias("warc_record_id"),
            "cluster_id",
            "cluster_size",
            "original_chars",
            "removed_chars",
            "kept_chars",
            "copied_from",
        ).alias("metadata"),
    )
    write_table(dolma, out, "deduped_jsonl", cfg, "dedup", meta, fmt="json")
    row = written.agg(
        F.count(F.lit(1)).alias("documents"),
        F.sum(F.col("dropped_reason").isNull().cast("long")).alias("kept"),
        F.sum((F.col("dropped_reason") == "near_duplicate").cast("long")).alias("near_duplicates"),
        F.sum((F.col("dropped_reason") == "emptied").cast("long")).alias("emptied"),
        F.sum("original_chars").alias("original_chars"),
        F.sum("removed_chars").alias("removed_chars"),
        F.sum("template_chars").alias("template_chars"),
        F.sum(F.when(F.col("dropped_reason").isNull(), F.col("removed_chars") - F.col("template_chars"))).alias("copied"),
        F.sum(F.when(F.col("dropped_reason").isNull() & (F.size("copied_from") > 0), 1)).alias("trimmed"),
    ).first()
    assert row is not None  # an aggregation has one row
    regrowth = None
    if grown is not None:
        regrowth = grown.agg(
            F.countDistinct("doc_id", "source").alias("pairs"),
            F.sum((~F.col("complete")).cast("long")).alias("incomplete"),
        ).first()
        grown.unpersist()
    shared.unpersist()
    shared_kgrams.unpersist()
    return {
        "documents": row["documents"],
        "kept": row["kept"] or 0,
        "near_duplicates": row["near_duplicates"] or 0,
        "emptied": row["emptied"] or 0,
        "original_chars": row["original_chars"] or 0,
        "removed_chars": row["removed_chars"] or 0,
        "copied_chars_removed": row["copied"] or 0,
        "template_chars_removed": row["template_chars"] or 0,
        "trimmed_documents": row["trimmed"] or 0,
        "min_passage": min_passage,
        "strip_template": d.strip_template,
        # pairs whose passages hit passages.max_spans or max_compared, grown again whole for their cuts
        "regrown_pairs": regrowth["pairs"] if regrowth else 0,
        # of those, pairs whose regrowth reached its own bound: copies may be left in both pages
        "incomplete_pairs": (regrowth["incomplete"] or 0) if regrowth else 0,
    }
