"""Units other than characters: words and code tokens, against the naive reference and their guarantee."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import webwinnow as ww
from webwinnow.analysis.batchspans import batch_passages
from webwinnow.analysis.spans import copied_passages, text_windows, window_passages
from webwinnow.config import load_config
from webwinnow.core.codetokens import code_tokens, lexer
from webwinnow.core.winnowing import units

import naive
from codepages import ORIGINAL, OTHER, PAGES, RENAMED, write_code_warc

# letters of several scripts, expansions (ß, ﬁ, ㌀), kana and ideographs, digits, and what separates words
WORD_CHARS = "abcXYZ09ßﬁǅéÉ東京都ひらカタ㌀Ωω" + " -'.,\n\t"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(WORD_CHARS), max_size=60) | st.text(max_size=40))
def test_words_match_the_definition(text):
    codes, starts, ends = units(text, "word")
    want = naive.words(text)
    assert [(s, e) for _, s, e in want] == list(zip(starts.tolist(), ends.tolist()))
    assert [naive.word_code(x) for x, _, _ in want] == codes.tolist()


def test_word_examples():
    text = "Don't STOP—the Straße, 東京 e-mail"
    got = [text[s:e] for s, e in zip(*units(text, "word")[1:])]
    assert got == ["Don", "t", "STOP", "the", "Straße", "東", "京", "e", "mail"]
    # equal words are equal codes whatever their case, width or compatibility form
    a, b = units("STRASSE ﬁne Ｗｉｄｅ", "word")[0], units("strasse fine wide", "word")[0]
    assert a.tolist() == b.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(WORD_CHARS), max_size=200), st.sampled_from([(1, 1), (2, 3), (3, 4), (5, 16)]), st.booleans()
)
def test_word_fingerprints_match_naive(text, kw, robust):
    k, w = kw
    hashes, positions = ww.fingerprint(text, k=k, w=w, robust=robust, unit="word")
    want_h, want_p = naive.word_fingerprint(text, k, w, robust)
    assert hashes.tolist() == want_h and positions.tolist() == want_p


def test_word_batch_equals_one_at_a_time():
    rng = random.Random(5)
    texts = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 300))) for _ in range(30)] + [None, ""]
    batch = ww.fingerprint_batch(texts, 5, 16, unit="word")
    for d, text in enumerate(texts):
        h, p = ww.fingerprint(text or "", 5, 16, unit="word")
        assert batch.hashes[batch.doc == d].tolist() == h.tolist()
        assert batch.positions[batch.doc == d].tolist() == p.tolist()
        assert batch.norm_chars[d] == len(units(text or "", "word")[0])


VOCAB = [f"w{i}" for i in range(50_000)]


def _styled(rng: random.Random, words: list[str]) -> str:
    """Words joined as a copier might re-type them: other case, spacing, punctuation, line breaks."""
    out = []
    for word in words:
        out.append(word.upper() if rng.random() < 0.2 else word)
        out.append(rng.choice([" ", "  ", "\n", ", ", " - ", ".\t"]))
    return "".join(out)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([(1, 1), (3, 4), (5, 16), (8, 3)]), st.integers(0, 30), st.booleans(), st.integers(0, 2**32))
def test_a_shared_run_of_t_words_shares_a_fingerprint(kw, extra, robust, seed):
    """The guarantee in words: any run of t = w + k - 1 equal words shares a fingerprint."""
    k, w = kw
    t = w + k - 1
    rng = random.Random(seed)
    small = VOCAB[:30]  # few distinct words: many repeats and ties, the hard case for winnowing
    shared = [rng.choice(small) for _ in range(t + extra)]
    text_a = (
        _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 40))])
        + " "
        + _styled(rng, shared)
        + " "
        + _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 40))])
    )
    text_b = (
        _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 40))])
        + " "
        + _styled(rng, shared)
        + " "
        + _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 40))])
    )
    ha, _ = ww.fingerprint(text_a, k=k, w=w, robust=robust, unit="word")
    hb, _ = ww.fingerprint(text_b, k=k, w=w, robust=robust, unit="word")
    assert set(ha.tolist()) & set(hb.tolist())


@pytest.mark.parametrize("seed", range(10))
def test_a_shared_run_shorter_than_k_words_shares_nothing(seed):
    """Words drawn from 50,000: a k-gram of a equal to one of b would have to line up on the
    shared run (shorter than k, and the words around it differ) or pair independent draws
    (probability 50,000^-k per pair of k-grams)."""
    rng = random.Random(seed)
    k = rng.choice([3, 5, 8])
    shared = [rng.choice(VOCAB) for _ in range(k - 1)]
    a = [rng.choice(VOCAB) for _ in range(200)] + ["beforeA"] + shared + ["afterA"] + [rng.choice(VOCAB) for _ in range(200)]
    b = [rng.choice(VOCAB) for _ in range(200)] + ["beforeB"] + shared + ["afterB"] + [rng.choice(VOCAB) for _ in range(200)]
    ha, _ = ww.fingerprint(" ".join(a), k=k, w=1, unit="word")  # w = 1: every k-gram is a fingerprint
    hb, _ = ww.fingerprint(" ".join(b), k=k, w=1, unit="word")
    assert not set(ha.tolist()) & set(hb.tolist())
    assert len(ha) == len(units(" ".join(a), "word")[0]) - k + 1


def _word_seeds(a: str, b: str, k: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    ha, pa = ww.fingerprint(a, k=k, w=w, unit="word")
    hb, pb = ww.fingerprint(b, k=k, w=w, unit="word")
    pairs = [(p, q) for x, p in zip(ha.tolist(), pa.tolist()) for y, q in zip(hb.tolist(), pb.tolist()) if x == y]
    return np.array([p for p, _ in pairs], np.int64), np.array([q for _, q in pairs], np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_word_passages_equal_the_naive_spans(seed):
    rng = random.Random(seed)
    k, w = rng.choice([(3, 4), (5, 16), (2, 2)])
    small = VOCAB[:200]
    shared = [_styled(rng, [rng.choice(small) for _ in range(rng.randint(5, 60))]) for _ in range(rng.randint(1, 3))]
    a = " ".join(_styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 50))]) + " " + s for s in shared)
    b = _styled(rng, [rng.choice(small) for _ in range(20)]) + " " + " 東京 ".join(reversed(shared)) + " Straße"
    pos_a, pos_b = _word_seeds(a, b, k, w)
    got = copied_passages(a, b, pos_a, pos_b, k, unit="word")
    spans = set(zip(got.start_a.tolist(), got.end_a.tolist(), got.start_b.tolist(), got.end_b.tolist(), got.length.tolist()))
    assert spans == naive.copied_word_spans(a, b, k, w)
    for s in zip(got.start_a, got.end_a, got.start_b, got.end_b, got.length):
        assert [x for x, _, _ in naive.words(a[s[0] : s[1]])] == [x for x, _, _ in naive.words(b[s[2] : s[3]])]
        assert len(naive.words(a[s[0] : s[1]])) == s[4] >= k


@pytest.mark.parametrize("margin", [0, 4, 1000])
def test_word_windows_give_the_whole_texts_passages_or_say_truncated(margin):
    """The passages stage's windows, cut at word boundaries: the same words as the whole text."""
    rng = random.Random(margin)
    k, w = 3, 5
    small = VOCAB[:300]
    cases = []
    for _ in range(30):
        shared = _styled(rng, [rng.choice(small) for _ in range(rng.randint(8, 40))])
        a = (
            _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 60))])
            + " 東京"
            + shared
            + "Ünï "
            + _styled(rng, small[:9])
        )
        b = "ﬁrst " + shared + " " + _styled(rng, [rng.choice(small) for _ in range(rng.randint(0, 30))])
        pos_a, pos_b = _word_seeds(a, b, k, w)
        if not len(pos_a):
            continue
        windows = []
        for text, pos in ((a, pos_a), (b, pos_b)):
            _, starts, ends = units(text, "word")
            start, end, opened = text_windows(starts, pos.min(keepdims=True), pos.max(keepdims=True), k, margin, ends)
            windows.append((text[int(start[0]) : int(end[0])], int(start[0]), int(opened[0])))
        cases.append((a, b, pos_a, pos_b, windows))
    empty = np.zeros(len(cases) + 1, np.int64)
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
        empty,
        np.zeros(0, np.int64),
        np.zeros(0, bool),
        k,
        unit="word",
    )
    settled = 0
    for p, (a, b, pos_a, pos_b, ((wa, sa, oa), (wb, sb, ob))) in enumerate(cases):
        windowed = window_passages(wa, wb, sa, sb, oa, ob, pos_a, pos_b, k, unit="word")
        assert got.truncated[p] == (windowed is None)
        if windowed is None:
            continue
        settled += 1
        whole = copied_passages(a, b, pos_a, pos_b, k, unit="word")
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
        assert spans == set(
            zip(whole.start_a.tolist(), whole.end_a.tolist(), whole.start_b.tolist(), whole.end_b.tolist(), whole.length.tolist())
        )
        assert got.union[p, 0] == got.union[p, 1]  # no template given: every copied word is content
    if margin == 1000:  # windows that hold the whole texts are never truncated
        assert settled == len(cases) >= 25


