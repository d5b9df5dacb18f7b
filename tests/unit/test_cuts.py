"""What dedup cuts beyond the passages table (webwinnow.analysis.cuts), against brute force:
capped pairs grown again whole, repeats found again, which source keeps a copy's passage."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import webwinnow as ww
from webwinnow.analysis.cuts import all_spans, needed_sources, outside, repeat_spans, unit_span

import naive

VOCAB = ["".join(random.Random(i).choice("abcdefghijklmnopqrstuvwxyz") for _ in range(2 + i % 6)) for i in range(500)]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _grow(copy: str, source: str, k: int, w: int, boilerplate=np.zeros(0, np.int64), bound=10**9):
    return all_spans(copy, source, boilerplate, k=k, w=w, robust=True, mod_p=0, unit="char", lexer="", max_compared=bound)


def test_a_pair_is_grown_whole_past_any_span_count_and_repeats_included():
    rng = random.Random(3)
    paragraphs = [_words(rng, 8) for _ in range(60)]
    repeated = _words(rng, 10)
    source = " | ".join(_words(rng, 3) + " " + p for p in paragraphs) + " # " + repeated
    copy = " | ".join(_words(rng, 3) + " " + p for p in paragraphs) + " # " + " @ ".join([repeated] * 7)
    spans, complete = _grow(copy, source, 5, 4)
    assert complete
    found = {(s.copy_start, s.copy_end, s.source_start, s.source_end, s.length) for s in spans}
    assert found == naive.copied_spans(copy, source, 5, 4)
    assert all(s.content == s.length for s in spans)  # no boilerplate: all content
    # every copy of the repeated paragraph, all seven, is inside a span of the copy
    at = [copy.index(repeated, copy.index(" # "))]
    while len(at) < 7:
        at.append(copy.index(repeated, at[-1] + 1))
    assert all(any(s.copy_start <= a and a + len(repeated) <= s.copy_end for s in spans) for a in at)


def test_boilerplate_hashes_seed_nothing_and_count_as_template():
    rng = random.Random(4)
    nav, body = _words(rng, 30), _words(rng, 30)
    copy, source = nav + " " + body + " tail", "head " + nav + " " + body
    everything, _ = _grow(copy, source, 5, 4)
    hashes, _ = ww.fingerprint(nav, k=5, w=1)  # every k-gram of the nav
    spans, _ = _grow(copy, source, 5, 4, np.unique(hashes))
    longest = max(everything, key=lambda s: s.length)
    assert longest.content == longest.length
    # the body's seeds grow over the nav too, the span that only the nav's k-grams seed is gone
    assert max(s.length for s in spans) == longest.length
    assert len(spans) < len(everything)
    grown = max(spans, key=lambda s: s.length)
    assert grown.length - grown.content >= len(ww.normalize(nav)[0]) - 5  # the nav is template in the copy


def test_a_pair_past_the_work_bound_is_said_incomplete():
    rng = random.Random(5)
    text = _words(rng, 400)
    _, complete = _grow(text, text, 5, 4, bound=100)
    assert not complete


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["ab", "cd", "abcd", "x y", "--"]), min_size=1, max_size=30), st.integers(1, 6))
def test_repeats_are_every_other_occurrence_of_a_cut_text(parts, min_units):
    text = " ".join(parts)
    norm, offsets = naive.normalize(text)
    if len(norm) < 2:
        return
    start, end = offsets[0], offsets[min(len(norm), 4) - 1] + 1  # the first up to 4 normalized characters
    pattern = norm[: min(len(norm), 4)]
    found = repeat_spans(text, [(start, end)], min_units)
    if len(pattern) < min_units:
        assert found == []
        return
    expected = sorted(
        (offsets[i], offsets[i + len(pattern) - 1] + 1)
        for i in range(1, len(norm) - len(pattern) + 1)
        if norm[i : i + len(pattern)] == pattern
    )
    assert found == expected


def test_a_copy_needs_only_its_earliest_source_for_each_character():
    early, late = (1, "x"), (2, "y")
    cuts = [
        (0, 100, late, 7),  # covered by the earlier source's cut: not needed
        (0, 100, early, 5),
        (150, 300, late, 7),  # reaches past what the earlier source covers: needed
        (150, 200, early, 5),
    ]
    assert needed_sources(cuts) == [1, 2, 3]
    assert needed_sources([(0, 10, late, 7), (0, 10, early, 5)]) == [1]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), st.data())
def test_what_a_source_keeps_is_the_passage_outside_the_copys_template(template, data):
    n = len(template)
    lo_i = data.draw(st.integers(0, n - 1))
    hi_i = data.draw(st.integers(lo_i + 1, n))
    starts = np.arange(n, dtype=np.int64) * 2  # units of two characters: "a "
    ends = starts + 1
    flags = np.array(template)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flags.astype(int), [0]])))
    lo, hi = edges[0::2].astype(np.int64), edges[1::2].astype(np.int64)
    parts = outside(starts, ends, int(starts[lo_i]), int(ends[hi_i - 1]), lo, hi)
    kept = {lo_i + u for a, b in parts for u in range(a, b)}
    assert kept == {u for u in range(lo_i, hi_i) if not template[u]}
    for a, b in parts:  # and back to characters of a text with the same units
        assert unit_span(starts, ends, int(starts[lo_i]), a, b) == (int(starts[lo_i + a]), int(ends[lo_i + b - 1]))
