"""The passages stage's windows: the stretch of a page's text a pair's spans are grown in.

A window runs from `margin` normalized characters before a pair's first seed on that page to
`margin` after its last, and carries its fingerprints (side a), whether they are boilerplate,
its template text and, for code, its tokens. The window pass cuts b's windows where the pages
are stored (window_arrow); the grow task cuts a's from the page's whole text, which travels once
per page (with_a_windows), with the same code, so both are what whole texts would give.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.boilerplate import HashSet
from ..analysis.spans import gather_ranges
from ..analysis.windows import batch_windows, page_windows
from ..config import RunConfig
from ..core import kernel
from ..core.charfold import fold_table
from ..core.winnowing import _text_buffers, fingerprint_batch
from ._frames import sorted_chunks

#: Rows per chunk of (pair, side) rows given to the span kernel: they carry texts.
PAIR_CHUNK_ROWS = 3000
#: One row per (pair, side): the window of that side's text, and for side a its fingerprints.
WINDOWS = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("doc_b", pa.int64()),
        ("side", pa.int32()),
        ("start", pa.int64()),
        # the window's characters end here (its text's length, for a window sent without it)
        ("end", pa.int64()),
        ("open", pa.int32()),
        # the whole page's normalized units (doc_stats.norm_chars): its pairs' content shares
        ("norm", pa.int64()),
        # the window's bytes in its page's UTF-8 text: where a grow task that holds the page finds it
        ("byte_lo", pa.int64()),
        ("byte_hi", pa.int64()),
        # the window's text; null where the grow task cuts it from its page (window_arrow's texts)
        ("text", pa.string()),
        ("fp_pos", pa.list_(pa.int64())),
        ("fp_boilerplate", pa.list_(pa.bool_())),
        # the window's template text: intervals of its normalized indices (webwinnow.analysis.template)
        ("tpl_lo", pa.list_(pa.int64())),
        ("tpl_hi", pa.list_(pa.int64())),
        # code: the window's tokens (codes, ranges from the window's start), lexed once per page here
        # rather than once per pair and side by the span kernel (Pygments lexes about 1 MB/s). They are
        # most of what a code pair moves, so the ranges are 32-bit: a window is a slice of one page.
        ("tok_code", pa.list_(pa.int64())),
        ("tok_start", pa.list_(pa.int32())),
        ("tok_end", pa.list_(pa.int32())),
    ]
)
#: The side of a row that carries a page b's whole text to a grow task (Spark's path).
PAGE_B = -2
#: WINDOWS' values and list columns: null in the rows that carry a whole document or a pair's seeds.
WINDOW_VALUES = ("start", "end", "open", "norm", "byte_lo", "byte_hi")
WINDOW_LISTS = ("fp_pos", "fp_boilerplate", "tpl_lo", "tpl_hi", "tok_code", "tok_start", "tok_end")
#: Window text per output batch of the window pass. Memory, not speed: a batch is copied on its
#: way to the JVM, and its rows wait in the shuffle.
WINDOW_BATCH_BYTES = 32 << 20
#: Text normalized and fingerprinted per kernel call: the kernel holds about 30 bytes per character
#: (offsets, hashes, selections), so a 2,000-document Arrow batch of long pages, taken whole, held
#: gigabytes per worker (2.5 GiB on the docs corpus).
TEXT_SLICE_BYTES = 16 << 20


def margin(cfg: RunConfig) -> int:
    """Normalized characters sent beyond a pair's outermost seeds: spans grow past them through
    text without shared fingerprints below the cap (boilerplate, or a k-gram's tail). A template
    pair's span runs along the navigation it shares, from a seed at one end: 4(w + k) left 21%
    of a template-dense crawl's pairs to grow again from whole texts (a second pass that cost
    more than the wider windows), 8(w + k) none; on the docs corpus both settle every pair and
    cost the same."""
    return 8 * (cfg.winnow.w + cfg.winnow.k)


def text_slices(batch: pa.RecordBatch, limit: int = TEXT_SLICE_BYTES) -> Iterator[pa.RecordBatch]:
    """Zero-copy slices of batch holding about `limit` bytes of its text column each (a longer
    text is a slice of its own)."""
    offsets = np.asarray(pc.binary_length(batch.column("text")).fill_null(0), np.int64).cumsum()
    first = 0
    while first < batch.num_rows:
        base = offsets[first - 1] if first else 0
        last = int(np.searchsorted(offsets, base + limit, side="right"))
        last = max(last, first + 1)
        yield batch.slice(first, last - first)
        first = last


#: Text per kernel call when every k-gram's hash is kept (w = 1): 8 bytes of hash and 8 of
#: position per character, on top of the kernel's own arrays.
KGRAM_SLICE_BYTES = 4 << 20


def every_kgram(texts: pa.Array, cfg: RunConfig):
    """Every k-gram of the texts (w = 1 selects them all): k-gram i of a text starts at its
    normalized unit i."""
    w = cfg.winnow
    return fingerprint_batch(texts, w.k, 1, False, mod_p=w.mod_p, unit=w.unit, lexer=w.lexer)


def window_arrow(
    batch: pa.RecordBatch, cfg: RunConfig, boilerplate: np.ndarray, template: np.ndarray | None = None, texts: bool = True
) -> Iterator[pa.RecordBatch]:
    """WINDOWS rows for a batch of (doc_id, requests: [(doc_a, doc_b, side, lo, hi)], text).

    The texts stay in Arrow's UTF-8 buffer: each is normalized once, for its units, its k-grams'
    hashes, its fingerprints and its template k-grams alike, and the windows are cut as byte
    ranges of the buffer (no Python string per text or window). Output batches hold at most
    WINDOW_BATCH_BYTES of window text. `texts` False: the windows' text is null, for a grow task
    that holds their pages and finds each window there by its bytes (byte_lo, byte_hi): a pair's
    windows, cut each on its own, held ten times their pages' text on the docs corpus.
    """
    boilerplate_set = HashSet(boilerplate)
    template_set = HashSet(np.zeros(0, np.int64) if template is None else template)
    for part in text_slices(batch, TEXT_SLICE_BYTES):
        yield from _slice_windows(part, cfg, boilerplate_set, template_set, texts)


def _slice_windows(
    batch: pa.RecordBatch, cfg: RunConfig, boilerplate: HashSet, template: HashSet, texts: bool = True
) -> Iterator[pa.RecordBatch]:
    w = cfg.winnow
    data, text_starts, text_ends = _text_buffers(batch.column("text"))
    requests = batch.column("requests")
    offsets = requests.offsets.to_numpy()
    offsets = (offsets - offsets[0]).astype(np.int64)
    values = requests.flatten()
    fields = {name: values.field(name).to_numpy(zero_copy_only=False) for name in ("doc_a", "doc_b", "side", "lo", "hi")}
    fields.update({name: fields[name].astype(np.int64) for name in ("side", "lo", "hi")})
    if w.unit == "code":
        yield from _code_windows(batch, cfg, boilerplate, template, texts, data, text_starts, text_ends, offsets, fields)
        return
    # characters and words: every page of the slice in one kernel call
    (start, end, opened, text_lo, text_hi, norm, fp_len, tpl_len, fp_pos, fp_flag, tpl_lo, tpl_hi) = batch_windows(
        data, text_starts, text_ends, offsets, fields["lo"], fields["hi"], fields["side"], w.unit == "word",
        w.k, w.w, w.robust, margin(cfg), w.mod_p, *_lookup(boilerplate), *_lookup(template),
    )  # fmt: skip
    page_at = np.repeat(np.asarray(text_starts, np.int64), np.diff(offsets))
    fp_at, tpl_at = np.r_[0, np.cumsum(fp_len)], np.r_[0, np.cumsum(tpl_len)]
    # batches of about WINDOW_BATCH_BYTES of window text
    held = np.cumsum(text_hi - text_lo) if texts else np.zeros(len(start), np.int64)
    cuts = np.searchsorted(held, np.arange(WINDOW_BATCH_BYTES, int(held[-1]) if len(held) else 0, WINDOW_BATCH_BYTES)) + 1
    bounds = np.unique(np.r_[0, cuts, len(start)].clip(0, len(start)))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        parts = {
            "byte_lo": [page_at[a:b] + text_lo[a:b]],
            "byte_hi": [page_at[a:b] + text_hi[a:b]],
            "page_at": [page_at[a:b]],
            "start": [start[a:b]],
            "end": [end[a:b]],
            "open": [opened[a:b]],
            "norm": [norm[a:b]],
            "fp_len": [fp_len[a:b]],
            "fp_pos": [fp_pos[fp_at[a] : fp_at[b]]],
            "fp_flag": [fp_flag[fp_at[a] : fp_at[b]]],
            "tpl_len": [tpl_len[a:b]],
            "tpl_lo": [tpl_lo[tpl_at[a] : tpl_at[b]]],
            "tpl_hi": [tpl_hi[tpl_at[a] : tpl_at[b]]],
            "tok_len": [np.zeros(b - a, np.int64)],
            "tok_code": [],
            "tok_start": [],
            "tok_end": [],
        }
        yield _window_batch(data, parts, {name: col[a:b] for name, col in fields.items()}, texts)


def _code_windows(
    batch, cfg, boilerplate, template, texts, data, text_starts, text_ends, offsets, fields
) -> Iterator[pa.RecordBatch]:
    """_slice_windows a page at a time, for code: its tokens come from a lexer in Python."""
    w = cfg.winnow
    fold, expand = fold_table()
    parts: dict[str, list[np.ndarray]] = {
        name: []
        for name in (
            "byte_lo",
            "byte_hi",
            "page_at",
            "start",
            "end",
            "open",
            "norm",
            "fp_len",
            "fp_pos",
            "fp_flag",
            "tpl_len",
            "tpl_lo",
            "tpl_hi",
            "tok_len",
            "tok_code",
            "tok_start",
            "tok_end",
        )
    }
    first_request = held = 0
    k, sets = w.k, (_lookup(boilerplate), _lookup(template))
    for row in range(batch.num_rows):
        lo, hi = offsets[row], offsets[row + 1]
        doc = data[text_starts[row] : text_ends[row]]
        norm_offsets, norm_ends, codes, hashes = _doc_units(doc, w.unit, w.lexer, k, fold, expand)
        selected = kernel._mod_p(hashes, w.mod_p) if w.mod_p else kernel._winnow(hashes, w.w, w.robust)
        # Code windows are cut at token boundaries like words: they carry the tokens the page's
        # lexing made, so a window need not lex alone as its text does (whole <pre> blocks, sent
        # per pair, made a 12 GB shuffle on the docs corpus).
        (start, end, opened, text_lo, text_hi, win_lo, win_hi, fp_len, fp_pos, fp_flag, tpl_len, tpl_lo, tpl_hi) = page_windows(
            doc,
            np.ascontiguousarray(norm_offsets, np.int64),
            _NO_ENDS if norm_ends is None else np.ascontiguousarray(norm_ends, np.int64),
            hashes,
            selected,
            fields["lo"][lo:hi],
            fields["hi"][lo:hi],
            fields["side"][lo:hi],
            k,
            w.w,
            margin(cfg),
            w.mod_p,
            *sets[0],
            *sets[1],
        )  # fmt: skip
        parts["byte_lo"].append(text_starts[row] + text_lo)
        parts["byte_hi"].append(text_starts[row] + text_hi)
        parts["page_at"].append(np.full(hi - lo, text_starts[row], np.int64))
        parts["start"].append(start)
        parts["end"].append(end)
        parts["open"].append(opened)
        parts["norm"].append(np.full(hi - lo, len(norm_offsets), np.int64))
        for name, value in (("fp_len", fp_len), ("fp_pos", fp_pos), ("fp_flag", fp_flag)):
            parts[name].append(value)
        for name, value in (("tpl_len", tpl_len), ("tpl_lo", tpl_lo), ("tpl_hi", tpl_hi)):
            parts[name].append(value)
        tokens = (win_hi - win_lo) if codes is not None else np.zeros(hi - lo, np.int64)
        index = np.repeat(win_lo - np.concatenate([[0], np.cumsum(tokens)[:-1]]), tokens) + np.arange(tokens.sum())
        parts["tok_len"].append(tokens)
        if codes is not None and norm_ends is not None:
            parts["tok_code"].append(codes[index])
            parts["tok_start"].append(norm_offsets[index] - np.repeat(start, tokens))
            parts["tok_end"].append(norm_ends[index] - np.repeat(start, tokens))
        held += int((parts["byte_hi"][-1] - parts["byte_lo"][-1]).sum()) if texts else 0
        if held >= WINDOW_BATCH_BYTES or row == batch.num_rows - 1:
            yield _window_batch(data, parts, {name: col[first_request:hi] for name, col in fields.items()}, texts)
            parts = {name: [] for name in parts}
            first_request, held = hi, 0


#: A page of characters has no unit ends (a unit is one character long).
_NO_ENDS = np.zeros(0, np.int64)


def _lookup(hashes: HashSet) -> tuple[np.ndarray, np.ndarray]:
    """A set's sorted members and its table of their low bits, for _in_set."""
    return hashes.members, hashes.table()


