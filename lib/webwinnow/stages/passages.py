"""Stage: `pair_seeds` + `candidate_pairs` + `documents` → `passages`, `pairs`, `template_pairs`.

Each candidate pair's seeds (positions of its shared fingerprints, boilerplate excluded) are
grown into maximal matching spans of the two normalized texts (see webwinnow.analysis.spans).
The work per pair is bounded by passages.max_spans and passages.max_compared; a pair that hit a bound has
capped = true. Each span also gets its content characters on each side (those outside the
side's template text: webwinnow.analysis.template) and the share of its fingerprints that are
boilerplate hashes.

A candidate pair is a content pair, in `pairs`, when one of its passages holds a run of at least
passages.min_content (t) consecutive content characters on both sides; `passages` holds their
spans. The others (a k-gram
straddling the end of a navigation bar and the first word of the page falls below the cap, and
the span it grows into is all template) go to `template_pairs` with their reason: counted,
never paired, never clustered.

When the driver can hold the pairs (stages._sides), it reads them, a pair's seeds and
candidate columns travel with its b window, and the rows reach the grow tasks through files,
not Spark's shuffle. No full text travels per pair. The pairs are grouped by their document
a: each document a travels once, as its whole text, to the task that grows its pairs, and that task cuts its
windows there. Each document b is read once, where it is stored: it is normalized and
fingerprinted once, and for every pair it is the b of it sends only the window from `margin`
normalized characters before that pair's first seed to `margin` after its last. A window
carries its fingerprints, whether they are boilerplate, and its template text. The pair's spans
are grown inside the two windows; a pair whose span (or seed) reaches a window edge that is not
its text's end is grown again from the whole texts, so the result is exactly that of whole
texts. What a pair moves grows with the stretch its seeds cover on b, not with its documents'
length.

The task that grows a pair writes its row of `pairs` or `template_pairs` and its passages
(outputs.parts): the pair's candidate columns come with its seeds, its pages' lengths with its
windows. The JVM gets only the pairs to grow again from whole texts: judging every candidate
pair in Spark (40.6 M on a 1.36 M-page crawl) took three joins and two writes over all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from .. import schemas, storage
from ..analysis.batchspans import batch_passages
from ..analysis.boilerplate import HashSet
from ..analysis.template import batch_edge_hashes, page_edge_hashes
from ..config import RunConfig
from ..core.distinct import distinct, distinct_counts
from ..core.winnowing import _text_buffers, fingerprint_batch
from ..outputs.parts import PartWriter, ensure_part
from ..outputs.tables import (
    drop_staged,
    finish_table,
    folder_parquet_files,
    open_parquet,
    parquet_files,
    read_arrow,
    read_table_config,
    row_count,
    stage_table,
    table_meta,
    write_arrow,
    write_table,
)
from . import StageContext
from ._faults import injected_stages, maybe_fail
from ._frames import read_documents, read_table, spark_schema
from ._session import broadcast_rows, cache_level, default_parallelism, shuffle_partitions
from ._shared import share
from ._sides import (
    CANDIDATE,
    REQUESTS,
    GrowingPages,
    PagesB,
    SidesPlan,
    bucket_rows,
    file_sides,
    listed_seeds,
    plan_sides,
    stored_pairs,
    whole_requests,
)
from ._sparksides import held_pages, packed_pairs, spark_sides
from ._tasks import slots
from ._windows import (
    KGRAM_SLICE_BYTES,
    every_kgram,
    pair_chunks,
    pair_rows,
    text_slices,
    window_arrow,
    with_a_windows,
)
from .candidates import boilerplate_array
from .hash_freq import BROADCAST_ROWS

#: What a pair copied of each side, counted once where its spans overlap (BatchPassages.union).
UNION = ("copied_chars_a", "content_chars_a", "copied_chars_b", "content_chars_b")
#: PASSAGES rows, plus one `redo` row (and no passages) for a pair its windows could not settle;
#: `seed_row`: the row of the grow task's input holding the pair's seeds and candidate columns.
GROWN = pa.schema(
    [
        *(f for f in schemas.PASSAGES if f.name not in ("source", "source_basis")),
        pa.field("redo", pa.bool_()),
        *((f"pair_{name}", pa.int64()) for name in UNION),
        pa.field("seed_row", pa.int64()),
    ]
)

#: What a grow task hands the JVM: the pairs its windows could not settle, to grow again from
#: their whole texts. Every other pair it has written.
REDO = pa.schema([("doc_a", pa.int64()), ("doc_b", pa.int64())])
#: template_pairs as Spark wrote it when it judged the pairs: a reason is never null.
TEMPLATE_PAIRS_WRITTEN = pa.schema(
    [*(f for f in schemas.TEMPLATE_PAIRS if f.name != "reason"), pa.field("reason", pa.string(), nullable=False)]
)
#: The tables the grow tasks write, as parts.
WRITTEN = {"passages": schemas.PASSAGES, "pairs": schemas.PAIRS, "template_pairs": TEMPLATE_PAIRS_WRITTEN}
#: Rows per row group of the tables the grow tasks write (a chunk of pairs makes a few thousand).
GROUP_ROWS = 128 * 1024
#: Part numbers of the tasks that grow pairs again from whole texts: after the first pass's.
WHOLE_TASKS = 100_000

EDGE_COUNTS = pa.schema([("hash", pa.int64()), ("docs", pa.int64())])
#: What an edge task hands the JVM: how many rows it wrote.
EDGE_ROWS = pa.schema([("rows", pa.int64())])


def edge_arrow(batch: pa.RecordBatch, cfg: RunConfig, boilerplate: np.ndarray | HashSet) -> Iterator[pa.RecordBatch]:
    """EDGE_COUNTS rows for a batch of (text): per hash, how many of the texts hold its k-gram
    next to a block of their template text (webwinnow.analysis.template)."""
    boilerplate = boilerplate if isinstance(boilerplate, HashSet) else HashSet(boilerplate)
    for part in text_slices(batch, KGRAM_SLICE_BYTES):
        yield _edge_counts(part.column("text"), cfg, boilerplate)


def _edge_counts(texts: pa.Array, cfg: RunConfig, boilerplate: HashSet) -> pa.RecordBatch:
    w = cfg.winnow
    if w.unit in ("char", "word"):  # one kernel pass a page
        data, starts, ends = _text_buffers(texts)
        found = batch_edge_hashes(
            data, starts, ends, w.unit == "word", w.k, w.w, w.robust, w.mod_p, boilerplate.members, boilerplate.table()
        )
    else:  # code: its tokens come from Pygments, outside the kernels
        fp = fingerprint_batch(texts, w.k, w.w, w.robust, mod_p=w.mod_p, unit=w.unit, lexer=w.lexer)
        flags = boilerplate.contains(fp.hashes)
        rows = distinct(fp.doc[flags])  # only pages with template text have edges: hash only their k-grams
        every = every_kgram(texts.take(pa.array(rows, pa.int64())), cfg)
        fp_bounds = np.searchsorted(fp.doc, np.arange(len(texts) + 1))
        kg_bounds = np.searchsorted(every.doc, np.arange(len(rows) + 1))
        found = page_edge_hashes(
            every.hashes, every.positions, kg_bounds, fp.positions, flags, fp_bounds[rows], fp_bounds[rows + 1],
            fp.norm_chars[rows], w.k, w.w,
        )  # fmt: skip
    hashes, docs = distinct_counts(found)
    return pa.record_batch([pa.array(hashes, pa.int64()), pa.array(docs.astype(np.int64))], schema=EDGE_COUNTS)


#: Up to this many edge rows (a hash and a count, per documents file), the template k-grams are
#: summed on the driver; beyond, in Spark, from the same files.
DRIVER_EDGE_ROWS = 20_000_000
#: Edge rows an edge task sums at a time (about 100 MB of arrays).
EDGE_SUM_ROWS = 4_000_000
#: Where the edge tasks write their counts: a hidden staging folder beside the table's.
EDGES = "template_kgram_edges"


def template_kgrams(spark: SparkSession, out: str, cfg: RunConfig, shared, max_df: int) -> np.ndarray:
    """Writes `template_kgrams` and returns their hashes, sorted: the k-grams more than max_df
    documents hold next to a block of their template text. Small: each is in more than max_df
    documents' at most 2w k-grams per block, so they number at most (2w · blocks) / max_df.

    One task per Parquet file of the documents reads its texts with pyarrow and writes its
    counts (a row per distinct edge k-gram of the file) as a part: no page text and no count
    goes through the JVM, which gets a row count per task. Nearly every edge k-gram is a page's
    own (about 14,000 per MB of HTML, nearly all distinct): summing them in Spark cost more than
    finding them. Up to DRIVER_EDGE_ROWS the driver sums the parts; beyond, Spark does."""
    files = [f for table in ("documents", "indexed_documents") if table_meta(out, table) for f in parquet_files(out, table)]
    folder = stage_table(out, EDGES)
    sum_rows = EDGE_SUM_ROWS

    def edges_of(batches):
        for batch in batches:
            for i in batch.column("id").to_pylist():
                writer = PartWriter(folder, i, EDGE_COUNTS)
                try:
                    held: list[pa.RecordBatch] = []
                    for batch in _file_edges(files[i], cfg, shared.value):
                        held.append(batch)
                        if sum(b.num_rows for b in held) >= sum_rows:  # memory: a hash may repeat across sums
                            writer.write(_summed(held))
                            held = []
                    writer.write(_summed(held))
                    writer.close()
                except BaseException:
                    writer.abort()
                    raise
                yield pa.RecordBatch.from_arrays([pa.array([writer.rows], pa.int64())], schema=EDGE_ROWS)

    try:
        written = slots(spark, len(files)).mapInArrow(edges_of, spark_schema(EDGE_ROWS)).collect()
        if sum(r["rows"] for r in written) <= DRIVER_EDGE_ROWS:
            counts = _summed([b for name in folder_parquet_files(folder) for b in _part_batches(name)])
            frequent = counts.filter(pc.greater(counts.column("docs"), max_df))
            write_arrow(pa.Table.from_batches([frequent]), out, "template_kgrams", cfg, "passages")
        else:
            counts = spark.read.schema(spark_schema(EDGE_COUNTS)).parquet(folder).groupBy("hash").agg(F.sum("docs").alias("docs"))
            frequent = counts.filter(F.col("docs") > max_df)
            write_table(frequent.select(*schemas.TEMPLATE_KGRAMS.names), out, "template_kgrams", cfg, "passages")
    finally:
        drop_staged(out, EDGES)
    return template_kgram_hashes(out)


def _part_batches(name: str) -> list[pa.RecordBatch]:
    with storage.open_input(name) as fh:
        return open_parquet(name, fh).read().to_batches()


def _summed(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """EDGE_COUNTS with each hash once, its counts summed, sorted by hash."""
    hashes = np.concatenate([b.column("hash").to_numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    docs = np.concatenate([b.column("docs").to_numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    unique, at = np.unique(hashes, return_inverse=True)
    summed = np.zeros(len(unique), np.int64)
    np.add.at(summed, at, docs)
    return pa.record_batch([pa.array(unique, pa.int64()), pa.array(summed, pa.int64())], schema=EDGE_COUNTS)


def template_kgram_hashes(out: str) -> np.ndarray:
    """The template k-grams' hashes, sorted; none where the passages stage did not write them (an
    output made before they existed)."""
    if table_meta(out, "template_kgrams") is None:
        return np.zeros(0, np.int64)
    return np.sort(read_arrow(out, "template_kgrams", ["hash"]).column("hash").to_numpy().astype(np.int64))


def _file_edges(name: str, cfg: RunConfig, boilerplate: np.ndarray) -> Iterator[pa.RecordBatch]:
    boilerplate_set = HashSet(boilerplate)
    fs, path = storage.locate(name)
    with fs.open_input_file(path) as fh:
        for batch in pq.ParquetFile(fh).iter_batches(batch_size=1024, columns=["text", "status"]):
            ok = batch.filter(pc.equal(batch.column("status"), "ok"))
            if ok.num_rows:
                yield from edge_arrow(ok, cfg, boilerplate_set)


def settle(grown: pa.RecordBatch, table: pa.Table, least: int, whole: bool = False) -> tuple[pa.RecordBatch, ...]:
    """What the grow task writes and hands on for the pairs of grow_arrow's input `table`, given
    what grow_arrow grew of them: (their PASSAGES rows when they share content, the PAIRS rows of
    those, the TEMPLATE_PAIRS rows of the others, the REDO rows of the pairs to grow again from
    whole texts). A pair shares content when one passage holds a run of `least` content units on
    both sides. Every pair of the table (its seed row: _windows.seed_rows) is in exactly one of the last three;
    one that grew no passage (or, from whole texts, could not be settled) is a template pair
    with no passage. A pair's content share is its content characters over its page's units,
    null where the page is not known."""
    seed_rows, *window_rows = pair_rows(table)
    doc_a, doc_b = grown.column("doc_a").to_numpy(), grown.column("doc_b").to_numpy()
    redo = grown.column("redo").to_numpy(zero_copy_only=False)
    at = grown.column("seed_row").to_numpy()
    kept = np.flatnonzero(~redo)
    kept = kept[np.lexsort((doc_b[kept], doc_a[kept]))]
    a, b = doc_a[kept], doc_b[kept]
    starts = np.flatnonzero(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]) if len(kept) else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, len(kept)])
    run = np.minimum(grown.column("content_run_a").to_numpy(), grown.column("content_run_b").to_numpy())[kept]
    longest = np.maximum.reduceat(run, starts) if len(kept) else np.zeros(0, np.int64)
    first = kept[starts]

    # per seed row: what its pair's passages copied (nothing when it grew none)
    n = table.num_rows
    slot = np.full(n, -1, np.int64)
    slot[at[first]] = np.arange(len(first))
    again = np.zeros(n, bool)
    if not whole:
        again[at[redo]] = True
    pair = slot[seed_rows]
    has = pair >= 0
    values = {"passages": counts, "longest_content": longest}
    values.update({name: grown.column(f"pair_{name}").to_numpy()[first] for name in UNION})
    copied = {name: np.where(has, v[np.maximum(pair, 0)] if len(v) else 0, 0).astype(np.int64) for name, v in values.items()}
    # the page's units: from the pair's window rows (side 0 and 1); b's window is missing when b
    # is not a page of the documents
    norm = table.column("norm").to_numpy(zero_copy_only=False)
    pair_a, pair_b = table.column("doc_a").to_numpy(), table.column("doc_b").to_numpy()
    columns = {"doc_a": pair_a[seed_rows], "doc_b": pair_b[seed_rows]}
    for x, row in zip("ab", window_rows, strict=True):
        known = row >= 0
        chars = np.where(known, np.nan_to_num(norm[np.maximum(row, 0)].astype(np.float64)), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = copied[f"content_chars_{x}"] / chars
        columns[f"content_share_{x}"] = pa.array(share, pa.float64(), mask=~known | (chars <= 0))
    seeds = table.select(list(CANDIDATE)).take(pa.array(seed_rows, pa.int64()))  # only what rows() writes
    content = ~again[seed_rows] & (copied["longest_content"] >= least)
    template = ~again[seed_rows] & ~content

    def rows(mask: np.ndarray, schema: pa.Schema) -> pa.RecordBatch:
        take = pa.array(np.flatnonzero(mask), pa.int64())
        arrays = []
        for f in schema:
            if f.name in CANDIDATE:
                arrays.append(seeds.column(f.name).take(take).combine_chunks().cast(f.type))
            elif f.name == "reason":
                passed = copied["passages"][mask]
                arrays.append(pa.array(np.where(passed == 0, "no_passage", "template"), pa.string()))
            elif f.name in copied:
                arrays.append(pa.array(copied[f.name][mask], f.type))
            else:
                column = columns[f.name]
                arrays.append(column.take(take) if isinstance(column, pa.Array) else pa.array(column[mask], f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    # the content pairs' passages, with their pair's source side
    position = np.full(n, -1, np.int64)
    position[seed_rows] = np.arange(len(seed_rows))
    passage_rows = kept[np.repeat(content[position[at[first]]], counts)]
    take = pa.array(passage_rows, pa.int64())
    source_at = pa.array(at[passage_rows], pa.int64())
    found = pa.RecordBatch.from_arrays(
        [
            table.column(f.name).take(source_at).combine_chunks().cast(f.type)
            if f.name in CANDIDATE
            else grown.column(f.name).take(take)
            for f in schemas.PASSAGES
        ],
        schema=schemas.PASSAGES,
    )
    again_rows = seed_rows[again[seed_rows]]
    redone = pa.RecordBatch.from_arrays([pa.array(pair_a[again_rows]), pa.array(pair_b[again_rows])], schema=REDO)
    return found, rows(content, schemas.PAIRS), rows(template, TEMPLATE_PAIRS_WRITTEN), redone


def grow_arrow(table: pa.Table, cfg: RunConfig, pages_b: PagesB | GrowingPages | None = None) -> pa.RecordBatch:
    """GROWN rows for rows sorted by (doc_a, doc_b, side): per pair its window of a (side 0), of b
    (side 1) and its seeds (with b's window, or side 2). Spans grown inside the windows by one kernel call for the
    whole chunk, or a redo row; a pair missing a row (a document that is not ok) has no passages.
    `pages_b`: the b windows come without their text, to be found in these pages by their bytes."""
    seed_at, a_at, b_at = pair_rows(table)
    both = (a_at >= 0) & (b_at >= 0)
    rs, ra, rb = (pa.array(x[both]) for x in (seed_at, a_at, b_at))
    doc_a, doc_b = table.column("doc_a").to_numpy(), table.column("doc_b").to_numpy()
    r = seed_at[both]

    def taken(name: str, rows: pa.Array) -> pa.Array:
        """The column's values at `rows`: a slice, not a copy, for consecutive rows of one chunk
        (the a windows cut here come in their pairs' order)."""
        at = rows.to_numpy()
        if len(at) and at[-1] - at[0] == len(at) - 1 and (np.diff(at) == 1).all():
            bounds = np.cumsum([0, *(len(c) for c in table.column(name).chunks)])
            i = int(np.searchsorted(bounds, at[0], "right")) - 1
            if at[-1] < bounds[i + 1]:
                return table.column(name).chunk(i).slice(int(at[0] - bounds[i]), len(at))
        return table.column(name).take(rows).combine_chunks()

    seeds = taken("seeds", rs)
    flat = seeds.flatten()
    fp = taken("fp_pos", ra)

    def template(rows):
        lo, hi = taken("tpl_lo", rows), taken("tpl_hi", rows)
        return _offsets(lo), lo.flatten().to_numpy(zero_copy_only=False), hi.flatten().to_numpy(zero_copy_only=False)

    def tokens(rows):
        lists = [taken(name, rows) for name in ("tok_code", "tok_start", "tok_end")]
        return (_offsets(lists[0]), *(x.flatten().to_numpy(zero_copy_only=False) for x in lists))

    start_a = taken("start", ra).to_numpy()
    pages_a = _a_pages(table, r, start_a, taken("end", ra).to_numpy())
    if pages_b is not None:
        windows_b = pages_b.windows(doc_b[r], taken("byte_lo", rb).to_numpy(), taken("byte_hi", rb).to_numpy())
    found = batch_passages(
        None if pages_a is not None else taken("text", ra),
        None if pages_b is not None else taken("text", rb),
        start_a,
        taken("start", rb).to_numpy(),
        taken("open", ra).to_numpy(),
        taken("open", rb).to_numpy(),
        _offsets(seeds),
        flat.field("pos_a").to_numpy(zero_copy_only=False),
        flat.field("pos_b").to_numpy(zero_copy_only=False),
        _offsets(fp),
        fp.flatten().to_numpy(zero_copy_only=False),
        taken("fp_boilerplate", ra).flatten().to_numpy(zero_copy_only=False),
        cfg.winnow.k,
        template_a=template(ra),
        template_b=template(rb),
        max_spans=cfg.passages.max_spans,
        max_chars=cfg.passages.max_compared,
        unit=cfg.winnow.unit,
        lexer=cfg.winnow.lexer,
        **({"tokens_a": tokens(ra), "tokens_b": tokens(rb)} if cfg.winnow.unit == "code" else {}),
        pages_a=pages_a,
        pages_b=windows_b if pages_b is not None else None,
        end_b=taken("end", rb).to_numpy() if pages_b is not None else None,
    )
    pairs_a, pairs_b = doc_a[r], doc_b[r]
    redo = np.flatnonzero(found.truncated)
    n_redo = len(redo)
    columns = {
        "doc_a": np.concatenate([pairs_a[found.pair], pairs_a[redo]]),
        "doc_b": np.concatenate([pairs_b[found.pair], pairs_b[redo]]),
        "capped": np.concatenate([found.capped[found.pair], np.zeros(n_redo, bool)]),
        "boilerplate": np.concatenate([found.boilerplate, np.full(n_redo, np.nan)]),
        "redo": np.concatenate([np.zeros(len(found.pair), bool), np.ones(n_redo, bool)]),
        "seed_row": np.concatenate([r[found.pair], r[redo]]),
    }
    for i, name in enumerate(UNION):
        columns[f"pair_{name}"] = np.concatenate([found.union[found.pair, i], np.zeros(n_redo, np.int64)])
    for name, field in (
        ("start_a", "start_a"),
        ("end_a", "end_a"),
        ("start_b", "start_b"),
        ("end_b", "end_b"),
        ("length", "length"),
        ("content_chars_a", "content_a"),
        ("content_chars_b", "content_b"),
        ("content_run_a", "run_a"),
        ("content_run_b", "run_b"),
    ):
        columns[name] = np.concatenate([getattr(found, field), np.zeros(n_redo, np.int64)])
    return pa.RecordBatch.from_arrays([pa.array(columns[f.name], type=f.type, from_pandas=True) for f in GROWN], schema=GROWN)


def _a_pages(table: pa.Table, seed_rows: np.ndarray, start: np.ndarray, end: np.ndarray):
    """batch_passages' pages_a for the pairs of these seed rows, whose a windows are these
    characters [start, end): their pages a (the rows of side -1 the grow task cut the windows
    from), or None when one is not in the table (the kernel then cuts each a window on its own,
    from its text)."""
    side = table.column("side").to_numpy()
    page_rows = np.flatnonzero(side == -1)
    doc_a = table.column("doc_a").to_numpy()
    ids = doc_a[page_rows]
    order = np.argsort(ids, kind="stable")
    wanted = doc_a[seed_rows]
    at = np.minimum(np.searchsorted(ids, wanted, sorter=order), max(len(ids) - 1, 0))
    if not len(wanted) or not len(ids) or not (ids[order[at]] == wanted).all():
        return None
    used, page = np.unique(order[at], return_inverse=True)
    return table.column("text").take(pa.array(page_rows[used])).combine_chunks(), page, end


def _offsets(lists: pa.ListArray) -> np.ndarray:
    offsets = lists.offsets.to_numpy()
    return offsets - offsets[0]


def _planned(out: str, cores: int) -> tuple[pa.Table, SidesPlan]:
    """The stored pairs, and the window pass's plan for them."""
    listed = stored_pairs(out)
    return listed, plan_sides(out, listed, REQUESTS, cores)


def _soon(fn, *args) -> Future:
    """fn(*args) in a thread of its own: what the driver reads while a Spark job runs."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="webwinnow-passages")
    try:
        return pool.submit(fn, *args)
    finally:
        pool.shutdown(wait=False)


def run(ctx: StageContext) -> dict:
    spark, cfg, out = ctx.spark, ctx.cfg, ctx.out
    # Few pairs: the driver holds them, read with pyarrow and split by the documents' files
    # while the template's Spark job runs
    few_pairs = row_count(out, "pair_seeds") <= broadcast_rows(spark, 64, BROADCAST_ROWS)
    cores = default_parallelism(spark)
    planned = _soon(_planned, out, cores) if few_pairs else None
    held: list = []  # shared values and frames, unpersisted when the stage is done
    try:
        max_df = read_table_config(out, "candidate_pairs")["max_df"]
        boilerplate = boilerplate_array(spark, out, max_df)
        shared = share(spark, boilerplate, out)
        held.append(shared)
        inject = injected_stages(spark)
        template = template_kgrams(spark, out, cfg, shared, max_df)
        shared_template = share(spark, template, out)
        held.append(shared_template)

        def windows_of(batches):  # without their text: the grow tasks get each page b whole, once
            for batch in batches:
                yield from window_arrow(batch, cfg, shared.value, shared_template.value, texts=False)

        folders = {name: stage_table(out, name) for name in WRITTEN}

        def grown(batches, task: int, whole: bool, pages_b: PagesB | GrowingPages | None = None):
            """REDO rows of the pairs of these rows (sorted by doc_a, doc_b, side) their windows could
            not settle; every other pair, grown in windows around its seeds or in whole texts, the
            task writes: its row of pairs or template_pairs and its passages, as parts of the staged
            tables."""
            writers = [PartWriter(folders[name], task, schema, GROUP_ROWS) for name, schema in WRITTEN.items()]
            try:
                for chunk in pair_chunks(batches):
                    maybe_fail("passages", inject)
                    table = with_a_windows(listed_seeds(chunk), cfg, shared.value, shared_template.value, whole)
                    *written, again = settle(grow_arrow(table, cfg, pages_b), table, min_content(cfg), whole)
                    for writer, batch in zip(writers, written, strict=True):
                        writer.write(batch)
                    yield again
                for writer in writers:
                    writer.close()
            except BaseException:
                for writer in writers:
                    writer.abort()
                raise

        def grown_in_files(plan: SidesPlan, whole: bool) -> pa.Table:
            """REDO rows of the pairs of `plan`, grown by tasks that read the window pass's files
            (stages._sides): the driver holds the pairs."""
            tasks = file_sides(spark, out, plan, cfg, shared, shared_template, held)
            first_task = WHOLE_TASKS if whole else 0

            def grow(batches):
                for batch in batches:
                    for g in batch.column("id").to_pylist():
                        pages_b, rows = bucket_rows(tasks[g])
                        yield from grown(rows, first_task + g, whole, pages_b)

            got = slots(spark, len(tasks)).mapInArrow(grow, spark_schema(REDO)).toArrow()
            return got.cast(REDO)

        def grown_in_spark(seeds, whole: bool):
            """REDO rows of the pairs in `seeds`, grown after Spark's shuffle brought each document
            (side -1), the b windows of its pairs (side 1) and their seeds with their candidate
            columns (side 2) together."""
            first_task = WHOLE_TASKS if whole else 0

            def grow(batches):
                from pyspark import TaskContext

                context = TaskContext.get()
                pages = GrowingPages()
                yield from grown(held_pages(batches, pages), first_task + (context.partitionId() if context else 0), whole, pages)

            parts = shuffle_partitions(spark)
            rows = spark_sides(seeds, texts, windows_of, whole, candidate_types, parts)
            return (
                rows.repartition(parts, "doc_a")
                .sortWithinPartitions("doc_a", "doc_b", "side")
                .mapInArrow(grow, spark_schema(REDO))
            )

        if few_pairs:
            # Few: the driver holds the pairs, one task per documents file reads its own texts
            # (pyarrow), cuts the b windows and sends the a texts, each b window with its pair's
            # seeds and candidate columns: no text goes through the JVM, and no pair through
            # Spark's shuffle.
            assert planned is not None
            listed, plan = planned.result()
            redo = grown_in_files(plan, whole=False)
            redone = redo.num_rows
            if redone:
                # A pair whose spans reach past its windows is grown again from its whole texts
                # (windows without an open edge: never redone).
                grown_in_files(plan_sides(out, whole_requests(listed, redo), REQUESTS + "_whole", cores), whole=True)
        else:
            texts = read_documents(spark, out).filter(F.col("status") == "ok").select("doc_id", "text")
            # each pair's candidate columns come with its seeds: the grow tasks write its row
            candidates = read_table(spark, out, "candidate_pairs")
            candidate_types = candidates.schema
            seeds = packed_pairs(spark, out).join(candidates, ["doc_a", "doc_b"])
            redo_rows = grown_in_spark(seeds, whole=False).persist(cache_level(spark))
            held.append(redo_rows)
            redone = redo_rows.count()
            if redone:
                few = redone <= broadcast_rows(spark, 16, BROADCAST_ROWS)
                again_rows = seeds.join(F.broadcast(redo_rows) if few else redo_rows, ["doc_a", "doc_b"], "left_semi")
                grown_in_spark(again_rows, whole=True).count()
        for name, schema in WRITTEN.items():
            ensure_part(folders[name], schema)
            finish_table(out, name, cfg, "passages")
    except BaseException:
        for name in WRITTEN:
            drop_staged(out, name)
        raise
    finally:
        for frame in reversed(held):
            frame.unpersist()
        if planned is not None:
            planned.exception()  # it writes in REQUESTS' folder: done before that is dropped
        for name in (REQUESTS, REQUESTS + "_whole"):
            drop_staged(out, name)
    row, reasons = passage_stats(spark, out)
    return {
        "passages": row["passages"],
        "pairs": row_count(out, "pairs"),
        "template_pairs": sum(pairs for pairs, _ in reasons.values()),
        "template_only": reasons.get("template", (0, 0))[0],
        "no_passage": reasons.get("no_passage", (0, 0))[0],
        "template_passages": sum(passages for _, passages in reasons.values()),
        "capped_spans": row["capped"] or 0,
        "normalized_chars": row["chars"] or 0,
        "content_chars": row["content"] or 0,
        "boilerplate_passages": row["boilerplate"] or 0,
        "max_df": max_df,
        "template_kgrams": len(template),
        "min_content": min_content(cfg),
        "pairs_grown_from_whole_texts": redone,
    }


#: Up to this many rows of passages and template_pairs, their statistics are summed on the
#: driver (a few columns of numbers, read with pyarrow): no Spark job.
DRIVER_STATS_ROWS = 2_000_000


def passage_stats(spark: SparkSession, out: str) -> tuple[dict, dict]:
    """The stage's sums over its tables: (passages, capped, chars, content, boilerplate) and, per
    template pair reason, (pairs, passages). Spark's sums: nulls left out, NaN above every number."""
    if row_count(out, "passages") + row_count(out, "template_pairs") > DRIVER_STATS_ROWS:
        row = (
            read_table(spark, out, "passages")
            .agg(
                F.count(F.lit(1)).alias("passages"),
                F.sum(F.col("capped").cast("int")).alias("capped"),
                F.sum("length").alias("chars"),
                F.sum(F.least("content_chars_a", "content_chars_b")).alias("content"),
                F.sum((F.col("boilerplate") >= 0.5).cast("int")).alias("boilerplate"),
            )
            .first()
        )
        assert row is not None  # an aggregation has one row
        reasons = {
            r["reason"]: (r["pairs"], r["passages"] or 0)
            for r in read_table(spark, out, "template_pairs")
            .groupBy("reason")
            .agg(F.count(F.lit(1)).alias("pairs"), F.sum("passages").alias("passages"))
            .collect()
        }
        return {name: value or 0 for name, value in row.asDict().items()}, reasons
    got = read_arrow(out, "passages", ["capped", "length", "content_chars_a", "content_chars_b", "boilerplate"])
    share = got.column("boilerplate")
    many = pc.or_kleene(pc.greater_equal(share, 0.5), pc.is_nan(share))  # NaN >= 0.5 in Spark

    def total(values) -> int:
        return pc.sum(values).as_py() or 0

    least = pc.min_element_wise(got.column("content_chars_a"), got.column("content_chars_b"), skip_nulls=True)
    row = {
        "passages": got.num_rows,
        "capped": total(pc.cast(got.column("capped"), pa.int64())),
        "chars": total(got.column("length")),
        "content": total(least),
        "boilerplate": total(pc.cast(many, pa.int64())),
    }
    pairs = read_arrow(out, "template_pairs", ["reason", "passages"]).group_by("reason", use_threads=False)
    summed = pairs.aggregate([([], "count_all"), ("passages", "sum")])
    reasons = {
        r: (n, p or 0)
        for r, n, p in zip(*(summed.column(c).to_pylist() for c in ("reason", "count_all", "passages_sum")), strict=True)
    }
    return row, reasons


def min_content(cfg: RunConfig) -> int:
    """Consecutive content units (on both sides) one passage must hold for its pair to share
    content: t = w + k - 1 by default, the guarantee's length, which a copy of t units always
    holds. Template that template text does not reach (a line without a window of its own, too
    rare next to a block to be a template k-gram) comes in pieces shorter than that."""
    return cfg.passages.min_content or cfg.winnow.w + cfg.winnow.k - 1
