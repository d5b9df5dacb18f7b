"""The passages stage ships side a of every pair as its document's whole text, once per document,
and cuts a's windows in the grow task (with_a_windows). What the grow kernel gets must be exactly
what it got when the window pass cut both sides: the same windows, so the same passages."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import webwinnow
from webwinnow import schemas
from webwinnow.config import RunConfig, WinnowConfig
from webwinnow.core.winnowing import fingerprint_batch
from webwinnow.stages._windows import WINDOW_LISTS, WINDOWS, pair_chunks, window_arrow, with_a_windows
from webwinnow.stages.passages import CANDIDATE, UNION, grow_arrow, settle

SEEDS = schemas.PAIR_SEEDS.field("seeds").type
ROWS = pa.schema([*WINDOWS, ("seeds", SEEDS), *(schemas.CANDIDATE_PAIRS.field(name) for name in CANDIDATE)])
ORDER = [("doc_a", "ascending"), ("doc_b", "ascending"), ("side", "ascending")]


def _corpus(seed: int, wide: bool = False):
    """Pages of random words sharing planted passages (some long, some at a page's edge); `wide`:
    some words of characters of two bytes, and an expansion (ß -> ss)."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 7))) for _ in range(300)]
    vocab += ["café", "straße", "Ωmega", "naïve—x"] if wide else []
    words = lambda n: " ".join(rng.choice(vocab) for _ in range(n))
    shared = [words(rng.randint(8, 120)) for _ in range(6)]
    texts = []
    for _ in range(rng.randint(4, 9)):
        parts = [words(rng.randint(0, 60))]
        for s in rng.sample(shared, rng.randint(1, 4)):
            parts += [s, words(rng.randint(0, 90))]
        texts.append(" ".join(parts))
    return texts


def _pairs(texts, cfg):
    w = cfg.winnow
    fp = fingerprint_batch(pa.array(texts), w.k, w.w, w.robust, unit=w.unit)
    by_doc = [
        dict(zip(fp.hashes[fp.doc == d].tolist(), fp.positions[fp.doc == d].tolist(), strict=True)) for d in range(len(texts))
    ]
    pairs = {}
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            common = sorted(set(by_doc[a]) & set(by_doc[b]))
            if common:
                pairs[(a, b)] = [{"pos_a": by_doc[a][h], "pos_b": by_doc[b][h]} for h in common]
    counts = np.unique(fp.hashes, return_counts=True)
    return pairs, np.sort(counts[0][counts[1] >= 3])  # "boilerplate": in three pages or more


def _windows(texts, requests, cfg, boilerplate, template):
    docs = sorted(requests)
    batch = pa.RecordBatch.from_pydict(
        {"doc_id": docs, "requests": [requests[d] for d in docs], "text": [texts[d] for d in docs]},
        schema=pa.schema(
            [
                ("doc_id", pa.int64()),
                (
                    "requests",
                    pa.list_(
                        pa.struct(
                            [
                                ("doc_a", pa.int64()),
                                ("doc_b", pa.int64()),
                                ("side", pa.int32()),
                                ("lo", pa.int64()),
                                ("hi", pa.int64()),
                            ]
                        )
                    ),
                ),
                ("text", pa.string()),
            ]
        ),
    )
    cut = pa.Table.from_batches(list(window_arrow(batch, cfg, boilerplate, template)), schema=WINDOWS)
    for field in ROWS:
        if field.name not in WINDOWS.names:
            cut = cut.append_column(field, pa.nulls(cut.num_rows, field.type))
    return cut.cast(ROWS)


def _seed_rows(pairs):
    keys = sorted(pairs)
    n = len(keys)
    columns = {f.name: pa.nulls(n, f.type) for f in ROWS}
    columns.update(
        doc_a=pa.array([a for a, _ in keys], pa.int64()),
        doc_b=pa.array([b for _, b in keys], pa.int64()),
        side=pa.array([2] * n, pa.int32()),
        seeds=pa.array([pairs[key] for key in keys], SEEDS),
        source=pa.array([("a", "b", "tie")[(a + b) % 3] for a, b in keys]),
        source_basis=pa.array([None if (a + b) % 3 == 2 else "warc_date" for a, b in keys], pa.string()),
        url_a=pa.array([f"http://x.test/{a}" if b % 4 else None for a, b in keys], pa.string()),
        url_b=pa.array([f"http://x.test/{b}" for a, b in keys], pa.string()),
        shared=pa.array([len(pairs[key]) for key in keys], pa.int64()),
        fp_a=pa.array([a + 7 for a, _ in keys], pa.int64()),
        fp_b=pa.array([b + 7 for _, b in keys], pa.int64()),
        resemblance=pa.array([1 / (a + b + 1) for a, b in keys], pa.float64()),
        containment_a=pa.array([1 / (a + 2) for a, _ in keys], pa.float64()),
        containment_b=pa.array([None if b == 3 else 1 / (b + 2) for _, b in keys], pa.float64()),
    )
    return pa.table(columns, schema=ROWS)


def _doc_rows(texts, docs):
    n = len(docs)
    columns = {f.name: pa.nulls(n, f.type) for f in ROWS}
    columns.update(
        doc_a=pa.array(docs, pa.int64()),
        doc_b=pa.array([-1] * n, pa.int64()),
        side=pa.array([-1] * n, pa.int32()),
        text=pa.array([texts[d] for d in docs], pa.string()),
    )
    return pa.table(columns, schema=ROWS)


def _bounds(seeds, key, whole):
    if whole:
        return 0, 2**62
    return min(s[key] for s in seeds), max(s[key] for s in seeds)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("unit", ["char", "word"])
def test_a_windows_cut_in_the_grow_task_equal_the_window_pass_s(seed, whole, unit):
    # the grow task's side a (whole pages, each cut into units once) against the window pass's
    # (each window cut alone)
    cfg = dataclasses.replace(RunConfig(), winnow=WinnowConfig(k=5 if unit == "char" else 3, w=4, unit=unit))
    texts = _corpus(seed, wide=True)
    pairs, boilerplate = _pairs(texts, cfg)
    assert pairs
    template = boilerplate[::3]
    lost = random.Random(seed).randrange(len(texts))  # a page that is not ok: its pairs get no passages
    both: dict[int, list] = {}
    only_b: dict[int, list] = {}
    for (a, b), seeds in pairs.items():
        lo_a, hi_a = _bounds(seeds, "pos_a", whole)
        lo_b, hi_b = _bounds(seeds, "pos_b", whole)
        if a != lost:
            both.setdefault(a, []).append({"doc_a": a, "doc_b": b, "side": 0, "lo": lo_a, "hi": hi_a})
        if b != lost:
            both.setdefault(b, []).append({"doc_a": a, "doc_b": b, "side": 1, "lo": lo_b, "hi": hi_b})
            only_b.setdefault(b, []).append({"doc_a": a, "doc_b": b, "side": 1, "lo": lo_b, "hi": hi_b})
    seeds = _seed_rows(pairs)

    before = pa.concat_tables([_windows(texts, both, cfg, boilerplate, template), seeds])
    before = before.take(pc.sort_indices(before, ORDER))

    firsts = sorted({a for a, _ in pairs} - {lost})
    shipped = pa.concat_tables([_windows(texts, only_b, cfg, boilerplate, template), seeds, _doc_rows(texts, firsts)])
    shipped = shipped.take(pc.sort_indices(shipped, ORDER))
    after = with_a_windows(shipped, cfg, boilerplate, template, whole)

    # the a windows come before the chunk's rows, which keep their pages' rows (side -1): in order
    # and without those, the same rows as the window pass gives
    windows = after.filter(pc.not_equal(after.column("side"), -1))
    got, want = windows.take(pc.sort_indices(windows, ORDER)).to_pylist(), before.to_pylist()
    assert len(got) == len(want)
    for row, cut in zip(got, want, strict=True):
        if cut["side"] == 0:  # a's windows come without their text: the kernel cuts them from the page
            page = texts[cut["doc_a"]].encode()
            # both cuts' coordinates and the page, for a failure seen once in CI and never since
            seen = {k: (row[k], cut[k]) for k in ("doc_a", "doc_b", "start", "end", "byte_lo", "byte_hi", "norm")}
            assert row["text"] is None and page[row["byte_lo"] : row["byte_hi"]].decode() == cut["text"], (seen, len(page))
            assert row["end"] - row["start"] == len(cut["text"]), (seen, len(page))
            cut["text"] = None
    assert got == want
    grown_before, grown_after = grow_arrow(before, cfg), grow_arrow(after, cfg)
    # seed_row, a row of the table, differs with the layout
    same = lambda table: table.drop_columns(["seed_row"]).to_pylist()
    assert grown_after.num_rows and same(pa.Table.from_batches([grown_after])) == same(pa.Table.from_batches([grown_before]))
    assert lost not in set(grown_after.column("doc_a").to_pylist())

    # in chunks of a few rows a document's pairs span several chunks: each gets the document's row
    for rows in (1, 2, 5):
        chunks = list(pair_chunks(shipped.to_batches(max_chunksize=3), rows=rows))
        assert sum(c.num_rows for c in chunks) >= shipped.num_rows
        grown = pa.Table.from_batches([grow_arrow(with_a_windows(c, cfg, boilerplate, template, whole), cfg) for c in chunks])
        assert same(grown.combine_chunks()) == same(pa.Table.from_batches([grown_before]))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("least", [1, 40])
def test_a_pair_in_one_row_grows_and_settles_as_in_two(seed, whole, least):
    # the driver's path (stages._sides): a pair's seeds, as bytes, and candidate columns in its b
    # window's row; a pair whose page b is not ok in a row of its own. Against the seeds' own rows.
    from webwinnow.stages._sides import PagesB, listed_seeds

    cfg = dataclasses.replace(RunConfig(), winnow=WinnowConfig(k=5, w=4))
    texts = _corpus(seed, wide=True)
    pairs, boilerplate = _pairs(texts, cfg)
    template = boilerplate[::3]
    lost = random.Random(seed).choice(sorted({b for _, b in pairs}))  # a page b that is not ok
    only_b: dict[int, list] = {}
    for (a, b), seeds in pairs.items():
        if b != lost:
            lo, hi = _bounds(seeds, "pos_b", whole)
            only_b.setdefault(b, []).append({"doc_a": a, "doc_b": b, "side": 1, "lo": lo, "hi": hi})
    windows, seed_rows = _windows(texts, only_b, cfg, boilerplate, template), _seed_rows(pairs)
    docs = _doc_rows(texts, sorted({a for a, _ in pairs} - {lost}))
    two = pa.concat_tables([windows, seed_rows, docs])

    at = {(a, b): i for i, (a, b) in enumerate(zip(*(seed_rows.column(c).to_pylist() for c in ("doc_a", "doc_b")), strict=True))}
    rows = pa.array([at[(a, b)] for a, b in zip(*(windows.column(c).to_pylist() for c in ("doc_a", "doc_b")), strict=True)])
    carried = ["seeds", *CANDIDATE]
    merged = windows.drop_columns(carried)
    for name in carried:
        merged = merged.append_column(name, seed_rows.column(name).take(rows))
    orphans = seed_rows.filter(pc.equal(seed_rows.column("doc_b"), lost))
    one = pa.concat_tables([merged.select(ROWS.names), orphans, docs])
    as_bytes = [
        None if x is None else np.array([(p["pos_a"], p["pos_b"]) for p in x], np.int32).tobytes()
        for x in one.column("seeds").to_pylist()
    ]
    one = one.set_column(ROWS.get_field_index("seeds"), pa.field("seeds", pa.binary()), pa.array(as_bytes, pa.binary()))
    assert orphans.num_rows and one.num_rows == two.num_rows - windows.num_rows

    def outcome(table, chunk_rows, pages_b=None):
        table = table.take(pc.sort_indices(table, ORDER))
        grown, settled = [], []
        for chunk in pair_chunks(table.to_batches(max_chunksize=3), rows=chunk_rows):
            rows = with_a_windows(listed_seeds(chunk), cfg, boilerplate, template, whole)
            got = grow_arrow(rows, cfg, pages_b)
            grown += got.drop_columns(["seed_row"]).to_pylist()
            settled += [b.to_pylist() for b in settle(got, rows, least, whole)]
        flat = [sorted(map(repr, (r for part in settled[i::4] for r in part))) for i in range(4)]
        return sorted(map(repr, grown)), flat

    want = outcome(two, 1000)
    assert want[0] and want[1][2] and (want[1][1] or least > 1)  # passages; template pairs, content ones
    for chunk_rows in (1, 2, 5, 1000):
        assert outcome(one, chunk_rows) == want
    # the b windows without their text, found by their bytes in the grow task's pages b
    side = one.column("side").to_numpy()
    text = pa.array([None if s == 1 else t for s, t in zip(side, one.column("text").to_pylist(), strict=True)], pa.string())
    bare = one.set_column(ROWS.get_field_index("text"), "text", text)
    ids = sorted(set(only_b))
    pages_b = PagesB.of(np.array(ids, np.int64), pa.array([texts[d] for d in ids], pa.string()))
    for chunk_rows in (1, 5, 1000):
        assert outcome(bare, chunk_rows, pages_b) == want
    with pytest.raises(ValueError, match="page b"):
        outcome(bare, 1000, PagesB.of(np.array(ids[1:], np.int64), pa.array([texts[d] for d in ids[1:]], pa.string())))


def test_a_chunk_without_documents_or_seeds_grows_nothing():
    cfg = RunConfig()
    texts = ["one page of text " * 20, "another page " * 20]
    rows = _doc_rows(texts, [0])
    out = with_a_windows(rows, cfg, np.zeros(0, np.int64), np.zeros(0, np.int64), False)
    assert out.column("side").to_pylist() == [-1] and grow_arrow(out, cfg).num_rows == 0  # a page, no pair
    seeds = _seed_rows({(0, 1): [{"pos_a": 3, "pos_b": 4}]})
    out = with_a_windows(seeds, cfg, np.zeros(0, np.int64), np.zeros(0, np.int64), False)
    assert out.num_rows == 1 and grow_arrow(out, cfg).num_rows == 0
    assert set(WINDOW_LISTS) < set(WINDOWS.names)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("least", [1, 12, 40, 10**9])
@pytest.mark.parametrize("whole", [False, True])
def test_settle_writes_every_pair_once_and_the_passages_of_content_pairs(seed, least, whole):
    cfg = dataclasses.replace(RunConfig(), winnow=WinnowConfig(k=5, w=4))
    texts = _corpus(seed)
    pairs, boilerplate = _pairs(texts, cfg)
    lost = random.Random(seed).randrange(len(texts))  # a page that is not ok: its pairs have no windows
    requests: dict[int, list] = {}
    for (a, b), seeds in pairs.items():
        for side, doc, key in ((0, a, "pos_a"), (1, b, "pos_b")):
            if doc != lost:
                lo, hi = _bounds(seeds, key, False)
                requests.setdefault(doc, []).append({"doc_a": a, "doc_b": b, "side": side, "lo": lo, "hi": hi})
    chunk = pa.concat_tables([_windows(texts, requests, cfg, boilerplate, boilerplate[::3]), _seed_rows(pairs)])
    chunk = chunk.take(pc.sort_indices(chunk, ORDER))
    grown = grow_arrow(chunk, cfg)
    found, content, template, redo = settle(grown, chunk, least, whole)

    # written out: group the grown rows by pair, by hand
    by_pair: dict[tuple[int, int], list[dict]] = {}
    redone = set()
    for r in grown.to_pylist():
        if r["redo"]:
            redone.add((r["doc_a"], r["doc_b"]))
        else:
            by_pair.setdefault((r["doc_a"], r["doc_b"]), []).append(r)
    assert not redone & set(by_pair)
    candidate = {(r["doc_a"], r["doc_b"]): {n: r[n] for n in CANDIDATE} for r in _seed_rows(pairs).to_pylist()}
    units = [len(webwinnow.normalize(t)[0]) for t in texts]
    want_content, want_template = {}, {}
    for pair in pairs:
        if pair in redone and not whole:
            continue
        ps = by_pair.get(pair, [])
        copied = {n: ps[0][f"pair_{n}"] if ps else 0 for n in UNION}
        row = {
            "doc_a": pair[0],
            "doc_b": pair[1],
            **candidate[pair],
            "passages": len(ps),
            **copied,
            **{
                f"content_share_{x}": copied[f"content_chars_{x}"] / units[doc] if doc != lost and units[doc] else None
                for x, doc in zip("ab", pair, strict=True)
            },
            "longest_content": max((min(p["content_run_a"], p["content_run_b"]) for p in ps), default=0),
        }
        if row["longest_content"] >= least:
            want_content[pair] = row
        else:
            want_template[pair] = {**row, "reason": "template" if ps else "no_passage"}
    assert {(r["doc_a"], r["doc_b"]): r for r in content.to_pylist()} == want_content
    assert {(r["doc_a"], r["doc_b"]): r for r in template.to_pylist()} == want_template
    assert content.num_rows == len(want_content) and template.num_rows == len(want_template)
    assert {(r["doc_a"], r["doc_b"]) for r in redo.to_pylist()} == (set() if whole else redone)
    assert content.schema.equals(schemas.PAIRS)
    assert [(f.name, f.type) for f in template.schema] == [(f.name, f.type) for f in schemas.TEMPLATE_PAIRS]
    assert lost in {a for a, _ in pairs} | {b for _, b in pairs} and any(lost in p for p in want_template)

    want_found = sorted(
        tuple(
            sorted(
                {
                    **{k: v for k, v in r.items() if k in schemas.PASSAGES.names},
                    "source": candidate[pair]["source"],
                    "source_basis": candidate[pair]["source_basis"],
                }.items()
            )
        )
        for pair, ps in by_pair.items()
        if pair in want_content
        for r in ps
    )
    assert sorted(tuple(sorted(r.items())) for r in found.to_pylist()) == want_found
    assert found.schema.equals(schemas.PASSAGES)
    if least == 1:
        assert found.num_rows == sum(len(ps) for ps in by_pair.values()) > 0
    if least == 10**9:
        assert found.num_rows == 0 and content.num_rows == 0


@pytest.mark.parametrize("group_rows", [1, 2, 50])
def test_the_pairs_read_on_the_driver_carry_their_seeds_candidates_and_b_window(tmp_path, group_rows):
    import pyarrow.parquet as pq

    from webwinnow.stages._sides import listed_seeds, stored_pairs

    rng = random.Random(group_rows)
    rows = []
    for a in range(12):
        seeds = [{"pos_a": rng.randint(0, 900), "pos_b": rng.randint(0, 900)} for _ in range(rng.choice([0, 1, 3, 7]))]
        rows.append({"doc_a": a, "doc_b": 100 + a, "seeds": seeds})
    rows[-1]["seeds"] = []  # a pair without seeds last: it asks for no window
    candidates = [
        {"doc_a": r["doc_a"], "doc_b": r["doc_b"], "url_a": f"u{r['doc_a']}", "shared": len(r["seeds"]) + 1, "source": "a"}
        for r in rows
        if r["doc_a"] != 4  # a pair without candidate columns: left out, as Spark's inner join left it out
    ]
    rng.shuffle(candidates)
    for name, table, schema in (
        ("pair_seeds", rows, schemas.PAIR_SEEDS),
        ("candidate_pairs", candidates, schemas.CANDIDATE_PAIRS),
    ):
        folder = tmp_path / name
        folder.mkdir()
        pq.write_table(pa.Table.from_pylist(table, schema=schema), folder / "part-00000.parquet", row_group_size=group_rows)
    got = sorted(listed_seeds(stored_pairs(str(tmp_path))).to_pylist(), key=lambda r: r["doc_a"])
    by_pair = {(c["doc_a"], c["doc_b"]): c for c in candidates}
    want = []
    for r in rows:
        if (r["doc_a"], r["doc_b"]) not in by_pair:
            continue
        c = by_pair[(r["doc_a"], r["doc_b"])]
        pos_b = [s["pos_b"] for s in r["seeds"]]
        want.append(
            {
                "doc_a": r["doc_a"],
                "doc_b": r["doc_b"],
                "lo": min(pos_b) if pos_b else 0,
                "hi": max(pos_b) if pos_b else -1,
                "seeds": r["seeds"],
                **{name: c.get(name) for name in CANDIDATE},
            }
        )
    assert got == want and len(want) == len(rows) - 1


@pytest.mark.parametrize("seed", range(4))
def test_seeds_packed_as_bytes_come_back_as_the_same_lists(seed):
    from webwinnow.stages._sides import SEED_BYTES, listed_seeds, packed_seeds

    rng = random.Random(seed)
    lists = [
        [{"pos_a": rng.randint(0, 2**31 - 1), "pos_b": rng.randint(0, 9)} for _ in range(rng.randint(0, 5))] for _ in range(30)
    ]
    seeds = pa.array(lists, SEEDS)
    for part in (seeds, seeds.slice(7, 11), seeds.slice(29)):  # a slice's lists start inside the values
        packed = packed_seeds(part)
        assert packed.type == SEED_BYTES and [len(b) for b in packed.to_pylist()] == [8 * len(x) for x in part.to_pylist()]
        # as the shuffle hands them on: the rows of pages (null seeds) among them, in chunks
        nulls = pa.nulls(3, SEED_BYTES)
        table = pa.Table.from_batches([pa.record_batch([c], names=["seeds"]) for c in (nulls, packed, nulls)])
        got = listed_seeds(table)
        assert got.schema.field("seeds").type == SEEDS
        assert got.column("seeds").to_pylist() == [None] * 3 + part.to_pylist() + [None] * 3
        assert listed_seeds(got).equals(got)  # lists stay lists
    assert listed_seeds(pa.table({"seeds": pa.nulls(2, SEED_BYTES)})).column("seeds").to_pylist() == [None, None]


@pytest.mark.parametrize("seed", range(5))
def test_pair_rows_finds_each_pairs_windows_in_any_order(seed):
    from webwinnow.stages._windows import pair_rows

    rng = random.Random(seed)
    rows = []  # (doc_a, doc_b, side, carries the seeds)
    for a in range(6):
        rows.append((a, -1, -1, False))  # the page's own row
        for b in rng.sample(range(6, 14), rng.randint(0, 4)):
            if rng.random() < 0.5:  # the seeds in the b window's row (the driver's path)
                rows += [(a, b, 1, True)] + [(a, b, 0, False)] * (rng.random() < 0.8)
            else:  # in a row of their own (side 2); a window may be missing
                rows += [(a, b, s, False) for s in (0, 1, 2) if s == 2 or rng.random() < 0.8]
    rng.shuffle(rows)
    table = pa.table(
        {
            "doc_a": [r[0] for r in rows],
            "doc_b": [r[1] for r in rows],
            "side": pa.array([r[2] for r in rows], pa.int32()),
            "seeds": pa.array([[{"pos_a": 1, "pos_b": 2}] if r[3] else None for r in rows], SEEDS),
        }
    )
    where = {r[:3]: i for i, r in enumerate(rows)}
    seeds, a_rows, b_rows = pair_rows(table)
    assert seeds.tolist() == [i for i, r in enumerate(rows) if r[2] == 2 or r[3]]
    for s, a, b in zip(seeds, a_rows, b_rows, strict=True):
        pair = rows[s][:2]
        assert a == where.get((*pair, 0), -1) and b == where.get((*pair, 1), -1)
        assert b == s or not rows[s][3]
    # without a seeds column, the rows of side 2 are the seed rows
    assert pair_rows(table.drop_columns(["seeds"]))[0].tolist() == [i for i, r in enumerate(rows) if r[2] == 2]


def test_batch_passages_refuses_pages_that_do_not_fit_its_pairs():
    from webwinnow.analysis.batchspans import batch_passages

    one = np.zeros(1, np.int64)
    args = (
        pa.array(["abcdef"]),
        pa.array(["abcdef"]),
        one,
        one,
        one,
        one,
        np.array([0, 1]),
        one,
        one,
        np.array([0, 0]),
        one[:0],
        one[:0],
        3,
    )
    assert batch_passages(*args, pages_a=(pa.array(["abcdef"]), np.array([0]), np.array([6]))).length.tolist() == [6]
    for pages_a in (
        (pa.array(["abcdef"]), np.array([1]), np.array([6])),
        (pa.array(["abcdef"]), np.array([0, 0]), np.array([6])),
    ):
        with pytest.raises(ValueError):
            batch_passages(*args, pages_a=pages_a)


def test_the_pairs_grown_again_ask_for_their_whole_page_b():
    from webwinnow.stages._sides import PAIR_REQUESTS, packed_seeds, whole_requests

    seeds = pa.array([[{"pos_a": i, "pos_b": 2 * i}] * (i % 3) for i in range(8)], SEEDS)
    pairs = pa.table(
        {
            "doc_a": list(range(8)),
            "doc_b": [10 + i for i in range(8)],
            "lo": [5 * i for i in range(8)],
            "hi": [5 * i + 9 for i in range(8)],
            "seeds": packed_seeds(seeds),
            **{name: pa.nulls(8, PAIR_REQUESTS.field(name).type) for name in CANDIDATE},
        }
    ).cast(PAIR_REQUESTS)
    pairs = pairs.set_column(
        PAIR_REQUESTS.get_field_index("url_a"), PAIR_REQUESTS.field("url_a"), pa.array([f"u{i}" for i in range(8)])
    )
    redo = pa.table({"doc_a": [6, 1, 3, 99], "doc_b": [16, 11, 14, 109]})  # (3, 14) and (99, 109) are no pairs
    got = sorted(whole_requests(pairs, redo).to_pylist(), key=lambda r: r["doc_a"])
    want = [{**r, "lo": 0, "hi": 2**62} for r in pairs.to_pylist() if r["doc_a"] in (1, 6)]
    assert got == want and whole_requests(pairs, redo).schema.equals(PAIR_REQUESTS)


def test_batch_passages_refuses_pages_b_that_do_not_fit_its_windows():
    from webwinnow.analysis.batchspans import batch_passages

    one = np.zeros(1, np.int64)
    args = (pa.array(["abcdef"]), None, one, one, one, one, np.array([0, 1]), one, one, np.array([0, 0]), one[:0], one[:0], 3)
    page = pa.array(["xxabcdef"])
    # b's window is bytes 2..8 of its page: the same span as from its own text
    got = batch_passages(*args, pages_b=(page, np.array([0]), np.array([2]), np.array([8])))
    assert got.length.tolist() == [6] and got.end_b.tolist() == [6]
    for pages_b in (
        (page, np.array([1]), np.array([2]), np.array([8])),  # no such page
        (page, np.array([0]), np.array([2]), np.array([9])),  # past its end
        (page, np.array([0]), np.array([5]), np.array([2])),  # backwards
        (page, np.array([0, 0]), np.array([2]), np.array([8])),
    ):
        with pytest.raises(ValueError):
            batch_passages(*args, pages_b=pages_b)
    with pytest.raises(ValueError, match="texts, its pages"):
        batch_passages(*args)  # side b: neither windows nor pages


def _pages(ids, chars):
    from webwinnow.stages._sides import OkPages

    order = np.argsort(ids)
    return OkPages(np.array(ids)[order], np.zeros(len(ids), np.int64), np.array(chars)[order])


def test_grow_tasks_hold_each_page_b_once_and_split_until_a_task_fits(monkeypatch):
    from webwinnow.stages import _sides
    from webwinnow.stages._exchange import spread

    rng = random.Random(3)
    pairs = [(a, b) for a in range(200) for b in rng.sample(range(200, 260), 5)]
    table = pa.table({"doc_a": [a for a, _ in pairs], "doc_b": [b for _, b in pairs], "hi": [10] * len(pairs)})
    ids = list(range(260))
    pages = _pages(ids, [1000] * 200 + [50_000] * 60)
    assert _sides.grow_tasks(table, pages, 2) == 4  # 60 pages b of 50,000 characters: far below TASK_BYTES

    def held(tasks):
        bucket = spread(table.column("doc_a").to_numpy()) % np.uint64(tasks)
        per = [{b for (a, b), g in zip(pairs, bucket, strict=True) if g == t} for t in range(tasks)]
        return max(len(p) for p in per) * 50_000 + 200 * 1000 / tasks

    for limit in (held(4) * 2, held(8) * 2, held(16) * 2):
        monkeypatch.setattr(_sides, "TASK_BYTES", int(limit))
        tasks = _sides.grow_tasks(table, pages, 2)
        assert held(tasks) * 2 <= limit and (tasks == 4 or held(tasks // 2) * 2 > limit)
    monkeypatch.setattr(_sides, "TASK_BYTES", 1)  # no count of tasks fits: stop at the most per core
    assert _sides.grow_tasks(table, pages, 2) == 2 * _sides.MOST_TASKS_PER_CORE
    # a pair without seeds (hi -1) or whose page b is not ok holds no page b: the pages a fit 4
    monkeypatch.setattr(_sides, "TASK_BYTES", 2 * 200 * 1000 // 4)
    assert _sides.grow_tasks(table, pages, 2) > 4
    assert _sides.grow_tasks(table.set_column(2, "hi", pa.array([-1] * len(pairs))), pages, 2) == 4
    assert _sides.grow_tasks(table, _pages(ids[:200], [1000] * 200), 2) == 4


def test_the_window_pass_files_give_each_grow_task_its_rows_in_order_and_its_pages_b(tmp_path):
    from webwinnow.stages._exchange import spread
    from webwinnow.stages._sides import GROW_ROWS, PAGE_ROWS, GrowFiles, _bucket_name, _write_buckets, bucket_rows

    rng = random.Random(5)
    tasks = 3
    rows = [(rng.randint(0, 40), rng.randint(0, 40), rng.choice([-1, 1, 2])) for _ in range(300)]

    def grow_rows(part):
        n = len(part)
        columns = {f.name: pa.nulls(n, f.type) for f in GROW_ROWS}
        columns.update(
            doc_a=pa.array([r[0] for r in part], pa.int64()),
            doc_b=pa.array([r[1] for r in part], pa.int64()),
            side=pa.array([r[2] for r in part], pa.int32()),
        )
        return pa.RecordBatch.from_pydict(columns, schema=GROW_ROWS)

    pages = {(g, b): f"page {b} " * (b + 1) for g in range(tasks) for b in rng.sample(range(100, 140), 12)}
    keys = sorted(pages)
    page_rows = pa.RecordBatch.from_pydict(
        {"task": [g for g, _ in keys], "doc_id": [b for _, b in keys], "text": [pages[k] for k in keys]}, schema=PAGE_ROWS
    )
    files = [GrowFiles([], []) for _ in range(tasks)]
    for task, batches in enumerate(([grow_rows(rows[:100]), page_rows], [grow_rows(rows[100:])])):
        wrote = _write_buckets(iter(batches), str(tmp_path), task, tasks)
        for t, g, p in zip(*(wrote.column(c).to_pylist() for c in ("task", "bucket", "pages")), strict=True):
            (files[g].pages if p else files[g].rows).append(_bucket_name(str(tmp_path), t, g, p))
    assert sum(len(f.pages) for f in files) == tasks and not any(p.startswith("rows") for f in files for p in f.pages)
    seen = 0
    for g, f in enumerate(files):
        found, batches = bucket_rows(f)
        got = [(r["doc_a"], r["doc_b"], r["side"]) for b in batches for r in b.to_pylist()]
        mine = [r for r in rows if int(spread(np.array([r[0]]))[0] % np.uint64(tasks)) == g]
        largest = {a: max(b for x, b, _ in mine if x == a) for a, _, _ in mine}  # by_partner's order
        assert got == sorted(mine, key=lambda r: (largest[r[0]], *r))
        seen += len(got)
        ids = sorted(b for t, b in pages if t == g)
        texts, at, lo, hi = found.windows(np.array(ids[::-1]), np.zeros(len(ids)), np.ones(len(ids)))
        assert [texts[i].as_py() for i in at] == [pages[(g, b)] for b in ids[::-1]]
        with pytest.raises(ValueError, match="page b"):
            found.windows(np.array([99]), np.zeros(1), np.ones(1))
    assert seen == len(rows)
    empty_pages, empty_rows = bucket_rows(GrowFiles([], []))
    assert not len(empty_pages.ids) and list(empty_rows) == []


def test_growing_pages_find_every_page_added_in_pieces():
    from webwinnow.stages._sides import GrowingPages

    rng = random.Random(2)
    pages = GrowingPages()
    held: dict[int, str] = {}
    for piece in range(6):
        ids = rng.sample(range(1000), rng.randint(0, 40))
        ids = [i for i in ids if i not in held]
        texts = ["ünï " * rng.randint(0, 9000) + str(i) for i in ids]  # past the first buffer's 64 KiB
        # a slice of an array (its offsets do not start at 0) every other time
        given = pa.array(["before", *texts], pa.string()).slice(1) if piece % 2 else pa.array(texts, pa.string())
        pages.add(np.array(ids, np.int64), given)
        held.update(zip(ids, texts, strict=True))
        wanted = rng.sample(sorted(held), min(len(held), 25))
        if not wanted:
            continue
        lo = np.array([rng.randint(0, len(held[d].encode()) // 2) for d in wanted])
        hi = np.array([len(held[d].encode()) for d in wanted])
        found, at, got_lo, got_hi = pages.windows(np.array(wanted, np.int64), lo, hi)
        assert [found[int(i)].as_py() for i in at] == [held[d] for d in wanted]
        assert (got_lo == lo).all() and (got_hi == hi).all()
    with pytest.raises(ValueError, match="page b"):
        pages.windows(np.array([5000], np.int64), np.zeros(1), np.ones(1))
    assert GrowingPages().windows(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))[1].tolist() == []


def test_spark_grow_tasks_hold_the_pages_b_their_rows_bring():
    from webwinnow.stages._sides import GROW_ROWS, GrowingPages
    from webwinnow.stages._sparksides import held_pages
    from webwinnow.stages._windows import PAGE_B

    def rows(part):
        n = len(part)
        columns = {f.name: pa.nulls(n, f.type) for f in GROW_ROWS}
        columns.update(
            doc_a=pa.array([r[0] for r in part], pa.int64()),
            doc_b=pa.array([r[1] for r in part], pa.int64()),
            side=pa.array([r[2] for r in part], pa.int32()),
            text=pa.array([r[3] for r in part], pa.string()),
        )
        return pa.RecordBatch.from_pydict(columns, schema=GROW_ROWS)

    batches = [
        rows([(1, -1, -1, "page a one"), (1, 7, PAGE_B, "page b seven"), (1, 7, 1, None)]),
        rows([(2, 8, PAGE_B, "page b eight")]),  # a batch of pages only
        rows([(2, 8, 1, None), (3, 7, 1, None)]),
    ]
    pages = GrowingPages()
    kept = list(held_pages(iter(batches), pages))
    assert [r["side"] for b in kept for r in b.to_pylist()] == [-1, 1, 1, 1]
    found, at, _, _ = pages.windows(np.array([8, 7, 7], np.int64), np.zeros(3), np.ones(3))
    assert [found[int(i)].as_py() for i in at] == ["page b eight", "page b seven", "page b seven"]


def test_seeds_line_up_with_sorted_candidates_as_a_join_would_pair_them():
    """stages._sides._matched: the candidates stage writes pair_seeds in any order and
    candidate_pairs sorted; the seeds are sorted to line up with them. Tables that do not hold
    the same pairs are joined; either way each pair's seeds row meets its candidates row."""
    import pyarrow as pa

    from webwinnow.stages._sides import _matched

    rng = np.random.default_rng(7)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(-(2**62), 2**62, (300, 2))})
    cand = pa.table({"doc_a": [a for a, _ in pairs], "doc_b": [b for _, b in pairs]})
    shuffled = rng.permutation(len(pairs))
    seeds = pa.table({"doc_a": cand.column("doc_a").take(shuffled), "doc_b": cand.column("doc_b").take(shuffled)})

    def met(s, c, candidates):
        c = np.arange(candidates.num_rows) if c is None else c.to_numpy()
        got = list(zip(seeds.column("doc_a").take(s).to_pylist(), seeds.column("doc_b").take(s).to_pylist()))
        want = list(zip(candidates.column("doc_a").take(c).to_pylist(), candidates.column("doc_b").take(c).to_pylist()))
        return got, want

    s, c = _matched(seeds, cand)
    assert c is None  # lined up: the candidates' columns are taken as they are
    got, want = met(s, c, cand)
    assert got == want == pairs
    fewer = cand.slice(1)  # a pair the candidates do not hold: joined
    s, c = _matched(seeds, fewer)
    assert c is not None
    got, want = met(s, c, fewer)
    assert got == want and sorted(got) == pairs[1:]


@pytest.mark.parametrize("unit", ["char", "word"])
@pytest.mark.parametrize("kept", [1 << 22, 2500, 300])
def test_pages_b_cut_once_for_the_pairs_that_share_them_give_each_windows_spans(unit, kept, monkeypatch):
    # batch_passages with end_b keeps pages b cut into units for the pairs near one another that
    # share them; without, it cuts each pair's window. Stores of 2,500 and 300 units are let go often,
    # and holds no page of some: those take the windows' way, as does a page whose characters
    # fold to more units than it has bytes (ΐ: two bytes, three units)
    from webwinnow.analysis import batchspans as spans
    from webwinnow.core.winnowing import units

    monkeypatch.setattr(spans, "B_CACHE_UNITS", kept)
    monkeypatch.setattr(spans._KEPT, "arrays", None, raising=False)
    rng = random.Random(11)
    words = ["alpha", "beta", "Gamma", "délta", "ωmega", "ΐota", "x", "yy", "zzz", "ﬁn"]

    def text(n):
        return " ".join(rng.choice(words) for _ in range(n)) + rng.choice([".", "", " ΐΐΐΐ" * 40])

    a_texts = [text(rng.randint(20, 80)) for _ in range(8)]
    pages, copied = [], []
    for p in range(6):
        source = p % len(a_texts)
        cut = rng.randint(0, len(a_texts[source]) // 2)
        head = text(rng.randint(0, 30)) + " "
        pages.append(head + a_texts[source][cut:] + " " + text(rng.randint(0, 200)))
        copied.append((source, len(head) - cut))  # page position = a position + shift
    rows = []
    for a in range(len(a_texts)):  # the pairs of one page a together, pages b shared among them
        for b in sorted(rng.sample(range(len(pages)), 4) + [p for p in range(len(pages)) if copied[p][0] == a]):
            starts, ends = units(pages[b], unit)[1:]
            if not len(starts):
                continue
            i = rng.randrange(len(starts) // 2 + 1)
            j = rng.randint(i + 1, len(starts))
            lo, hi = int(starts[i]), int(ends[j - 1])  # whole units, as the window pass cuts them
            a_starts = units(a_texts[a], unit)[1]
            seeds = [(int(rng.choice(a_starts)), int(rng.choice(starts[i:j]))) for _ in range(rng.randint(1, 3))]
            source, shift = copied[b]
            if source == a:  # where the page copies page a: seeds of the same units
                shared = [int(x) for x in a_starts if lo <= x + shift < hi and x + shift in set(starts.tolist())]
                seeds += [(x, x + shift) for x in rng.sample(shared, min(len(shared), 4))]
            rows.append((a, b, lo, hi, seeds))
    n = len(rows)
    seed_offsets = np.cumsum([0, *(len(r[4]) for r in rows)])
    common = (
        pa.array([a_texts[r[0]] for r in rows]),
        None,
        np.zeros(n, np.int64),
        np.array([r[2] for r in rows], np.int64),
        np.zeros(n, np.int64),
        np.full(n, 3, np.int64),
        seed_offsets,
        np.array([s[0] for r in rows for s in r[4]], np.int64),
        np.array([s[1] for r in rows for s in r[4]], np.int64),
        np.zeros(n + 1, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        3,
    )
    byte = lambda t, c: len(t[:c].encode("utf-8"))
    pages_b = (
        pa.array(pages),
        np.array([r[1] for r in rows], np.int64),
        np.array([byte(pages[r[1]], r[2]) for r in rows], np.int64),
        np.array([byte(pages[r[1]], r[3]) for r in rows], np.int64),
    )
    windows = spans.batch_passages(*common, unit=unit, pages_b=pages_b)
    once = spans.batch_passages(*common, unit=unit, pages_b=pages_b, end_b=np.array([r[3] for r in rows], np.int64))
    assert len(set(windows.pair.tolist())) >= 3  # spans grew: pages copy the texts a
    for field in dataclasses.fields(windows):
        assert np.array_equal(getattr(once, field.name), getattr(windows, field.name), equal_nan=True), field.name
    with pytest.raises(ValueError, match="end_b"):
        spans.batch_passages(*common, unit=unit, pages_b=pages_b, end_b=np.zeros(n + 1, np.int64))


def test_a_grow_tasks_documents_a_come_by_their_largest_partner():
    from webwinnow.stages._sides import by_partner

    rng = random.Random(3)
    rows = [(rng.randint(0, 30), rng.choice([-1, rng.randint(0, 60)]), 0) for _ in range(400)]
    rows = [(a, b, -1 if b == -1 else rng.choice([1, 2])) for a, b, _ in rows]
    doc_a, doc_b, side = (np.array(c, np.int64) for c in zip(*rows, strict=True))
    got = [rows[i] for i in by_partner(doc_a, doc_b, side)]
    largest = {a: max(b for x, b, _ in rows if x == a) for a, _, _ in rows}
    assert got == sorted(rows, key=lambda r: (largest[r[0]], r[0], r[1], r[2]))
    assert by_partner(*(np.zeros(0, np.int64),) * 3).tolist() == []