def _doc_units(
    doc: np.ndarray, unit: str, lexer: str, k: int, fold: np.ndarray, expand: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray]:
    """The starts of a UTF-8 text's units, their ends (None for characters: start + 1), for code
    the tokens' codes, and the hashes of all its k-grams (k-gram i starts at unit i): from one
    normalization, as fingerprint_batch makes them."""
    if unit == "code":
        from ..core.codetokens import code_tokens

        codes, starts, ends = code_tokens(doc.tobytes().decode("utf-8", "surrogatepass"), lexer)
        return starts, ends, codes, kernel._kgram_hashes(codes, k)
    chars, offsets = kernel._normalize(doc, fold, expand)
    if unit == "word":
        from ..core.units import _words

        words, starts, ends = _words(chars, offsets)
        return starts, ends, None, kernel._kgram_hashes(words, k)
    return offsets, None, None, kernel._kgram_hashes(chars, k)


def _char_bytes(doc: np.ndarray) -> np.ndarray | None:
    """Byte offset of every character of a UTF-8 text and of its end; None for ASCII (the same)."""
    if not len(doc) or doc.max() < 0x80:
        return None
    return np.append(np.flatnonzero((doc & 0xC0) != 0x80), len(doc))


def _window_batch(
    data: np.ndarray, parts: dict[str, list[np.ndarray]], fields: dict[str, np.ndarray], texts: bool = True
) -> pa.RecordBatch:
    cat = lambda name, dtype: np.concatenate(parts[name]).astype(dtype) if parts[name] else np.empty(0, dtype)
    byte_lo, byte_hi, page_at = cat("byte_lo", np.int64), cat("byte_hi", np.int64), cat("page_at", np.int64)
    if texts:
        gathered, text_offsets = gather_ranges(data, byte_lo, byte_hi)
        text = pa.StringArray.from_buffers(len(byte_lo), pa.py_buffer(text_offsets.astype(np.int32)), pa.py_buffer(gathered))
    else:
        text = pa.nulls(len(byte_lo), pa.string())
    fp_offsets = pa.array(np.concatenate([[0], np.cumsum(cat("fp_len", np.int64))]).astype(np.int32))
    tpl_offsets = pa.array(np.concatenate([[0], np.cumsum(cat("tpl_len", np.int64))]).astype(np.int32))
    tok_offsets = pa.array(np.concatenate([[0], np.cumsum(cat("tok_len", np.int64))]).astype(np.int32))
    return pa.RecordBatch.from_arrays(
        [
            pa.array(fields["doc_a"]),
            pa.array(fields["doc_b"]),
            pa.array(fields["side"].astype(np.int32)),
            pa.array(cat("start", np.int64)),
            pa.array(cat("end", np.int64)),
            pa.array(cat("open", np.int32)),
            pa.array(cat("norm", np.int64)),
            pa.array(byte_lo - page_at),
            pa.array(byte_hi - page_at),
            text,
            pa.ListArray.from_arrays(fp_offsets, pa.array(cat("fp_pos", np.int64))),
            pa.ListArray.from_arrays(fp_offsets, pa.array(cat("fp_flag", bool))),
            pa.ListArray.from_arrays(tpl_offsets, pa.array(cat("tpl_lo", np.int64))),
            pa.ListArray.from_arrays(tpl_offsets, pa.array(cat("tpl_hi", np.int64))),
            *(
                pa.ListArray.from_arrays(tok_offsets, pa.array(cat(name, dtype)))
                for name, dtype in (("tok_code", np.int64), ("tok_start", np.int32), ("tok_end", np.int32))
            ),
        ],
        schema=WINDOWS,
    )


