"""Template text and content characters, against the definition written out character by character."""

from __future__ import annotations

import random

import numpy as np
import pytest

import webwinnow as ww
from webwinnow.analysis.batchspans import batch_passages
from webwinnow.analysis.spans import _normalized, copied_passages, text_windows
from webwinnow.analysis.template import block_intervals, edge_kgrams, template_intervals, window_intervals

import naive


def _naive_mask(norm_positions: list[int], flags: list[bool], k: int, w: int, n: int) -> list[bool]:
    """The definition: a boilerplate fingerprint's k-gram, the stretch between two consecutive
    boilerplate fingerprints at most g = max(w, k) apart, and the text before the first (after the
    last) when it is at most g from the text's start (its last k-gram) are template."""
    mask = [False] * n
    marked = [p for p, f in zip(norm_positions, flags) if f]
    g = max(w, k)
    for p in marked:
        for i in range(p, min(p + k, n)):
            mask[i] = True
    for p, q in zip(marked, marked[1:]):
        if q - p <= g:
            for i in range(p, q):
                mask[i] = True
    if marked and marked[0] <= g:
        for i in range(marked[0]):
            mask[i] = True
    if marked and (n - k) - marked[-1] <= g:
        for i in range(marked[-1], n):
            mask[i] = True
    return mask


def _mask(lo: np.ndarray, hi: np.ndarray, n: int) -> list[bool]:
    mask = [False] * n
    for a, b in zip(lo.tolist(), hi.tolist()):
        assert 0 <= a < b <= n
        for i in range(a, b):
            mask[i] = True
    return mask


@pytest.mark.parametrize("seed", range(30))
def test_template_intervals_are_the_definition(seed):
    rng = random.Random(seed)
    k, w, n = rng.randint(1, 12), rng.randint(1, 15), rng.randint(0, 300)
    positions = sorted(rng.sample(range(max(n - k + 1, 0)), min(rng.randint(0, 60), max(n - k + 1, 0))))
    flags = [rng.random() < rng.choice([0.2, 0.6, 0.95]) for _ in positions]
    lo, hi = template_intervals(np.array(positions, np.int64), np.array(flags, bool), k, w, n)
    assert (np.diff(lo) > 0).all() and (lo[1:] > hi[:-1]).all()  # sorted, disjoint, not touching
    assert _mask(lo, hi, n) == _naive_mask(positions, flags, k, w, n)


@pytest.mark.parametrize("seed", range(30))
def test_template_kgrams_add_their_own_kgrams(seed):
    rng = random.Random(seed)
    k, w, n = rng.randint(1, 12), rng.randint(1, 15), rng.randint(1, 300)
    positions = sorted(rng.sample(range(max(n - k + 1, 0)), min(rng.randint(0, 40), max(n - k + 1, 0))))
    flags = [rng.random() < 0.5 for _ in positions]
    kgrams = rng.sample(range(max(n - k + 1, 0)), min(rng.randint(0, 20), max(n - k + 1, 0)))
    lo, hi = template_intervals(np.array(positions, np.int64), np.array(flags, bool), k, w, n, np.array(kgrams, np.int64))
    assert (np.diff(lo) > 0).all() and (lo[1:] > hi[:-1]).all()
    want = _naive_mask(positions, flags, k, w, n)
    for s in kgrams:
        for i in range(s, min(s + k, n)):
            want[i] = True
    assert _mask(lo, hi, n) == want


@pytest.mark.parametrize("seed", range(30))
def test_edge_kgrams_are_those_within_w_of_a_block(seed):
    rng = random.Random(seed)
    k, w, n = rng.randint(1, 12), rng.randint(1, 15), rng.randint(1, 300)
    positions = sorted(rng.sample(range(max(n - k + 1, 0)), min(rng.randint(0, 40), max(n - k + 1, 0))))
    flags = [rng.random() < 0.3 for _ in positions]
    lo, hi = block_intervals(np.array(positions, np.int64), np.array(flags, bool), k, w, n)
    starts = np.arange(max(n - k + 1, 0))
    got = edge_kgrams(lo, hi, starts, k, w)
    for s in starts.tolist():  # w or fewer positions before a block, or after its last k-gram
        near = any(a - w <= s < a or b - k < s <= b - k + w for a, b in zip(lo.tolist(), hi.tolist()))
        assert got[s] == near, (s, lo, hi)


