"""Shapes, dtypes and edge cases of the public fingerprinting API."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import webwinnow as ww

import naive

TEXT = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age "
    "of foolishness, it was the epoch of belief, it was the epoch of incredulity."
)


def is_int64_vector(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype == np.int64 and a.ndim == 1


@pytest.mark.parametrize("robust", [False, True])
@pytest.mark.parametrize("k,w", [(1, 1), (5, 4), (10, 30), (50, 100)])
def test_fingerprint_shapes(k, w, robust):
    hashes, positions = ww.fingerprint(TEXT, k=k, w=w, robust=robust)
    assert is_int64_vector(hashes) and is_int64_vector(positions)
    assert hashes.shape == positions.shape and len(hashes) >= 1
    assert np.all(np.diff(positions) >= 0)  # text order
    assert positions.min() >= 0 and positions.max() < len(TEXT)


def test_winnow_indices_increase():
    rng = np.random.default_rng(1)
    hashes = rng.integers(-(2**63), 2**63 - 1, size=5000, dtype=np.int64)
    for w in (1, 4, 100):
        for robust in (False, True):
            idx = ww.winnow(hashes, w, robust)
            assert is_int64_vector(idx)
            assert np.all(np.diff(idx) > 0)
            assert idx.min() >= 0 and idx.max() < len(hashes)
            # every window of w consecutive hashes contains a selected index
            gaps = np.diff(np.concatenate([[-1], idx, [len(hashes)]]))
            assert gaps.max() <= w
    assert np.array_equal(ww.winnow(hashes, 1), np.arange(len(hashes)))


def test_kgram_hashes_shapes():
    hashes, starts = ww.kgram_hashes(TEXT, 5)
    norm, offsets = ww.normalize(TEXT)
    assert is_int64_vector(hashes) and is_int64_vector(starts) and is_int64_vector(offsets)
    assert isinstance(norm, str) and len(norm) == len(offsets)
    assert len(hashes) == len(starts) == len(norm) - 5 + 1
    assert np.array_equal(starts, offsets[: len(hashes)])


@pytest.mark.parametrize("text", ["", " ", "!?.,", "   \n\t"])
def test_empty_text(text):
    hashes, positions = ww.fingerprint(text, k=1, w=1)
    assert is_int64_vector(hashes) and is_int64_vector(positions)
    assert len(hashes) == len(positions) == 0
    norm, offsets = ww.normalize(text)
    assert norm == "" and is_int64_vector(offsets) and len(offsets) == 0
    assert len(ww.kgram_hashes(text, 1)[0]) == 0
    assert len(ww.winnow(np.zeros(0, np.int64), 3)) == 0


def test_text_shorter_than_k():
    text = "abcd, efg"  # 7 normalized characters
    for k in (8, 9, 50):
        hashes, positions = ww.fingerprint(text, k=k, w=1)
        assert len(hashes) == len(positions) == 0
        assert len(ww.kgram_hashes(text, k)[0]) == 0
    assert len(ww.fingerprint(text, k=7, w=100)[0]) == 1


@pytest.mark.parametrize("k,w", [(3, 10), (5, 100), (1, 50), (4, 5)])
def test_fewer_than_w_kgrams_yields_the_minimum(k, w):
    text = "Fewer k-grams than w: one window!"[: k + w - 2]  # at most w - 1 k-grams
    kh, starts = ww.kgram_hashes(text, k)
    assert 1 <= len(kh) < w
    for robust in (False, True):
        hashes, positions = ww.fingerprint(text, k=k, w=w, robust=robust)
        assert hashes.tolist() == [kh.min()]
        rightmost = int(np.flatnonzero(kh == kh.min())[-1])
        assert positions.tolist() == [starts[rightmost]]


def test_batch_shapes():
    texts = [TEXT, None, "", "short", TEXT.upper()]
    fp = ww.fingerprint_batch(texts, 5, 8)
    for a in (fp.doc, fp.hashes, fp.positions, fp.norm_chars, fp.kgrams, fp.counts):
        assert is_int64_vector(a)
    assert len(fp.doc) == len(fp.hashes) == len(fp.positions) == fp.counts.sum()
    assert len(fp.norm_chars) == len(fp.kgrams) == len(fp.counts) == len(texts)
    assert np.all(np.diff(fp.doc) >= 0)
    assert fp.counts.tolist()[1:4] == [0, 0, 1]
    assert fp.norm_chars.tolist()[1:4] == [0, 0, 5]
    assert fp.kgrams.tolist()[1:4] == [0, 0, 1]
    assert 0 < fp.density < 1
    # case does not matter: TEXT and TEXT.upper() have the same fingerprints
    assert fp.hashes[fp.doc == 0].tolist() == fp.hashes[fp.doc == 4].tolist()
    assert fp.positions[fp.doc == 0].tolist() == fp.positions[fp.doc == 4].tolist()
    arrow = ww.fingerprint_batch(pa.array(texts), 5, 8)
    assert arrow.hashes.tolist() == fp.hashes.tolist() and arrow.doc.tolist() == fp.doc.tolist()


def test_empty_batch():
    for texts in ([], pa.array([], pa.string()), pa.array([], pa.large_string()), pa.chunked_array([], pa.string())):
        fp = ww.fingerprint_batch(texts, 5, 4)
        assert len(fp.doc) == len(fp.hashes) == len(fp.counts) == 0
        assert fp.density == 0.0


def test_text_keys_equal_exactly_for_texts_equal_after_normalization():
    from webwinnow.core.winnowing import text_keys

    texts = ["Hello, World! 42", "hello world42", "hello world 43", None, "!!!", "ÉTÉ", "été"]
    keys, lengths = text_keys(texts)
    assert keys[0] == keys[1] and keys[1] != keys[2]
    assert lengths.tolist() == [12, 12, 12, 0, 0, 3, 3]
    assert keys[3] == keys[4]  # both normalize to nothing (callers skip length 0)
    assert keys[5] == keys[6]
    assert (keys >= 0).all()
    arrow_keys, _ = text_keys(pa.array(texts, pa.string()))
    assert arrow_keys.tolist() == keys.tolist()
    # against the naive normalizer, on texts that differ by one character, its order, a
    # repetition, an expansion (ß), a code point past the BMP, and texts longer than a block
    rng = random.Random(7)
    pieces = ["ab", "ba", "abab", "ß", "ss", "SS", "𝔘", "x" * 40, "é", "e\u0301", "12", "1 2", "", "...", "Ω"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 12))) for _ in range(600)]
    keys, lengths = text_keys(texts)
    normal = [naive.normalize(t)[0] for t in texts]
    assert lengths.tolist() == [len(n) for n in normal]
    same_key = {(i, j) for i in range(len(texts)) for j in range(i) if keys[i] == keys[j]}
    same_text = {(i, j) for i in range(len(texts)) for j in range(i) if normal[i] == normal[j]}
    assert same_key == same_text and len(same_text) > 100
    with pytest.raises(TypeError):
        text_keys("one text")