def pair_chunks(batches, rows: int = PAIR_CHUNK_ROWS) -> Iterator[pa.Table]:
    """Tables of about `rows` rows sorted by (doc_a, doc_b, side) that never split a pair, each
    holding the whole-text row (side -1) of every document a it has pairs of: a document in more
    pairs than a chunk holds goes to each of its chunks, so a page in thousands of pairs (a mirror
    farm) does not make a chunk of all of its pairs' windows."""
    carry = None
    for chunk in sorted_chunks(batches, ["doc_a", "doc_b"], rows=rows):
        side, doc_a = chunk.column("side").to_numpy(), chunk.column("doc_a").to_numpy()
        if carry is not None and side[0] != -1 and carry.column("doc_a")[0].as_py() == doc_a[0]:
            chunk = pa.concat_tables([carry, chunk])
            side, doc_a = chunk.column("side").to_numpy(), chunk.column("doc_a").to_numpy()
        last = np.flatnonzero((side == -1) & (doc_a == doc_a[-1]))
        carry = chunk.slice(int(last[0]), 1) if len(last) else None
        yield chunk


def seed_rows(table: pa.Table) -> np.ndarray:
    """Whether each row of the table carries a pair's seeds (and candidate columns): a row of
    its own (side 2), or the pair's b window (side 1) when the window pass sent them with it."""
    side = table.column("side").to_numpy()
    carries = side == 2
    if "seeds" in table.column_names:
        carries |= (side == 1) & table.column("seeds").is_valid().to_numpy(zero_copy_only=False)
    return carries