# -- code tokens ------------------------------------------------------------------------------


def test_renamed_identifiers_and_literals_and_comments_change_no_token():
    a, b = code_tokens(ORIGINAL, "c")[0], code_tokens(RENAMED, "c")[0]
    assert a.tolist() == b.tolist()
    # a different operator is a different program
    assert code_tokens(ORIGINAL.replace("+= 1", "-= 1"), "c")[0].tolist() != a.tolist()


def test_token_ranges_are_the_tokens_text():
    codes, starts, ends = code_tokens(ORIGINAL, "c")
    pieces = [ORIGINAL[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
    assert pieces[:7] == ["int", "count_words", "(", "const", "char", "*", "text"]
    assert pieces[-3:] == ["0x10", ";", "}"]
    assert '"%d words\\n"' in pieces  # a string literal is one token, quotes and escapes included
    assert "words seen" not in " ".join(pieces)  # comments are dropped
    assert all(p.strip() == p and p for p in pieces)


def test_text_tokens_of_a_shell_lexer_are_cut_into_words():
    text = "tar -xzf archive.tar.gz && cd archive\n"
    pieces = [text[s:e] for s, e in zip(*code_tokens(text, "bash")[1:])]
    assert "tar" in pieces and "cd" in pieces and all(" " not in p for p in pieces)


def test_code_fingerprints_find_a_renamed_copy_with_exact_spans():
    k, w = 5, 4
    page_a = "intro text\n" + ORIGINAL + "\nint other(void) { return 1; }\n"
    page_b = "x = 1;\n" + RENAMED
    ha, pa = ww.fingerprint(page_a, k=k, w=w, unit="code")
    hb, pb = ww.fingerprint(page_b, k=k, w=w, unit="code")
    pairs = [(p, q) for x, p in zip(ha.tolist(), pa.tolist()) for y, q in zip(hb.tolist(), pb.tolist()) if x == y]
    assert pairs
    got = copied_passages(page_a, page_b, np.array([p for p, _ in pairs]), np.array([q for _, q in pairs]), k, unit="code")
    longest = int(np.argmax(got.length))
    assert page_a[got.start_a[longest] : got.end_a[longest]].startswith("int count_words")
    assert page_a[got.start_a[longest] : got.end_a[longest]].endswith("0x10;\n}")
    assert page_b[got.start_b[longest] : got.end_b[longest]].startswith("int   n_w")
    assert got.length[longest] == len(code_tokens(ORIGINAL, "c")[0])


def test_code_batch_passages_take_whole_texts():
    k, w = 5, 4
    a, b = "int z;\n" + ORIGINAL, RENAMED
    pos_a, pos_b = [], []
    ha, pa = ww.fingerprint(a, k=k, w=w, unit="code")
    hb, pb = ww.fingerprint(b, k=k, w=w, unit="code")
    for x, p in zip(ha.tolist(), pa.tolist()):
        for y, q in zip(hb.tolist(), pb.tolist()):
            if x == y:
                pos_a.append(p)
                pos_b.append(q)
    got = batch_passages(
        [a],
        [b],
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.array([0, len(pos_a)]),
        np.array(pos_a),
        np.array(pos_b),
        np.zeros(2, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, bool),
        k,
        unit="code",
        lexer="c",
    )
    whole = copied_passages(a, b, np.array(pos_a), np.array(pos_b), k, unit="code")
    assert got.start_a.tolist() == whole.start_a.tolist() and got.end_b.tolist() == whole.end_b.tolist()
    assert got.length.tolist() == whole.length.tolist() and len(whole) >= 1
    # the passages stage ships the tokens it lexed once per page: the same spans
    made = [(np.array([0, len(t[0])]), *t) for t in (code_tokens(a), code_tokens(b))]
    shipped = batch_passages(
        [a],
        [b],
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.array([0, len(pos_a)]),
        np.array(pos_a),
        np.array(pos_b),
        np.zeros(2, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, bool),
        k,
        unit="code",
        tokens_a=made[0],
        tokens_b=made[1],
    )
    assert [x.tolist() for x in (shipped.start_a, shipped.end_a, shipped.start_b, shipped.end_b, shipped.length)] == [
        x.tolist() for x in (got.start_a, got.end_a, got.start_b, got.end_b, got.length)
    ]


def test_lexer_names_are_checked():
    with pytest.raises(ValueError, match="no Pygments lexer is called 'nope'"):
        lexer("nope")
    assert lexer("python") is lexer("python")


def test_a_unit_brings_its_k_and_w_unless_given():
    assert (lambda c: (c.k, c.w))(load_config([], {"winnow": {"unit": "word"}}).winnow) == (5, 16)
    assert (lambda c: (c.k, c.w))(load_config([], {"winnow": {"unit": "code"}}).winnow) == (23, 17)
    assert load_config([], {"winnow": {"unit": "word", "k": 7}}).winnow.k == 7
    with pytest.raises(ValueError, match="winnow.unit must be one of char, word, code"):
        load_config([], {"winnow": {"unit": "line"}})
    # a char run's settings say what they said before units existed: its tables stay current
    assert "unit" not in load_config([]).winnow.identity()


def test_code_blocks_are_the_pages_pre_and_multiline_code_as_written():
    from webwinnow.text.html2text import html_code

    for page, blocks in PAGES.values():
        assert html_code(page) == blocks
    nested = "<pre><code>a = 1\n  b = 2</code></pre><p><code>x</code></p><div><code>one\ntwo</code></div>"
    assert html_code(nested) == "a = 1\n  b = 2\n\f\none\ntwo"


def test_each_code_block_is_tokenized_alone():
    """A string a block leaves open does not swallow the next block's tokens."""
    text = 'char *s = "unterminated;\n\f\nint x = 1;'
    pieces = [text[s:e] for s, e in zip(*code_tokens(text, "c")[1:])]
    assert pieces[-5:] == ["int", "x", "=", "1", ";"]


def test_crawl_files_give_their_pages_code_to_the_code_unit(tmp_path):
    from webwinnow.config import ExtractConfig
    from webwinnow.crawl.records import file_rows

    path = write_code_warc(tmp_path / "code.warc.gz")
    docs = {r["url"]: r["text"] for r in file_rows(str(path), ExtractConfig(), code=True) if r.get("table") == "documents"}
    assert docs == {url: blocks for url, (_, blocks) in PAGES.items()}
    pages = {r["url"]: r["text"] for r in file_rows(str(path), ExtractConfig()) if r.get("table") == "documents"}
    assert "Counting words" in pages["https://a.test/count.html"]  # the other units read the visible text


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from("ab1 _=+(){};\"'#/*\n\t-$"), max_size=40), min_size=1, max_size=4),
    st.sampled_from(["c", "bash", "python"]),
)
def test_code_tokens_are_in_text_order_within_the_text(blocks, name):
    """Whatever the lexer makes of it: tokens in order, never overlapping, each its text's
    non-blank characters, in every block (a shell lexer's words included); within a block no
    token repeats the one before it (a run is one token)."""
    text = "\f".join(blocks)
    codes, starts, ends = code_tokens(text, name)
    assert all(0 <= s < e <= len(text) for s, e in zip(starts.tolist(), ends.tolist()))
    assert all(e <= s for e, s in zip(ends[:-1].tolist(), starts[1:].tolist()))
    assert all(text[s:e].strip() and "\f" not in text[s:e] for s, e in zip(starts.tolist(), ends.tolist()))
    assert all(
        a != b or "\f" in text[e:s]
        for a, b, e, s in zip(codes[:-1].tolist(), codes[1:].tolist(), ends[:-1].tolist(), starts[1:].tolist())
    )