@pytest.mark.parametrize("seed", range(20))
def test_a_batch_of_pages_gives_each_pages_edge_hashes(seed):
    """page_edge_hashes, one kernel call for many pages, against block_intervals and edge_kgrams
    page by page: k-grams at text offsets (not 0, 1, 2...), repeated hashes, pages without
    fingerprints, without boilerplate, with one block or many."""
    from webwinnow.analysis.template import page_edge_hashes

    rng = random.Random(seed)
    k, w = rng.randint(1, 12), rng.randint(1, 15)
    hashes, starts, kb, fp_starts, fp_flags, fp_lo, fp_hi, norms, want = [], [], [0], [], [], [], [], [], []
    for _ in range(rng.randint(0, 12)):
        n = rng.randint(0, 250)  # normalized units
        count = max(n - k + 1, 0)
        offsets = np.cumsum(np.array([rng.randint(1, 3) for _ in range(count)], np.int64))  # where each k-gram starts
        page_hashes = np.array([rng.randint(0, 30) for _ in range(count)], np.int64)  # few values: repeats
        chosen = sorted(rng.sample(range(count), min(rng.randint(0, 40), count)))
        flags = [rng.random() < rng.choice([0.0, 0.3, 0.9]) for _ in chosen]
        fp_lo.append(len(fp_starts))
        fp_starts += offsets[chosen].tolist()
        fp_flags += flags
        fp_hi.append(len(fp_starts))
        lo, hi = block_intervals(np.array(chosen, np.int64), np.array(flags, bool), k, w, n)
        near = edge_kgrams(lo, hi, np.arange(count), k, w)
        want.append(np.unique(page_hashes[near]))
        hashes += page_hashes.tolist()
        starts += offsets.tolist()
        kb.append(len(hashes))
        norms.append(n)
    got = page_edge_hashes(
        np.array(hashes, np.int64), np.array(starts, np.int64), np.array(kb), np.array(fp_starts, np.int64),
        np.array(fp_flags, bool), np.array(fp_lo, np.int64), np.array(fp_hi, np.int64), np.array(norms, np.int64), k, w,
    )  # fmt: skip
    expected = np.concatenate(want) if want else np.zeros(0, np.int64)
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("seed", range(12))
def test_pages_fingerprinted_in_the_kernel_give_the_definitions_edge_hashes(seed):
    """batch_edge_hashes, which normalizes, hashes and winnows each page itself, against the
    definition page by page: every k-gram's hash (kgram_hashes), naive winnowing (or selection
    mod p) for the fingerprints, block_intervals and edge_kgrams over k-gram indices. Shared
    navigation lines, characters that fold to two units (ß), punctuation, short and empty pages,
    characters and words, robust or not."""
    from webwinnow.analysis.boilerplate import HashSet
    from webwinnow.analysis.template import batch_edge_hashes
    from webwinnow.core.winnowing import _text_buffers, units

    rng = random.Random(seed)
    unit = "word" if seed % 2 else "char"
    k, w = (rng.randint(2, 5), rng.randint(2, 8)) if unit == "word" else (rng.randint(3, 12), rng.randint(2, 15))
    robust, mod_p = seed % 3 != 0, (7 if seed % 4 == 3 else 0)
    vocab = [
        "straße",
        "Maß",
        "ﬁle",
        "naïve",
        "ÉTÉ",
        "x1",
        "über",
        *("".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 6))) for _ in range(40)),
    ]
    navs = [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))) for _ in range(3)]
    pages = []
    for _ in range(rng.randint(5, 25)):
        parts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40))) for _ in range(3)]
        for nav in rng.sample(navs, rng.randint(0, 3)):
            parts.insert(rng.randint(0, len(parts)), nav)
        pages.append(rng.choice([", ", ". ", "\n"]).join(parts))
    pages += ["", "a"]
    per_page = [ww.kgram_hashes(text, k, unit)[0] for text in pages]
    selected = [naive.select_mod_p(h.tolist(), mod_p) if mod_p else naive.winnow(h.tolist(), w, robust) for h in per_page]
    seen: dict[int, int] = {}
    for h, chosen in zip(per_page, selected):
        for value in set(h[chosen].tolist()):
            seen[value] = seen.get(value, 0) + 1
    boilerplate = np.array(sorted(v for v, n in seen.items() if n >= 3), np.int64)
    want = []
    for text, h, chosen in zip(pages, per_page, selected):
        flags = np.isin(h[chosen], boilerplate)
        norm = len(units(text, unit)[0])
        lo, hi = block_intervals(np.array(chosen, np.int64), flags, k, w, norm)
        want.append(np.unique(h[edge_kgrams(lo, hi, np.arange(len(h)), k, w)]))
    data, starts, ends = _text_buffers(pages)
    bp = HashSet(boilerplate)
    got = batch_edge_hashes(data, starts, ends, unit == "word", k, w, robust, mod_p, bp.members, bp.table())
    assert got.tolist() == np.concatenate(want).tolist()
    assert len(boilerplate) and len(got)  # the case is not empty


