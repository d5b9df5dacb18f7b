"""The window pass (window_arrow) normalizes each page once for its units, its fingerprints and
its template k-grams: every column of every window equals what the definitions give, written
out from naive.py one page at a time (units, k-gram hashes, winnowing or 0 mod p)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pyarrow as pa
import pytest

from webwinnow.analysis.spans import text_windows
from webwinnow.analysis.template import template_intervals, window_intervals
from webwinnow.config import RunConfig, WinnowConfig
from webwinnow.core.codetokens import code_tokens
from webwinnow.stages._windows import WINDOWS, margin, window_arrow

import naive

REQUEST = pa.struct([("doc_a", pa.int64()), ("doc_b", pa.int64()), ("side", pa.int32()), ("lo", pa.int64()), ("hi", pa.int64())])
BATCH = pa.schema([("doc_id", pa.int64()), ("requests", pa.list_(REQUEST)), ("text", pa.string())])


def _pages(rng: random.Random, code: bool) -> list[str]:
    if code:
        lines = ["int x = 1;", "for (i = 0; i < n; i++) {", "  s += a[i] * 2;", "}", "return s;", "/* café */", 'y = f(x, "ß");']
        shared = [" ".join(rng.choice(lines) for _ in range(rng.randint(3, 12))) for _ in range(3)]
        return [" ".join(rng.choice(lines + shared) for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 6))]
    vocab = ["straße", "ﬁle", "İstanbul", "naïve", "東京", "x", "ab", "data", "Ünïcode", "z9", "—", "q"]
    shared = [" ".join(rng.choice(vocab) for _ in range(rng.randint(5, 40))) for _ in range(3)]
    pages = []
    for _ in range(rng.randint(1, 6)):
        parts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 50)))]
        parts += rng.sample(shared, rng.randint(0, 3))
        pages.append(" , ".join(parts))
    return pages


def _units(text: str, unit: str, k: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, list[int]]:
    """(unit starts, unit ends or None, token codes or None, every k-gram's hash), from naive.py."""
    if unit == "char":
        norm, offsets = naive.normalize(text)
        return np.array(offsets, np.int64), None, None, [naive.kgram_hash(norm[i : i + k]) for i in range(len(norm) - k + 1)]
    if unit == "word":
        found = naive.words(text)
        codes = [naive.word_code(word) for word, _, _ in found]
        hashes = [naive.codes_hash(codes[i : i + k]) for i in range(len(codes) - k + 1)]
        return np.array([s for _, s, _ in found], np.int64), np.array([e for _, _, e in found], np.int64), None, hashes
    codes, starts, ends = code_tokens(text, "c")
    hashes = [naive.codes_hash(codes[i : i + k].tolist()) for i in range(len(codes) - k + 1)]
    return starts, ends, codes, hashes


def _expected(text, requests, cfg, boilerplate, template):
    w = cfg.winnow
    starts, ends, codes, hashes = _units(text, w.unit, w.k)
    chosen = naive.select_mod_p(hashes, w.mod_p) if w.mod_p else naive.winnow(hashes, w.w, w.robust)
    positions = starts[chosen] if chosen else np.zeros(0, np.int64)
    flags = np.array([hashes[i] in boilerplate for i in chosen], bool)
    selectable = set(naive.select_mod_p(hashes, w.mod_p)) if w.mod_p else set(range(len(hashes)))
    kgram_starts = np.array([i for i, h in enumerate(hashes) if h in template and i in selectable], np.int64)
    t_lo, t_hi = template_intervals(
        np.searchsorted(starts, positions), flags, w.k, w.w, len(starts), kgram_starts if template else None
    )
    lo = np.array([r["lo"] for r in requests], np.int64)
    hi = np.array([r["hi"] for r in requests], np.int64)
    start, end, opened = text_windows(starts, lo, hi, w.k, margin(cfg), ends)
    rows = []
    for r, request in enumerate(requests):
        win_lo, win_hi = np.searchsorted(starts, start[r : r + 1]), np.searchsorted(starts, end[r : r + 1])
        _, tpl_lo, tpl_hi = window_intervals(t_lo, t_hi, win_lo, win_hi)
        inside = [i for i, p in enumerate(positions.tolist()) if start[r] <= p < end[r]] if request["side"] == 0 else []
        units = range(int(win_lo[0]), int(win_hi[0])) if codes is not None else range(0)
        rows.append(
            {
                "doc_a": request["doc_a"],
                "doc_b": request["doc_b"],
                "side": request["side"],
                "start": int(start[r]),
                "end": int(end[r]),
                "open": int(opened[r]),
                "norm": len(starts),  # the whole page's units: doc_stats.norm_chars
                # the window's bytes in the page's UTF-8
                "byte_lo": len(text[: start[r]].encode()),
                "byte_hi": len(text[: end[r]].encode()),
                "text": text[start[r] : end[r]],
                "fp_pos": [int(positions[i]) for i in inside],
                "fp_boilerplate": [bool(flags[i]) for i in inside],
                "tpl_lo": tpl_lo.tolist(),
                "tpl_hi": tpl_hi.tolist(),
                "tok_code": [int(codes[u]) for u in units] if codes is not None else [],
                "tok_start": [int(starts[u] - start[r]) for u in units],
                "tok_end": [int(ends[u] - start[r]) for u in units] if ends is not None else [],
            }
        )
    return rows, positions


CASES = [
    ("char", 5, 4, True, 0),
    ("char", 3, 6, False, 0),
    ("char", 4, 1, True, 3),
    ("word", 3, 4, True, 0),
    ("word", 2, 3, True, 2),
    ("code", 4, 3, True, 0),
]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-k{c[1]}-w{c[2]}-{'robust' if c[3] else 'standard'}-p{c[4]}" for c in CASES])
def test_every_window_column_equals_the_definitions(seed, case):
    unit, k, w, robust, mod_p = case
    cfg = dataclasses.replace(RunConfig(), winnow=WinnowConfig(k=k, w=w, robust=robust, mod_p=mod_p, unit=unit))
    rng = random.Random(seed)
    texts = _pages(rng, unit == "code")
    every = sorted({h for t in texts for h in _units(t, unit, k)[3]})
    boilerplate = np.array(sorted(rng.sample(every, len(every) // 4)), np.int64) if every else np.zeros(0, np.int64)
    template = np.array(sorted(rng.sample(every, len(every) // 5)), np.int64) if every and seed % 2 else np.zeros(0, np.int64)
    batch_rows, expected = [], []
    for doc, text in enumerate(texts):
        _, positions = _expected(text, [], cfg, set(boilerplate.tolist()), set(template.tolist()))
        seeds = positions.tolist() or [0]
        requests = []
        for _ in range(rng.randint(0 if doc % 3 == 1 else 1, 4)):  # a page may be asked for no window
            a, b = sorted(rng.sample(seeds, 2)) if len(seeds) > 1 else (seeds[0], seeds[0])
            requests.append({"doc_a": doc, "doc_b": 100 + len(requests), "side": rng.randint(0, 1), "lo": a, "hi": b})
        batch_rows.append({"doc_id": doc, "requests": requests, "text": text})
        expected += _expected(text, requests, cfg, set(boilerplate.tolist()), set(template.tolist()))[0]
    batch = pa.RecordBatch.from_pylist(batch_rows, schema=BATCH)
    got = pa.Table.from_batches(list(window_arrow(batch, cfg, boilerplate, template)), schema=WINDOWS).to_pylist()
    assert len(got) == len(expected)
    for row, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == e, (row, {key: (g[key], e[key]) for key in g if g[key] != e[key]})
    # without their text (a grow task that holds the pages): the same rows, the text null
    bare = pa.Table.from_batches(list(window_arrow(batch, cfg, boilerplate, template, texts=False)), schema=WINDOWS)
    assert bare.column("text").null_count == bare.num_rows and bare.to_pylist() == [{**e, "text": None} for e in expected]


def test_page_windows_refuses_arrays_that_do_not_fit_together():
    from webwinnow.analysis.boilerplate import HashSet
    from webwinnow.analysis.windows import page_windows

    doc = np.frombuffer(b"abcdefgh", np.uint8)
    offsets, hashes = np.arange(8, dtype=np.int64), np.arange(6, dtype=np.int64)  # k = 3
    table = HashSet(np.zeros(0, np.int64)).table()
    none = np.zeros(0, np.int64)
    good = dict(doc=doc, offsets=offsets, ends=none, hashes=hashes, selected=np.array([0, 3]), lo=np.array([0]),
                hi=np.array([3]), side=np.array([0]), k=3, w=2, margin=2, mod_p=0, boilerplate=none,
                boilerplate_table=table, template=none, template_table=table)  # fmt: skip
    start, end, *_ = page_windows(**good)
    assert (start.tolist(), end.tolist()) == ([0], [8])
    for bad in (
        {"k": 0},
        {"hi": np.array([3, 4])},
        {"ends": np.arange(3, dtype=np.int64)},
        {"hashes": np.arange(5, dtype=np.int64)},
        {"selected": np.array([6])},
        {"template_table": np.zeros(3, bool)},
    ):
        with pytest.raises(ValueError):
            page_windows(**{**good, **bad})


def test_batch_windows_refuses_pages_and_requests_that_do_not_fit_together():
    from webwinnow.analysis.boilerplate import HashSet
    from webwinnow.analysis.windows import batch_windows

    data = np.frombuffer(b"abcdefghijklmnop", np.uint8)
    table = HashSet(np.zeros(0, np.int64)).table()
    none = np.zeros(0, np.int64)
    good = dict(data=data, text_starts=np.array([0, 8]), text_ends=np.array([8, 16]), req_offsets=np.array([0, 1, 1]),
                lo=np.array([0]), hi=np.array([3]), side=np.array([0]), words=False, k=3, w=2, robust=True, margin=2,
                mod_p=0, boilerplate=none, boilerplate_table=table, template=none, template_table=table)  # fmt: skip
    start, end, *_ = batch_windows(**good)
    assert (start.tolist(), end.tolist()) == ([0], [8])
    for bad in (
        {"k": 0},
        {"margin": -1},
        {"text_ends": np.array([8])},
        {"text_ends": np.array([8, 17])},
        {"req_offsets": np.array([0, 1])},
        {"hi": np.array([3, 4])},
        {"template_table": np.zeros(3, bool)},
    ):
        with pytest.raises(ValueError):
            batch_windows(**{**good, **bad})


def test_a_characters_byte_is_found_from_its_checkpoint_in_any_order():
    # windows' edges come in any order (no sort): each is found from the byte of the nearest
    # checkpoint below it, against the prefix's UTF-8 length
    from webwinnow.analysis import windows as W

    rng = random.Random(5)
    alphabet = "ab é€𝄞ß\u0301Ω"
    for n in (0, 1, 63, 64, 65, 200, 1000):
        text = "".join(rng.choice(alphabet) for _ in range(n))
        doc = np.frombuffer(text.encode(), np.uint8)
        marks = np.empty(len(doc) // W.CHECKPOINT + 2, np.int64)
        chars = 0
        for j, b in enumerate(doc.tolist()):
            if b & 0xC0 != 0x80:
                if chars % W.CHECKPOINT == 0:
                    marks[chars // W.CHECKPOINT] = j
                chars += 1
        assert chars == len(text)
        targets = list(range(n + 3))
        rng.shuffle(targets)
        for c in targets:
            assert W._char_byte(doc, marks, c, chars) == len(text[:c].encode()), (n, c)
