"""Copied passages grown from fingerprints, against a brute-force reference; clusters' union-find."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import webwinnow as ww
from webwinnow.analysis.components import components
from webwinnow.analysis.spans import copied_passages

import naive


def _words(rng: random.Random, n: int, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


VOCAB = ["".join(random.Random(i).choice("abcdefghijklmnopqrstuvwxyzéß") for _ in range(2 + i % 7)) for i in range(2000)]


def _seeds(text_a: str, text_b: str, k: int, w: int):
    ha, pa = ww.fingerprint(text_a, k=k, w=w)
    hb, pb = ww.fingerprint(text_b, k=k, w=w)
    seeds = [(p, q) for h, p in zip(ha, pa) for g, q in zip(hb, pb) if h == g]
    return np.array([s[0] for s in seeds], np.int64), np.array([s[1] for s in seeds], np.int64)


def _spans(found) -> set[tuple[int, int, int, int, int]]:
    return set(
        zip(found.start_a.tolist(), found.end_a.tolist(), found.start_b.tolist(), found.end_b.tolist(), found.length.tolist())
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k, w", [(5, 4), (12, 10), (50, 100)])
def test_spans_equal_the_brute_force_reference(seed, k, w):
    rng = random.Random(seed)
    shared = [_words(rng, rng.randint(3, 40), VOCAB) for _ in range(3)]
    a = " ".join([_words(rng, 50, VOCAB), shared[0], _words(rng, 30, VOCAB), shared[1], shared[2], _words(rng, 10, VOCAB)])
    b = " ".join([shared[2].upper(), _words(rng, 40, VOCAB), shared[0].replace(" ", " — "), _words(rng, 20, VOCAB), shared[1]])
    pos_a, pos_b = _seeds(a, b, k, w)
    found = copied_passages(a, b, pos_a, pos_b, k)
    assert _spans(found) == naive.copied_spans(a, b, k, w)
    assert not found.capped


def test_a_long_copy_is_one_span_covering_it():
    rng = random.Random(7)
    copy = _words(rng, 400, VOCAB)
    a = _words(rng, 300, VOCAB) + ". " + copy + " " + _words(rng, 100, VOCAB)
    b = _words(rng, 50, VOCAB) + "\n\n" + copy.upper().replace(" ", ",\n") + "!! " + _words(rng, 200, VOCAB)
    found = copied_passages(a, b, *_seeds(a, b, 50, 100), 50)
    assert len(found) == 1
    start = a.index(copy)
    assert found.start_a[0] <= start and found.end_a[0] >= start + len(copy)
    assert ww.normalize(a[found.start_a[0] : found.end_a[0]])[0] == ww.normalize(b[found.start_b[0] : found.end_b[0]])[0]
    assert found.length[0] >= len(ww.normalize(copy)[0])


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_every_span_is_a_maximal_common_substring_of_length_at_least_k(data):
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    alphabet = data.draw(st.sampled_from(["ab", "abc", "abcdefghij"]))
    k = data.draw(st.integers(2, 12))
    w = data.draw(st.integers(1, 10))
    core = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
    a = "".join(rng.choice(alphabet + " ,") for _ in range(rng.randint(0, 60))) + core
    b = core + "".join(rng.choice(alphabet + " .") for _ in range(rng.randint(0, 60)))
    found = copied_passages(a, b, *_seeds(a, b, k, w), k)
    na, offs_a = ww.normalize(a)
    nb, offs_b = ww.normalize(b)
    for sa, ea, sb, eb, length in _spans(found):
        assert length >= k
        piece_a, piece_b = ww.normalize(a[sa:ea])[0], ww.normalize(b[sb:eb])[0]
        assert piece_a == piece_b and len(piece_a) == length
        i, j = int(np.searchsorted(offs_a, sa)), int(np.searchsorted(offs_b, sb))
        assert i == 0 or j == 0 or na[i - 1] != nb[j - 1]  # not extendable to the left
        assert i + length == len(na) or j + length == len(nb) or na[i + length] != nb[j + length]


def test_nothing_shorter_than_k_and_collisions_are_discarded():
    a = "the quick brown fox " * 3
    b = "completely different words here " * 3
    # seeds that point at unequal k-grams (as a hash collision would) produce no span
    found = copied_passages(a, b, np.array([0, 4]), np.array([0, 8]), 5)
    assert len(found) == 0


def test_caps_are_reported():
    rng = random.Random(3)
    parts = [_words(rng, 60, VOCAB) for _ in range(6)]
    a = " | ".join(p + " " + _words(rng, 40, VOCAB) for p in parts)
    b = " | ".join(_words(rng, 40, VOCAB) + " " + p for p in parts)
    seeds = _seeds(a, b, 20, 10)
    assert len(copied_passages(a, b, *seeds, 20)) == 6
    capped = copied_passages(a, b, *seeds, 20, max_spans=2)
    assert len(capped) == 2 and capped.capped
    assert copied_passages(a, b, *seeds, 20, max_chars=30).capped


def test_bad_arguments():
    with pytest.raises(ValueError, match="same length"):
        copied_passages("abc", "abc", [0], [0, 1], 2)
    with pytest.raises(TypeError):
        copied_passages(b"abc", "abc", [0], [0], 2)


@pytest.fixture(params=["python", "numba"])
def union_find(request, monkeypatch):
    """Both ways components runs its union–find: a Python loop (few edges) and the kernel."""
    from webwinnow.analysis import components as module

    monkeypatch.setattr(module, "PYTHON_EDGES", 10**9 if request.param == "python" else -1)
    return request.param


def test_components_smallest_id_labels_and_sizes(union_find):
    a = np.array([50, 7, 3, 100, 7, 8])
    b = np.array([7, 9, 1, 101, 50, 1])
    doc, cluster, size = components(a, b)
    got = dict(zip(doc.tolist(), zip(cluster.tolist(), size.tolist())))
    assert got == {1: (1, 3), 3: (1, 3), 8: (1, 3), 7: (7, 3), 9: (7, 3), 50: (7, 3), 100: (100, 2), 101: (100, 2)}
    assert [len(x) for x in components(np.array([], np.int64), np.array([], np.int64))] == [0, 0, 0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=60))
def test_components_match_a_naive_flood_fill(edges):
    from webwinnow.analysis import components as module

    a = np.array([e[0] for e in edges], np.int64)
    b = np.array([e[1] for e in edges], np.int64)
    adjacency: dict[int, set[int]] = {}
    for x, y in edges:
        adjacency.setdefault(x, set()).add(y)
        adjacency.setdefault(y, set()).add(x)
    before = module.PYTHON_EDGES
    try:
        for python_edges in (10**9, -1):  # the Python loop, then the kernel
            module.PYTHON_EDGES = python_edges
            doc, cluster, size = components(a, b)
            for node in adjacency:
                seen, stack = {node}, [node]
                while stack:
                    for nxt in adjacency[stack.pop()]:
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
                i = int(np.searchsorted(doc, node))
                assert cluster[i] == min(seen) and size[i] == len(seen)
    finally:
        module.PYTHON_EDGES = before


def test_boilerplate_share_per_span():
    from webwinnow.analysis.boilerplate import boilerplate_share

    hashes = np.array([5, 6, 7, 8])
    positions = np.array([10, 0, 30, 20])  # any order
    got = boilerplate_share(hashes, positions, np.array([6, 8]), np.array([0, 15, 40, 0]), np.array([15, 31, 50, 100]))
    assert got[:2].tolist() == [0.5, 0.5] and np.isnan(got[2]) and got[3] == 0.5
    assert boilerplate_share(hashes, positions, np.array([], np.int64), np.array([0]), np.array([100])).tolist() == [0.0]


def _window_case(rng: random.Random, k: int, w: int, margin: int):
    """Two texts sharing a few passages (one with a template-like run around it), cut into windows
    around their seeds as the passages stage does."""
    from webwinnow.analysis.spans import _normalized, text_windows

    shared = [_words(rng, rng.randint(20, 80), VOCAB) for _ in range(rng.randint(1, 3))]
    a = " ".join(_words(rng, rng.randint(0, 60), VOCAB) + " " + s for s in shared) + " " + _words(rng, 30, VOCAB)
    b = _words(rng, rng.randint(0, 40), VOCAB) + " " + " ".join(reversed(shared)) + " Ünïcode ﬃ " + _words(rng, 20, VOCAB)
    pos_a, pos_b = _seeds(a, b, k, w)
    if not len(pos_a):
        return None
    windows = []
    for text, pos in ((a, pos_a), (b, pos_b)):
        start, end, opened = text_windows(_normalized(text)[1], pos.min(keepdims=True), pos.max(keepdims=True), k, margin)
        windows.append((text[int(start[0]) : int(end[0])], int(start[0]), int(opened[0])))
    return a, b, pos_a, pos_b, windows


@pytest.mark.parametrize("max_spans", [1000, 2])
@pytest.mark.parametrize("margin", [0, 3, 40, 1000])
def test_batch_passages_equal_whole_text_passages_or_say_truncated(margin, max_spans):
    from webwinnow.analysis.batchspans import batch_passages
    from webwinnow.analysis.boilerplate import boilerplate_share
    from webwinnow.analysis.spans import window_passages

    rng = random.Random(margin)
    k, w = 12, 10
    cases = [c for c in (_window_case(rng, k, w, margin) for _ in range(40)) if c is not None]
    fp_lists = [ww.fingerprint(c[0], k=k, w=w) for c in cases]
    boilerplate = np.sort(np.array([h for hashes, _ in fp_lists for h in hashes[::3]], np.int64))
    fp_pos, fp_flags, fp_offsets = [], [], [0]
    for c, (hashes, positions) in zip(cases, fp_lists, strict=True):
        (_, start, _), end = c[4][0], c[4][0][1] + len(c[4][0][0])
        keep = (positions >= start) & (positions < end)
        fp_pos.append(positions[keep])
        fp_flags.append(np.isin(hashes[keep], boilerplate))
        fp_offsets.append(fp_offsets[-1] + int(keep.sum()))
    got = batch_passages(
        [c[4][0][0] for c in cases],
        [c[4][1][0] for c in cases],
        np.array([c[4][0][1] for c in cases]),
        np.array([c[4][1][1] for c in cases]),
        np.array([c[4][0][2] for c in cases]),
        np.array([c[4][1][2] for c in cases]),
        np.concatenate([[0], np.cumsum([len(c[2]) for c in cases])]),
        np.concatenate([c[2] for c in cases]),
        np.concatenate([c[3] for c in cases]),
        np.array(fp_offsets),
        np.concatenate(fp_pos),
        np.concatenate(fp_flags),
        k,
        max_spans=max_spans,
    )
    settled = 0
    for p, c in enumerate(cases):
        a, b, pos_a, pos_b, ((wa, sa, oa), (wb, sb, ob)) = c
        windowed = window_passages(wa, wb, sa, sb, oa, ob, pos_a, pos_b, k, max_spans=max_spans)
        assert got.truncated[p] == (windowed is None)
        if windowed is None:
            assert margin < 1000 and not (got.pair == p).any()
            continue
        settled += 1
        whole = copied_passages(a, b, pos_a, pos_b, k, max_spans=max_spans)
        mine = got.pair == p
        spans = set(
            zip(
                got.start_a[mine].tolist(),
                got.end_a[mine].tolist(),
                got.start_b[mine].tolist(),
                got.end_b[mine].tolist(),
                got.length[mine].tolist(),
            )
        )
        assert spans == _spans(whole) == _spans(windowed)
        assert got.capped[p] == whole.capped
        want = boilerplate_share(fp_lists[p][0], fp_lists[p][1], boilerplate, whole.start_a, whole.end_a)
        order = np.lexsort((whole.start_b, whole.start_a))
        np.testing.assert_allclose(got.boilerplate[mine], want[order], equal_nan=True)
    if margin >= 40:  # windows wide enough settle nearly every pair; margin 0 settles few or none
        assert settled >= 30


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=80), st.data())
def test_a_spans_longest_content_run_is_its_longest_stretch_outside_template(template, data):
    from webwinnow.analysis.spans import _longest_free

    n = len(template)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.array(template, np.int64), [0]])))
    lo, hi = edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)
    best = run = 0
    for t in template[start:end]:
        run = 0 if t else run + 1
        best = max(best, run)
    assert _longest_free(lo, hi, 0, len(lo), start, end) == best


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)), max_size=20))
def test_gather_ranges_is_the_slices_one_after_another(data, ranges):
    from webwinnow.analysis.spans import gather_ranges

    buf = np.frombuffer(data, np.uint8)
    ranges = [(min(a, b, len(data)), min(max(a, b), len(data))) for a, b in ranges]
    lo = np.array([a for a, _ in ranges], np.int64)
    hi = np.array([b for _, b in ranges], np.int64)
    out, offsets = gather_ranges(buf, lo, hi)
    assert out.tobytes() == b"".join(data[a:b] for a, b in ranges)
    assert offsets.tolist() == [0, *np.cumsum([b - a for a, b in ranges]).tolist()]


def test_gather_ranges_refuses_a_range_outside_the_data():
    from webwinnow.analysis.spans import gather_ranges

    with pytest.raises(ValueError, match="within the data"):
        gather_ranges(np.zeros(4, np.uint8), np.array([2], np.int64), np.array([5], np.int64))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=40), st.integers(-5, 70), st.integers(0, 50))
def test_a_seeds_unit_searched_from_a_hint_is_numpys_search(starts, x, hint):
    # the kernel's search outwards from the previous seed's unit (any hint, past the end too)
    from webwinnow.analysis.batchspans import _unit_from

    units = np.array(sorted(starts), np.int64)
    assert _unit_from(units, x, hint) == np.searchsorted(units, x)


def test_batch_passages_refuses_windows_its_seed_keys_cannot_hold(monkeypatch):
    # a seed is one 64-bit key, the diagonal above the unit of a: 2^31 units at most a text
    import webwinnow.analysis.batchspans as batchspans

    monkeypatch.setattr(batchspans, "_DIAGONAL", 8)
    one = np.array([0])
    args = (one, one, one, one, np.array([0, 0]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    marks = (np.array([0, 0]), np.zeros(0, np.int64), np.zeros(0, np.bool_))
    assert len(batchspans.batch_passages(["seven c"], ["seven c"], *args, *marks, 3).pair) == 0
    with pytest.raises(ValueError, match="under 2 GiB"):
        batchspans.batch_passages(["eight ch"], ["b"], *args, *marks, 3)