def test_a_run_of_one_token_is_one_token_and_text_art_pairs_nothing():
    """Rules of dashes, rows of numbers, a table header of names: each one token, its range the
    whole run; runs in two blocks stay two tokens. Two programs each followed by long rules share
    no fingerprint (as tokens one by one, the rules made hundreds of equal k-grams)."""
    text = "-" * 60 + "\n\f\n" + "-" * 9 + "\nINSTRUCTION   DST  SRC0\n1 2 3 4\nx = y - - z;"
    codes, starts, ends = code_tokens(text)
    assert [text[s:e] for s, e in zip(starts.tolist(), ends.tolist())] == [
        "-" * 60,
        "-" * 9,
        "INSTRUCTION   DST  SRC0",
        "1 2 3 4",
        "x",
        "=",
        "y",
        "- -",
        "z",
        ";",
    ]
    page_a = ORIGINAL + "\n" + "\n".join("-" * n for n in (60, 80, 100)) + "\n\f\n" + "—" * 90
    page_b = OTHER + "\n" + "\n".join("-" * n for n in (70, 30)) + "\n\f\n" + "—" * 40 + "\n" + "—" * 200
    ha, _ = ww.fingerprint(page_a, k=5, w=4, unit="code")
    hb, _ = ww.fingerprint(page_b, k=5, w=4, unit="code")
    assert len(code_tokens(page_a)[0]) == len(code_tokens(ORIGINAL)[0]) + 2
    assert not set(ha.tolist()) & set(hb.tolist())