def test_batch_edge_hashes_check_their_input():
    from webwinnow.analysis.template import batch_edge_hashes

    data, table = np.frombuffer(b"abc", np.uint8), np.zeros(1024, bool)
    none = np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="a start and an end"):
        batch_edge_hashes(data, np.array([0]), none, False, 2, 2, True, 0, none, table)
    with pytest.raises(ValueError, match="within the data"):
        batch_edge_hashes(data, np.array([0]), np.array([4]), False, 2, 2, True, 0, none, table)
    with pytest.raises(ValueError, match="k and w"):
        batch_edge_hashes(data, np.array([0]), np.array([3]), False, 0, 2, True, 0, none, table)
    with pytest.raises(ValueError, match="power-of-two"):
        batch_edge_hashes(data, np.array([0]), np.array([3]), False, 2, 2, True, 0, none, np.zeros(1000, bool))


def test_page_edge_hashes_check_their_bounds():
    from webwinnow.analysis.template import page_edge_hashes

    one = np.array([1], np.int64)
    with pytest.raises(ValueError, match="k and w"):
        page_edge_hashes(one, one, np.array([0, 1]), one, np.array([True]), np.array([0]), np.array([1]), one, 0, 3)
    with pytest.raises(ValueError, match="a row per page"):
        page_edge_hashes(one, one, np.array([0]), one, np.array([True]), np.array([0]), np.array([1]), one, 2, 3)
    with pytest.raises(ValueError, match="within the arrays"):
        page_edge_hashes(one, one, np.array([0, 2]), one, np.array([True]), np.array([0]), np.array([1]), one, 2, 3)
    with pytest.raises(ValueError, match="within the arrays"):
        page_edge_hashes(one, one, np.array([0, 1]), one, np.array([True]), np.array([0]), np.array([2]), one, 2, 3)


def test_a_line_too_short_for_a_window_is_found_by_its_own_frequency():
    """A 70-character licence line after a page's navigation block, in every page: winnowing
    selects the block's k-grams in every page (it is longer than t), but which of the line's
    k-grams it selects depends on the page around it. Counting the k-grams next to the blocks
    finds all of the line's, in every page, and nothing of the pages' own text."""
    import pyarrow as pa

    from webwinnow.analysis.boilerplate import HashSet
    from webwinnow.config import RunConfig
    from webwinnow.stages.passages import _edge_counts

    rng = random.Random(5)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(3000)]

    def prose(n: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(n))

    nav = prose(60)
    line = "Distributed under the Boost Software License, Version 1.0, see LICENSE"
    pages = [f"{nav}. {line}. {prose(200)}" for _ in range(40)]
    cfg = RunConfig()
    k, w = cfg.winnow.k, cfg.winnow.w
    fp = ww.fingerprint_batch(pages, k, w)
    hashes, docs = np.unique(np.concatenate([np.unique(fp.hashes[fp.doc == d]) for d in range(40)]), return_counts=True)
    boilerplate = hashes[docs > 6]
    counts = _edge_counts(pa.array(pages), cfg, HashSet(boilerplate))
    found = dict(zip(counts.column("hash").to_pylist(), counts.column("docs").to_pylist()))
    line_hashes = set(ww.fingerprint(line, k=k, w=1)[0].tolist())
    assert line_hashes and all(found.get(h) == 40 for h in line_hashes)
    shared = set(ww.fingerprint(f"{nav}. {line}.", k=k, w=1)[0].tolist())
    assert {h for h, v in found.items() if v > 6} <= shared  # nothing of the pages' own prose


@pytest.mark.parametrize("seed", range(10))
def test_window_intervals_clip_and_shift(seed):
    rng = random.Random(seed)
    n = 400
    lo, hi = template_intervals(
        np.array(sorted(rng.sample(range(380), 40)), np.int64), np.array([rng.random() < 0.5 for _ in range(40)]), 8, 12, n
    )
    win_lo = np.array(sorted(rng.randint(0, n) for _ in range(20)), np.int64)
    win_hi = np.array([min(n, a + rng.randint(0, 120)) for a in win_lo], np.int64)
    counts, wlo, whi = window_intervals(lo, hi, win_lo, win_hi)
    whole = _mask(lo, hi, n)
    at = 0
    for a, b, c in zip(win_lo.tolist(), win_hi.tolist(), counts.tolist()):
        assert _mask(wlo[at : at + c], whi[at : at + c], b - a) == whole[a:b]
        at += c
    assert at == len(wlo)