def pair_rows(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per seed row of the table (seed_rows), in table order: (the seed rows, the row of its
    pair's a window (side 0), of its b window (side 1)), -1 where the pair has none. The rows
    may come in any order: found by their keys, so no column is copied to put them in order."""
    doc_a, doc_b = table.column("doc_a").to_numpy(), table.column("doc_b").to_numpy()
    side = table.column("side").to_numpy()
    order = np.lexsort((side, doc_b, doc_a))
    a, b = doc_a[order], doc_b[order]
    group = np.cumsum(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]) - 1 if len(order) else order
    of_group = np.full((2, int(group[-1]) + 1 if len(group) else 0), -1, np.int64)
    for s in (0, 1):
        at = np.flatnonzero(side[order] == s)
        of_group[s, group[at]] = order[at]
    seeds = np.flatnonzero(seed_rows(table))
    where = np.empty(len(side), np.int64)
    where[order] = group
    return seeds, of_group[0, where[seeds]], of_group[1, where[seeds]]


def with_a_windows(chunk: pa.Table, cfg: RunConfig, boilerplate: np.ndarray, template: np.ndarray, whole: bool) -> pa.Table:
    """grow_arrow's input for a chunk of rows, each document a's together and sorted by (doc_b,
    side), that holds, per document a, its whole text (side -1), then per pair its b window (side 1) and seeds (with
    the b window, or side 2: seed_rows): side a's windows are cut here, from the pairs' seeds,
    exactly as the window pass cuts b's, and put before the chunk's rows (pair_rows finds each
    pair's rows by their keys; no column is copied to sort them)."""
    side = chunk.column("side").to_numpy()
    docs = np.flatnonzero(side == -1)
    rest = chunk
    # the three columns read here, not the rows whole with their windows' lists (0.04 CPU-s a
    # worker on the docs corpus)
    seeded = rest.select(["doc_a", "doc_b", "seeds"]).filter(pa.array(seed_rows(rest)))
    if not len(docs) or not seeded.num_rows:
        return rest
    seeds = seeded.column("seeds").combine_chunks()
    starts = seeds.offsets.to_numpy() - seeds.offsets[0].as_py()
    if whole:
        lo = np.zeros(seeded.num_rows, np.int64)
        hi = np.full(seeded.num_rows, 2**62, np.int64)
    else:  # a pair always has seeds
        pos_a = seeds.flatten().field("pos_a").to_numpy(zero_copy_only=False).astype(np.int64)
        lo, hi = np.minimum.reduceat(pos_a, starts[:-1]), np.maximum.reduceat(pos_a, starts[:-1])
    pair_a = seeded.column("doc_a").to_numpy()
    doc_ids = chunk.column("doc_a").to_numpy()[docs]
    # a document's pairs are together, the documents in any order (stages._sides.by_partner)
    by_a = np.argsort(pair_a, kind="stable")
    first, last = np.searchsorted(pair_a, doc_ids, "left", sorter=by_a), np.searchsorted(pair_a, doc_ids, "right", sorter=by_a)
    index = np.concatenate([by_a[f:e] for f, e in zip(first.tolist(), last.tolist(), strict=True)])
    request = pa.StructArray.from_arrays(
        [
            pa.array(pair_a[index]),
            pa.array(seeded.column("doc_b").to_numpy()[index]),
            pa.array(np.zeros(len(index), np.int32)),
            pa.array(lo[index]),
            pa.array(hi[index]),
        ],
        names=["doc_a", "doc_b", "side", "lo", "hi"],
    )
    offsets = pa.array(np.concatenate([[0], np.cumsum(last - first)]).astype(np.int32))
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(doc_ids),
            pa.ListArray.from_arrays(offsets, request),
            chunk.column("text").take(pa.array(docs)).combine_chunks(),
        ],
        names=["doc_id", "requests", "text"],
    )
    # without their text: the kernel cuts them from the pages (batch_passages' pages_a)
    cut = pa.Table.from_batches(list(window_arrow(batch, cfg, boilerplate, template, texts=False)), schema=WINDOWS)
    for field in rest.schema:  # the seeds and source columns: null in a window's row
        if field.name not in WINDOWS.names:
            cut = cut.append_column(field, pa.nulls(cut.num_rows, field.type))
    cut = cut.select(rest.schema.names).cast(rest.schema)
    return pa.concat_tables([cut, rest])