@pytest.mark.parametrize("margin", [0, 3, 10_000])
def test_code_windows_carry_the_pages_tokens_and_give_the_whole_texts_passages(margin, monkeypatch):
    """The passages stage's own window and grow passes on code pages: a window is cut at token
    boundaries (not whole blocks) and carries the tokens the whole page's lexing made, so its
    spans are those of the whole texts, or it says the pair must be grown again (redo)."""
    import pyarrow as pa

    from webwinnow.stages import _windows, passages

    monkeypatch.setattr(_windows, "margin", lambda cfg: margin)
    cfg = load_config([], {"winnow": {"unit": "code", "k": 4, "w": 3}})
    rng = random.Random(margin)
    noise = [OTHER, "x = 1;", 'char *s = "open;', "for (;;) { y--; }", "return a + b * c;"]
    texts = []
    for _ in range(8):  # the copy among other blocks, or inside one, maybe after a block a string left open
        parts = rng.sample(noise, 3)
        parts.insert(rng.randint(0, 3), rng.choice([ORIGINAL, RENAMED]))
        texts.append("\n\f\n".join(parts) if rng.random() < 0.6 else " ".join(parts))
    prints = [ww.fingerprint(t, k=4, w=3, unit="code") for t in texts]
    seeds = {}
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            shared = [
                (p, q)
                for x, p in zip(*(v.tolist() for v in prints[a]))
                for y, q in zip(*(v.tolist() for v in prints[b]))
                if x == y
            ]
            if shared:
                seeds[a, b] = (np.array([p for p, _ in shared]), np.array([q for _, q in shared]))
    assert len(seeds) >= 20
    requests = {d: [] for d in range(len(texts))}
    for (a, b), (sa, sb) in seeds.items():
        requests[a].append({"doc_a": a, "doc_b": b, "side": 0, "lo": int(sa.min()), "hi": int(sa.max())})
        requests[b].append({"doc_a": a, "doc_b": b, "side": 1, "lo": int(sb.min()), "hi": int(sb.max())})
    batch = pa.RecordBatch.from_pydict({"doc_id": list(requests), "requests": list(requests.values()), "text": texts})
    windows = pa.Table.from_batches(list(_windows.window_arrow(batch, cfg, np.zeros(0, np.int64))))
    assert len(windows) == 2 * len(seeds)
    for row in windows.to_pylist():
        text, start = texts[row["doc_a"] if row["side"] == 0 else row["doc_b"]], row["start"]
        codes, starts, ends = code_tokens(text)
        inside = (starts >= start) & (ends <= start + len(row["text"]))
        assert text[start : start + len(row["text"])] == row["text"]
        assert row["text"] == text[starts[inside][0] : ends[inside][-1]]  # whole tokens, nothing beyond them
        assert row["tok_code"] == codes[inside].tolist()  # the page's tokens, not the window's own lexing
        assert row["tok_start"] == (starts[inside] - start).tolist()
        assert row["tok_end"] == (ends[inside] - start).tolist()
        assert row["open"] == (starts[0] < start) + 2 * (ends[-1] > start + len(row["text"]))
    seed_type = pa.list_(pa.struct([("pos_a", pa.int64()), ("pos_b", pa.int64())]))
    seed_rows = pa.table(
        {
            "doc_a": [a for a, _ in seeds],
            "doc_b": [b for _, b in seeds],
            "side": pa.array([2] * len(seeds), pa.int32()),
            "seeds": pa.array([[{"pos_a": int(p), "pos_b": int(q)} for p, q in zip(*s)] for s in seeds.values()], seed_type),
        }
    )
    table = pa.concat_tables(
        [windows.append_column("seeds", pa.nulls(len(windows), seed_type)), seed_rows], promote_options="default"
    )
    table = table.sort_by([("doc_a", "ascending"), ("doc_b", "ascending"), ("side", "ascending")])
    grown = passages.grow_arrow(table, cfg).to_pylist()
    redone = {(g["doc_a"], g["doc_b"]) for g in grown if g["redo"]}
    for (a, b), (sa, sb) in seeds.items():
        if (a, b) in redone:
            continue
        whole = copied_passages(texts[a], texts[b], sa, sb, 4, unit="code")
        got = {
            (g["start_a"], g["end_a"], g["start_b"], g["end_b"], g["length"]) for g in grown if (g["doc_a"], g["doc_b"]) == (a, b)
        }
        assert got == set(
            zip(whole.start_a.tolist(), whole.end_a.tolist(), whole.start_b.tolist(), whole.end_b.tolist(), whole.length.tolist())
        )
    if margin == 10_000:  # windows holding the whole texts are never grown again
        assert not redone
    elif margin:  # a few tokens beyond the seeds settle some pairs in their windows
        assert len(redone) < len(seeds)