def test_a_page_of_template_is_template_end_to_end():
    """Winnowing picks a fingerprint in every window of w k-grams: inside a long template every
    character is covered once the gaps are filled, though the k-grams alone leave holes."""
    k, w = 50, 100
    rng = random.Random(1)
    nav = " ".join(
        rng.choice(["Home", "About", "Documentation", "Index", "Search", "Contact", "News"]) + str(rng.randint(0, 99))
        for _ in range(300)
    )
    hashes, positions = ww.fingerprint(nav, k=k, w=w)
    codes, offsets = _normalized(nav)
    norm_positions = np.searchsorted(offsets, positions)
    lo, hi = template_intervals(norm_positions, np.ones(len(hashes), bool), k, w, len(codes))
    assert (lo.tolist(), hi.tolist()) == ([0], [len(codes)])
    holes = _mask(norm_positions, norm_positions + k, len(codes)).count(False)
    assert holes > 0  # the k-grams alone do not cover it


def _content_case(rng: random.Random, k: int, w: int):
    """Two pages sharing a navigation bar (boilerplate), a content passage next to it, and other text."""
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzé") for _ in range(rng.randint(2, 8))) for _ in range(300)]
    text = lambda n: " ".join(rng.choice(words) for _ in range(n))
    nav = "Home · Products · Support · Downloads · Community · About us · Contact"
    copied = text(rng.randint(3, 40))
    a = f"{text(rng.randint(0, 20))} {nav} {copied} {text(rng.randint(0, 30))}"
    b = f"{nav} {text(rng.randint(0, 5))} {copied} {text(rng.randint(0, 30))} {nav}"
    return a, b, nav


@pytest.mark.parametrize("margin", [40, 1000])
def test_content_characters_of_spans_are_those_outside_each_sides_template(margin):
    rng = random.Random(margin)
    k, w = 10, 8
    nav_hashes = set()
    cases = []
    for _ in range(30):
        a, b, nav = _content_case(rng, k, w)
        nav_hashes |= set(naive.kgram_hashes(nav, k)[0])
        cases.append((a, b))
    boilerplate = np.array(sorted(nav_hashes), np.int64)
    inputs: dict[str, list] = {
        name: []
        for name in (
            "text_a",
            "text_b",
            "base_a",
            "base_b",
            "open_a",
            "open_b",
            "pos_a",
            "pos_b",
            "seed_n",
            "fp_pos",
            "fp_flag",
            "fp_n",
        )
    }
    templates: dict[str, list] = {"a": [], "b": []}
    masks = []
    for a, b in cases:
        fa, fb = ww.fingerprint(a, k=k, w=w), ww.fingerprint(b, k=k, w=w)
        seeds = [(p, q) for h, p in zip(*fa) for g, q in zip(*fb) if h == g]
        pos_a = np.array([s[0] for s in seeds], np.int64)
        pos_b = np.array([s[1] for s in seeds], np.int64)
        side_masks = []
        for x, text, (hashes, positions), pos in (("a", a, fa, pos_a), ("b", b, fb, pos_b)):
            codes, offsets = _normalized(text)
            norm_positions = np.searchsorted(offsets, positions)
            flags = np.isin(hashes, boilerplate)
            t_lo, t_hi = template_intervals(norm_positions, flags, k, w, len(codes))
            side_masks.append((_naive_mask(norm_positions.tolist(), flags.tolist(), k, w, len(codes)), offsets))
            if len(pos):
                start, end, opened = text_windows(offsets, pos.min(keepdims=True), pos.max(keepdims=True), k, margin)
            else:
                start, end, opened = np.array([0]), np.array([len(text)]), np.array([0])
            win_lo, win_hi = np.searchsorted(offsets, start), np.searchsorted(offsets, end)
            templates[x].append(window_intervals(t_lo, t_hi, win_lo, win_hi))
            inputs[f"text_{x}"].append(text[int(start[0]) : int(end[0])])
            inputs[f"base_{x}"].append(int(start[0]))
            inputs[f"open_{x}"].append(int(opened[0]))
            if x == "a":
                keep = (positions >= start[0]) & (positions < end[0])
                inputs["fp_pos"].append(positions[keep])
                inputs["fp_flag"].append(flags[keep])
                inputs["fp_n"].append(int(keep.sum()))
        inputs["pos_a"].append(pos_a)
        inputs["pos_b"].append(pos_b)
        inputs["seed_n"].append(len(seeds))
        masks.append(side_masks)

    def offsets(counts):
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    tpl = {
        x: (
            offsets([int(t[0].sum()) for t in templates[x]]),
            np.concatenate([t[1] for t in templates[x]]),
            np.concatenate([t[2] for t in templates[x]]),
        )
        for x in "ab"
    }
    got = batch_passages(
        inputs["text_a"],
        inputs["text_b"],
        np.array(inputs["base_a"]),
        np.array(inputs["base_b"]),
        np.array(inputs["open_a"]),
        np.array(inputs["open_b"]),
        offsets(inputs["seed_n"]),
        np.concatenate(inputs["pos_a"]),
        np.concatenate(inputs["pos_b"]),
        offsets(inputs["fp_n"]),
        np.concatenate(inputs["fp_pos"]),
        np.concatenate(inputs["fp_flag"]),
        k,
        template_a=tpl["a"],
        template_b=tpl["b"],
    )
    checked = template_spans = 0
    for p, (a, b) in enumerate(cases):
        if got.truncated[p]:
            assert margin < 1000
            continue
        mine = np.flatnonzero(got.pair == p)
        whole = copied_passages(a, b, inputs["pos_a"][p], inputs["pos_b"][p], k)
        assert sorted(zip(got.start_a[mine].tolist(), got.start_b[mine].tolist())) == sorted(
            zip(whole.start_a.tolist(), whole.start_b.tolist())
        )
        union: list[set[int]] = [set(), set()]
        for i in mine:
            for side, start, end, content in (
                (0, got.start_a[i], got.end_a[i], got.content_a[i]),
                (1, got.start_b[i], got.end_b[i], got.content_b[i]),
            ):
                mask, offs = masks[p][side]
                chars = [j for j, o in enumerate(offs) if start <= o < end]
                assert len(chars) == got.length[i]
                assert content == sum(not mask[j] for j in chars)
                template_spans += content < got.length[i]
                union[side].update(chars)
            checked += 1
        # per pair and side: the union of its spans, counted once, and its content
        want = []
        for side in (0, 1):
            want += [len(union[side]), sum(not masks[p][side][0][j] for j in union[side])]
        assert got.union[p].tolist() == want
    assert checked > 20 and template_spans > 5  # spans with and without template were compared


@pytest.mark.parametrize("seed", range(20))
def test_span_arithmetic_is_set_arithmetic(seed):
    from webwinnow.analysis.removal import cut, merge_spans, subtract_spans

    rng = random.Random(seed)
    n = rng.randint(0, 80)
    text = "".join(rng.choice("ab ßé\n") for _ in range(n))
    spans = [(rng.randint(-5, n + 5), rng.randint(-5, n + 5)) for _ in range(rng.randint(0, 8))]
    minus = [(rng.randint(0, n), rng.randint(0, n)) for _ in range(rng.randint(0, 5))]
    as_set = lambda ss: {i for s, e in ss for i in range(max(s, 0), min(e, n))}
    merged = merge_spans(spans, n)
    assert as_set(merged) == as_set(spans)
    assert all(e < s2 for (_, e), (s2, _) in zip(merged, merged[1:]))  # disjoint and not touching
    rest = subtract_spans(merged, merge_spans(minus, n))
    assert as_set(rest) == as_set(spans) - as_set(minus)
    assert cut(text, merged) == "".join(ch for i, ch in enumerate(text) if i not in as_set(spans))


def test_a_passage_copied_twice_counts_once_on_the_side_it_came_from():
    k, w = 10, 8
    rng = random.Random(3)
    x = " ".join("".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(40))
    a, b = x, x + " zzz qqq " + x
    fa, fb = ww.fingerprint(a, k=k, w=w), ww.fingerprint(b, k=k, w=w)
    seeds = [(p, q) for h, p in zip(*fa) for g, q in zip(*fb) if h == g]
    got = batch_passages(
        [a],
        [b],
        np.array([0]),
        np.array([0]),
        np.array([0]),
        np.array([0]),
        np.array([0, len(seeds)]),
        np.array([s[0] for s in seeds]),
        np.array([s[1] for s in seeds]),
        np.array([0, 0]),
        np.zeros(0, np.int64),
        np.zeros(0, bool),
        k,
    )
    n = len(_normalized(a)[0])
    assert len(got.length) == 2 and got.length.tolist() == [n, n]  # two spans, each all of a
    assert got.union[0].tolist() == [n, n, 2 * n, 2 * n]  # a once, b twice: shares stay <= 1
