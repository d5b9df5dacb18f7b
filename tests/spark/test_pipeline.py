"""The pipeline end to end in Spark local mode: record accounting, schemas, kernel parity, determinism."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import webwinnow
from webwinnow import schemas
from webwinnow.app.cli import main
from webwinnow.crawl.ids import doc_id
from webwinnow.crawl.inputs import is_crawl_file

from paths import CONF, QUICK, REAL, need

pytestmark = pytest.mark.spark


def _table(out: Path, name: str):
    return pq.read_table(out / name)


def _run(args: list[str]) -> None:
    assert main(args) == 0


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    need(REAL)
    out = tmp_path_factory.mktemp("real-out")
    # quick.toml: no test reads this run's report, and its figures page costs seconds
    _run(["run", str(REAL), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK), "--k", "50", "--w", "100"])
    return out


def _assert_schema(table, expected) -> None:
    got = [(f.name, f.type) for f in table.schema]
    want = [(f.name, f.type) for f in expected]
    assert got == want


def test_real_crawls_every_record_accounted(real_run):
    manifest = {Path(e["file"]).name: e for e in json.loads((REAL.parent / "manifest.json").read_text())}
    ledger = _table(real_run, "ledger").to_pylist()
    files = [r for r in ledger if r["kind"] == "file"]
    inputs = sorted(str(p) for p in REAL.iterdir() if is_crawl_file(p.name))
    # every input path appears exactly once
    assert sorted(r["file"] for r in files) == inputs
    for r in files:
        assert r["parsed"] + r["skipped"] + r["failed"] + r["flagged"] == r["records_seen"], r
        # warcio reads these files end to end: every record it sees, we see
        assert r["records_seen"] == manifest[Path(r["file"]).name]["records"], r["file"]
        assert r["status"] == "read_ok", r
    per_file_rows = Counter(r["file"] for r in ledger if r["kind"] == "record")
    for r in files:
        assert per_file_rows[r["file"]] == r["records_seen"] - r["parsed"]
    documents = _table(real_run, "documents")
    ok = [d for d in documents.to_pylist() if d["status"] == "ok"]
    assert len(ok) == sum(r["parsed"] for r in files)
    assert len(ok) >= 400  # 627 HTML responses; 2xx ones with intact digests
    assert len({d["doc_id"] for d in documents.to_pylist()}) == documents.num_rows
    for d in ok:
        assert d["text"] is not None and d["text_chars"] == len(d["text"])
        assert d["doc_id"] == doc_id(d["warc_file"], d["warc_offset"], 0)


def test_wet_conversion_records_are_documents(real_run):
    """The WET file's conversion record is the page's text, already extracted: an ok document."""
    docs = [d for d in _table(real_run, "documents").to_pylist() if d["warc_file"].endswith(".warc.wet.gz")]
    assert [(d["status"], d["flags"], d["content_type"]) for d in docs] == [("ok", "wet_text", "text/plain")]
    assert docs[0]["text"].startswith("Escopete - Biquipedia") and docs[0]["url"] == "https://an.wikipedia.org/wiki/Escopete"
    fps = _table(real_run, "fingerprints").to_pandas()
    assert (fps["doc_id"] == docs[0]["doc_id"]).sum() > 0


def test_run_log_records_what_the_run_printed(sample_run):
    log = (sample_run / "run.log").read_text()
    assert "webwinnow: read 3 files in" in log and "webwinnow: report done in" in log


def test_real_crawls_schemas(real_run):
    _assert_schema(_table(real_run, "documents"), schemas.DOCUMENTS)
    _assert_schema(_table(real_run, "ledger"), schemas.LEDGER)
    _assert_schema(_table(real_run, "fingerprints"), schemas.FINGERPRINTS)
    _assert_schema(_table(real_run, "doc_stats"), schemas.DOC_STATS)
    for table in ("documents", "ledger", "fingerprints", "doc_stats"):
        record = json.loads((real_run / table / "_webwinnow.json").read_text())
        assert record["config"]["winnow"] == {"k": 50, "w": 100, "robust": True, "mod_p": 0, "unit": "char", "lexer": "c"}


def test_spark_fingerprints_equal_the_local_kernel(real_run):
    docs = {d["doc_id"]: d["text"] for d in _table(real_run, "documents").to_pylist() if d["status"] == "ok"}
    fps = _table(real_run, "fingerprints").to_pandas().sort_values(["doc_id", "pos", "hash"])
    stats = {r["doc_id"]: r for r in _table(real_run, "doc_stats").to_pylist()}
    assert set(stats) == set(docs)
    by_doc = {k: g for k, g in fps.groupby("doc_id")}
    assert set(by_doc) <= set(docs)
    for did, text in sorted(docs.items()):
        hashes, positions = webwinnow.fingerprint(text, k=50, w=100)
        got = by_doc.get(did)
        got_hashes = got["hash"].to_numpy() if got is not None else np.empty(0, np.int64)
        got_pos = got["pos"].to_numpy() if got is not None else np.empty(0, np.int64)
        order = np.lexsort((hashes, positions))
        assert np.array_equal(got_pos, positions[order]), did
        assert np.array_equal(got_hashes, hashes[order]), did
        assert stats[did]["fingerprints"] == len(hashes)


def test_sample_run_summary_and_density(sample_run, sample_dir):
    summary = json.loads((sample_run / "summary.json").read_text())
    planted = json.loads((sample_dir / "planted.json").read_text())
    e, f = summary["extract"], summary["fingerprint"]
    assert summary["out"] == str(sample_run) and summary["report"] == str(sample_run / "report" / "index.html")
    # the run in words, on the terminal and at the top of the report: pairs, the largest copy, template, clusters
    headline = summary["headline"]
    pairs = _table(sample_run, "pairs").to_pylist()
    largest = max(min(r["content_chars_a"], r["content_chars_b"]) for r in pairs)
    assert headline[0].startswith(f"{len(pairs)} page pairs share copied content") and f"{largest:,} normalized" in headline[0]
    assert "Site template" in headline[1] and f"{summary['clusters']['clusters']:,} near-duplicate clusters" in headline[2]
    assert "fit of the hash frequencies is poor" in headline[3]  # the sample's R² is 0.77
    index = (sample_run / "report" / "index.html").read_text()
    assert index.index('class="headline"') < index.index('class="cards"')
    assert e["records"] == e["parsed"] + e["skipped"] + e["failed"] + e["flagged"]
    assert e["failed"] == 0 and e["flagged"] == 0
    assert e["parsed"] == f["documents"]
    # real prose with site boilerplate is not random text, but close to 2/(w+1)
    assert 0.8 * 2 / 101 < f["density"] < 1.25 * 2 / 101
    docs = _table(sample_run, "documents").to_pylist()
    assert e["parsed"] == sum(d["status"] == "ok" for d in docs)
    for d in docs:  # script and style contents never reach the text
        for sentinel in planted["sentinels"].values() if isinstance(planted["sentinels"], dict) else planted["sentinels"]:
            assert sentinel not in (d["text"] or "")


def test_fingerprint_positions_point_into_the_text(sample_run):
    docs = {d["doc_id"]: d["text"] for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok"}
    fps = _table(sample_run, "fingerprints").to_pylist()
    for r in fps[:: max(1, len(fps) // 500)]:
        text = docs[r["doc_id"]]
        norm, _ = webwinnow.normalize(text[r["pos"] :])
        hashes, _ = webwinnow.kgram_hashes(norm[:50], k=50)
        assert hashes[0] == r["hash"]
        assert webwinnow.normalize(text[r["pos"]])[0] != ""  # a k-gram starts on a kept character


def test_same_output_whatever_the_partitioning(tmp_path, sample_dir, sample_run):
    """One task per file instead of one for all, and other shuffle partitions: identical tables."""
    conf = tmp_path / "small-tasks.toml"
    conf.write_text("[extract]\ntask_bytes = 1\n[spark]\nshuffle_partitions = 3\n")
    out = tmp_path / "again"
    _run(["run", str(sample_dir), "--out", str(out), "--conf", str(CONF), "--conf", str(QUICK), "--conf", str(conf)])
    assert json.loads((out / "summary.json").read_text())["extract"]["tasks"] == 3
    for table, key in (
        ("documents", ["doc_id"]),
        ("ledger", ["file", "offset", "kind", "reason"]),
        ("fingerprints", ["doc_id", "pos", "hash"]),
        ("doc_stats", ["doc_id"]),
        ("hash_freq", ["hash"]),
        ("rank_freq", ["rank"]),
        ("candidate_pairs", ["doc_a", "doc_b"]),
        ("pairs", ["doc_a", "doc_b"]),
        ("template_pairs", ["doc_a", "doc_b"]),
        ("passages", ["doc_a", "doc_b", "start_a", "start_b"]),
        ("clusters", ["doc_id"]),
    ):
        a = _table(sample_run, table).to_pandas().sort_values(key).reset_index(drop=True)
        b = _table(out, table).to_pandas().sort_values(key).reset_index(drop=True)
        assert a.equals(b), table


def test_stage_alone_rewrites_its_table(tmp_path, sample_run):
    """`webwinnow fingerprint` re-runs alone on an existing output, replacing only its tables."""
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(sample_run, out)
    before = _table(out, "documents").num_rows
    _run(["fingerprint", "--out", str(out), "--conf", str(CONF), "--w", "4"])
    stats = _table(out, "doc_stats").to_pandas()
    assert _table(out, "documents").num_rows == before
    density = stats["fingerprints"].sum() / stats["kgrams"].sum()
    assert abs(density - 2 / 5) < 0.05
    assert json.loads((out / "fingerprints" / "_webwinnow.json").read_text())["config"]["winnow"]["w"] == 4
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".webwinnow-output"]  # no staging left


def _planted_pairs(sample_run, sample_dir):
    planted = json.loads((sample_dir / "planted.json").read_text())
    docs = [d for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok"]
    by_url: dict[str, list[dict]] = {}
    for d in sorted(docs, key=lambda d: d["fetch_time"] or ""):
        by_url.setdefault(d["url"], []).append(d)
    for copy in planted["copies"]:
        if copy["kind"] == "version":
            src, dst = by_url[copy["src_url"]][0], by_url[copy["src_url"]][-1]
        else:
            src, dst = by_url[copy["src_url"]][0], by_url[copy["dst_url"]][0]
        yield copy, src, dst


def test_planted_copies_are_found_exactly(sample_run, sample_dir):
    pairs = {(p["doc_a"], p["doc_b"]): p for p in _table(sample_run, "pairs").to_pylist()}
    spans: dict[tuple[int, int], list[dict]] = {}
    for p in _table(sample_run, "passages").to_pylist():
        spans.setdefault((p["doc_a"], p["doc_b"]), []).append(p)
    clusters = {r["doc_id"]: r["cluster_id"] for r in _table(sample_run, "clusters").to_pylist()}
    t = 149
    checked = Counter()
    for copy, src, dst in _planted_pairs(sample_run, sample_dir):
        key = tuple(sorted((src["doc_id"], dst["doc_id"])))
        if copy["kind"] == "passage":
            wanted = webwinnow.normalize(copy["text"])[0]
            src_is_a = key[0] == src["doc_id"]
            covering = [
                s
                for s in spans.get(key, [])
                if wanted
                in webwinnow.normalize(
                    src["text"][s["start_a"] : s["end_a"]] if src_is_a else src["text"][s["start_b"] : s["end_b"]]
                )[0]
            ]
            if copy["normalized_length"] >= t:
                assert key in pairs, copy
                assert len(covering) == 1, copy  # one span covering the whole passage
                assert covering[0]["boilerplate"] < 0.5, copy  # copied content, not site template
                checked["long"] += 1
            elif copy["normalized_length"] < 50:
                assert not covering, copy
                checked["short"] += 1
        else:  # mirrors and versions: one cluster, resemblance near their overlap
            assert clusters.get(src["doc_id"]) is not None and clusters[src["doc_id"]] == clusters.get(dst["doc_id"]), copy
            floor = 0.85 if copy["kind"] == "mirror_exact" else 0.5
            assert pairs[key]["resemblance"] >= floor, (copy, pairs[key]["resemblance"])
            checked[copy["kind"]] += 1
    assert checked["long"] >= 15 and checked["short"] >= 4 and checked["mirror_exact"] >= 3


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _naive_source(a: dict, b: dict) -> tuple[str, str | None]:
    """Which of two documents is the likely original: the first of Last-Modified, WARC-Date and
    Date that both have and on which they differ; equal on all they share: a tie."""
    tie = None
    for basis, column in (("last_modified", "last_modified"), ("warc_date", "fetch_time"), ("http_date", "http_date")):
        x, y = a[column], b[column]
        if x and y and _ISO.fullmatch(x) and _ISO.fullmatch(y):
            if x != y:
                return ("a" if x < y else "b"), basis
            tie = tie or basis
    return ("tie", tie) if tie else ("unknown", None)


@pytest.mark.parametrize("which", ["real_run", "sample_run"])
def test_the_source_side_is_the_earlier_page(which, request):
    out = request.getfixturevalue(which)
    docs = {d["doc_id"]: d for d in _table(out, "documents").to_pylist()}
    pairs = _table(out, "pairs").to_pylist()
    canonical = lambda d: all(v is None or _ISO.fullmatch(v) for v in (d["last_modified"], d["fetch_time"], d["http_date"]))
    checked = Counter()
    for p in pairs:
        a, b = docs[p["doc_a"]], docs[p["doc_b"]]
        if canonical(a) and canonical(b):  # a malformed WARC-Date is no time (Spark's try_cast)
            assert (p["source"], p["source_basis"]) == _naive_source(a, b), p
            checked[p["source"]] += 1
    assert sum(checked.values()) >= 0.9 * len(pairs) and checked["a"] and checked["b"], checked
    sides = {(p["doc_a"], p["doc_b"]): (p["source"], p["source_basis"]) for p in pairs}
    for p in _table(out, "passages").to_pylist():
        assert (p["source"], p["source_basis"]) == sides[(p["doc_a"], p["doc_b"])]  # a passage's is its pair's
    clusters = _table(out, "clusters").to_pylist()
    members: dict[int, list[int]] = {}
    for c in clusters:
        members.setdefault(c["cluster_id"], []).append(c["doc_id"])
    key = lambda d: (
        tuple(
            docs[d][c] if docs[d][c] and _ISO.fullmatch(docs[d][c]) else "~" for c in ("last_modified", "fetch_time", "http_date")
        )
        + (d,)
    )
    for c in clusters:
        if all(canonical(docs[d]) for d in members[c["cluster_id"]]):
            assert c["source_doc"] == min(members[c["cluster_id"]], key=key)


def test_every_pair_shares_a_verified_passage_of_at_least_k(sample_run):
    docs = {d["doc_id"]: d["text"] for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok"}
    spans: dict[tuple[int, int], list[dict]] = {}
    for p in _table(sample_run, "passages").to_pylist():
        spans.setdefault((p["doc_a"], p["doc_b"]), []).append(p)
    pairs = _table(sample_run, "pairs").to_pylist()
    assert pairs
    for p in pairs:
        key = (p["doc_a"], p["doc_b"])
        assert spans.get(key), key
        for s in spans[key]:
            a = webwinnow.normalize(docs[key[0]][s["start_a"] : s["end_a"]])[0]
            b = webwinnow.normalize(docs[key[1]][s["start_b"] : s["end_b"]])[0]
            assert a == b and len(a) == s["length"] >= 50


def test_hash_freq_and_report(sample_run):
    stats = json.loads((sample_run / "report" / "stats.json").read_text())
    fit = stats["stages"]["hash_freq"]["fit"]
    assert stats["fit"] == fit
    assert fit["slope"] is not None and -3 < fit["slope"] < 0
    hf = _table(sample_run, "hash_freq").to_pandas()
    fps = _table(sample_run, "fingerprints").to_pandas()
    assert len(hf) == fps["hash"].nunique()
    assert hf["docs"].sum() == len(fps.drop_duplicates(["doc_id", "hash"]))
    assert hf["occurrences"].sum() == len(fps)
    top = hf.sort_values("docs", ascending=False).iloc[0]
    assert top["docs"] > stats["max_df"] == stats["stages"]["candidates"]["max_df"]  # site navigation: boilerplate, never paired
    assert isinstance(top["snippet"], str) and top["snippet"]
    runs = _table(sample_run, "rank_freq").to_pandas()
    assert runs["hashes"].sum() == len(hf) and runs["rank"].iloc[0] == 1
    index = (sample_run / "report" / "index.html").read_text()
    best = _table(sample_run, "pairs").to_pandas()
    best = (
        best.assign(
            c=best[["content_chars_a", "content_chars_b"]].min(axis=1), s=best[["content_share_a", "content_share_b"]].max(axis=1)
        )
        .sort_values(["c", "s", "doc_a", "doc_b"], ascending=[False, False, True, True])
        .iloc[0]
    )
    assert best["url_a"] in index and best["url_b"] in index
    assert (sample_run / "report" / "boilerplate.html").exists()
    assert (sample_run / "report" / "rank_frequency.png").stat().st_size > 1000


def _naive_template(norm_positions: list[int], boilerplate: list[bool], k: int, w: int, n: int) -> list[bool]:
    """Template text, by its definition (README): boilerplate fingerprints' k-grams, and the gaps of
    at most max(w, k) between them and to the text's ends."""
    mask = [False] * n
    marked = [p for p, b in zip(norm_positions, boilerplate) if b]
    g = max(w, k)
    for p in marked:
        mask[p : p + k] = [True] * len(mask[p : p + k])
    for p, q in zip(marked, marked[1:]):
        if q - p <= g:
            mask[p:q] = [True] * (q - p)
    if marked and marked[0] <= g:
        mask[: marked[0]] = [True] * marked[0]
    if marked and (n - k) - marked[-1] <= g:
        mask[marked[-1] :] = [True] * (n - marked[-1])
    return mask


def _naive_edges(mask: list[bool], chars: str, k: int, w: int) -> set[str]:
    """The k-grams (as text) next to a block of template text: starting at most w characters
    before it, or after its last k-gram's start."""
    out, i, n = set(), 0, len(mask)
    while i < n:
        if not mask[i]:
            i += 1
            continue
        j = i
        while j < n and mask[j]:
            j += 1
        for s in [*range(i - w, i), *range(j - k + 1, j - k + w + 1)]:
            if 0 <= s <= n - k:
                out.add(chars[s : s + k])
        i = j
    return out


def _longest_false(flags: list[bool]) -> int:
    best = run = 0
    for f in flags:
        run = 0 if f else run + 1
        best = max(best, run)
    return best


def test_pairs_share_content_and_template_pairs_only_template(sample_run):
    """Every candidate pair judged from scratch: spans grown character by character from its seeds
    below the cap, each side's template text marked by its definition (blocks, and the k-grams
    more than max_df pages hold next to theirs, compared as text). A pair is in `pairs` exactly
    when a span holds a run of at least t = w + k - 1 consecutive content characters on both
    sides, and the content counts agree."""
    from naive import normalize

    k, w = 50, 100
    max_df = json.loads((sample_run / "candidate_pairs" / "_webwinnow.json").read_text())["stats"]["max_df"]
    fps = _table(sample_run, "fingerprints").to_pandas()
    df = fps.groupby("hash")["doc_id"].nunique()
    boilerplate = set(df[df > max_df].index)
    texts = {d["doc_id"]: d["text"] for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok"}
    by_doc = {d: g.sort_values("pos") for d, g in fps.groupby("doc_id")}
    blocks: dict[int, tuple[str, list[int], list[bool]]] = {}
    edges: Counter = Counter()
    for doc in texts:
        chars, offsets = normalize(texts[doc])
        first = {}
        for i, o in enumerate(offsets):
            first.setdefault(o, i)
        rows = by_doc.get(doc, fps.iloc[:0])
        positions = [first[p] for p in rows["pos"]]
        blocks[doc] = (chars, offsets, _naive_template(positions, [h in boilerplate for h in rows["hash"]], k, w, len(chars)))
        edges.update(_naive_edges(blocks[doc][2], chars, k, w))
    template_kgrams = {g for g, docs in edges.items() if docs > max_df}
    assert template_kgrams  # the sample's navigation has ragged edges
    norm: dict[int, tuple[str, list[int], list[bool]]] = {}

    def side(doc: int):
        if doc not in norm:
            chars, offsets, mask = blocks[doc]
            mask = list(mask)
            for s in range(len(chars) - k + 1):
                if chars[s : s + k] in template_kgrams:
                    mask[s : s + k] = [True] * k
            norm[doc] = (chars, offsets, mask)
        return norm[doc]

    def spans(a: int, b: int):
        (ca, oa, ta), (cb, ob, tb) = side(a), side(b)
        first_a, first_b = ({}, {})
        for i, o in enumerate(oa):
            first_a.setdefault(o, i)
        for i, o in enumerate(ob):
            first_b.setdefault(o, i)
        fa, fb = by_doc[a], by_doc[b]
        out = set()
        for h, p in zip(fa["hash"], fa["pos"]):
            if h in boilerplate:
                continue
            for g, q in zip(fb["hash"], fb["pos"]):
                i, j = first_a[p], first_b[q]
                if g != h or ca[i : i + k] != cb[j : j + k]:
                    continue
                while i > 0 and j > 0 and ca[i - 1] == cb[j - 1]:
                    i, j = i - 1, j - 1
                e, f = first_a[p] + k, first_b[q] + k
                while e < len(ca) and f < len(cb) and ca[e] == cb[f]:
                    e, f = e + 1, f + 1
                out.add(
                    (
                        oa[i],
                        oa[e - 1] + 1,
                        ob[j],
                        ob[f - 1] + 1,
                        e - i,
                        sum(not t for t in ta[i:e]),
                        sum(not t for t in tb[j:f]),
                        _longest_false(ta[i:e]),
                        _longest_false(tb[j:f]),
                    )
                )
                ranges.setdefault((a, b), set()).add((i, e, j, f))
        return out

    ranges: dict[tuple[int, int], set] = {}

    pairs = {(p["doc_a"], p["doc_b"]): p for p in _table(sample_run, "pairs").to_pylist()}
    template = {(p["doc_a"], p["doc_b"]): p for p in _table(sample_run, "template_pairs").to_pylist()}
    candidates = {(p["doc_a"], p["doc_b"]) for p in _table(sample_run, "candidate_pairs").to_pylist()}
    assert set(pairs) | set(template) == candidates and not set(pairs) & set(template)
    passages: dict[tuple[int, int], set] = {}
    for p in _table(sample_run, "passages").to_pylist():
        passages.setdefault((p["doc_a"], p["doc_b"]), set()).add(
            tuple(
                p[c]
                for c in (
                    "start_a",
                    "end_a",
                    "start_b",
                    "end_b",
                    "length",
                    "content_chars_a",
                    "content_chars_b",
                    "content_run_a",
                    "content_run_b",
                )
            )
        )
    assert set(passages) == set(pairs)
    for key in sorted(candidates):
        want = spans(*key)
        content = any(min(ra, rb) >= w + k - 1 for *_, ra, rb in want)
        assert (key in pairs) == content, (key, want)
        if key in pairs:
            assert passages[key] == want, key
            p = pairs[key]
            covered_a = {x for i, e, _, _ in ranges[key] for x in range(i, e)}
            covered_b = {x for _, _, j, f in ranges[key] for x in range(j, f)}
            assert (p["copied_chars_a"], p["copied_chars_b"]) == (len(covered_a), len(covered_b))
            assert p["content_chars_a"] == sum(not side(key[0])[2][x] for x in covered_a)
            assert p["content_chars_b"] == sum(not side(key[1])[2][x] for x in covered_b)
            assert p["longest_content"] == max(min(s[7], s[8]) for s in want) >= w + k - 1
            assert p["content_share_a"] == pytest.approx(p["content_chars_a"] / len(side(key[0])[0]))
        else:
            assert template[key]["reason"] == ("template" if want else "no_passage")
            assert template[key]["passages"] == len(want)
    assert len(template) > 20 and len(pairs) > 20  # the sample has both kinds
    stats = json.loads((sample_run / "report" / "stats.json").read_text())["stages"]["passages"]
    assert (stats["pairs"], stats["template_pairs"]) == (len(pairs), len(template))


@pytest.mark.parametrize("which", ["real_run", "sample_run"])
def test_identical_texts_are_one_cluster_whatever_max_df(which, request):
    from naive import normalize

    out = request.getfixturevalue(which)
    groups: dict[str, list[int]] = {}
    for r in _table(out, "documents").select(["doc_id", "text", "status"]).to_pylist():
        text = normalize(r["text"] or "")[0] if r["status"] == "ok" else ""
        if text:
            groups.setdefault(text, []).append(r["doc_id"])
    clusters = {r["doc_id"]: r for r in _table(out, "clusters").to_pylist()}
    same = [ids for ids in groups.values() if len(ids) > 1]
    for ids in same:
        assert len({clusters[d]["cluster_id"] for d in ids}) == 1, ids
        assert all(clusters[d]["identical"] == len(ids) for d in ids)
    alone = {d for ids in groups.values() if len(ids) == 1 for d in ids}
    assert all(c["identical"] == 1 for d, c in clusters.items() if d in alone)
    stats = json.loads((out / "clusters" / "_webwinnow.json").read_text())["stats"]
    assert stats["identical_documents"] == sum(map(len, same)) and stats["identical_texts"] == len(same)
    if which == "real_run":  # byte-identical archive.org pages: every fingerprint above max_df, never paired
        assert max(map(len, same)) >= 10


def test_min_content_moves_pairs_with_less_content_to_template_pairs(sample_run, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(sample_run, out)
    before = {(p["doc_a"], p["doc_b"]): p["longest_content"] for p in _table(sample_run, "pairs").to_pylist()}
    cut = sorted(before.values())[len(before) // 2]  # half the sample's content pairs hold a shorter run
    strict = tmp_path / "strict.toml"
    strict.write_text(f"[passages]\nmin_content = {cut}\n")
    _run(["passages", "--out", str(out), "--conf", str(CONF), "--conf", str(strict)])
    after = {(p["doc_a"], p["doc_b"]) for p in _table(out, "pairs").to_pylist()}
    template = {(p["doc_a"], p["doc_b"]) for p in _table(out, "template_pairs").to_pylist()}
    assert after == {key for key, longest in before.items() if longest >= cut}
    assert 0 < len(after) < len(before) and template == set(before) - after | {
        (p["doc_a"], p["doc_b"]) for p in _table(sample_run, "template_pairs").to_pylist()
    }


@pytest.mark.parametrize("which", ["sample_run", "real_run"])
def test_report_rows_on_the_driver_equal_sparks(which, request, spark_session, monkeypatch):
    from reportpaths import report_rows_both_ways

    out = request.getfixturevalue(which)
    got = report_rows_both_ways(spark_session, out, monkeypatch)
    top, total = got["top"]
    assert total == len(_table(out, "pairs"))
    assert len(top) == min(total, 1000)
    copied = [min(r["content_chars_a"], r["content_chars_b"]) for r in top]
    assert copied == sorted(copied, reverse=True)  # the most copied content first
    assert all(r["warc_file_a"] and r["warc_file_b"] for r in top)  # each side's WARC coordinates joined
    texts, spans, _ = got["details"]
    assert spans and all(texts.get(a) and texts.get(b) for a, b in spans)
    assert got["pages"].record_outcomes and got["pages"].clusters and got["hashes"]


def _sorted_rows(out: Path, table: str, keys: list[str]) -> list[dict]:
    rows = _table(out, table).to_pylist()
    return sorted(rows, key=lambda r: tuple(r[k] for k in keys))


def test_passages_cut_from_texts_read_in_their_files_equal_those_joined_in_spark(sample_run, tmp_path, monkeypatch):
    from webwinnow.stages import passages

    # the sample's run read each documents file in a task of its own; here Spark joins the
    # requests to the texts, as it does when they are too many to broadcast
    out = tmp_path / "joined"
    shutil.copytree(sample_run, out)
    monkeypatch.setattr(passages, "BROADCAST_ROWS", -1)
    _run(["passages", "--out", str(out), "--conf", str(CONF)])
    for table, keys in (
        ("passages", ["doc_a", "doc_b", "start_a", "start_b"]),
        ("pairs", ["doc_a", "doc_b"]),
        ("template_pairs", ["doc_a", "doc_b"]),
    ):
        assert _sorted_rows(out, table, keys) == _sorted_rows(sample_run, table, keys), table
    assert _table(out, "pairs").num_rows > 10


@pytest.mark.parametrize("way", ["blobs", "spark"])
def test_candidate_pairs_made_by_spark_equal_the_drivers(sample_run, tmp_path, monkeypatch, way):
    from webwinnow.stages import candidates

    # the sample's run built candidate_pairs on the driver; here the pages' counts and times
    # meet the pair tasks' counts in two exchanges of blobs, as when the pairs are too many for
    # the driver, or (more than the blob partitions hold) in Spark's joins
    out = tmp_path / way
    shutil.copytree(sample_run, out)
    monkeypatch.setattr(candidates, "DRIVER_PAIRS", -1)
    calls: list = []
    real = candidates.blob_candidates
    monkeypatch.setattr(candidates, "blob_candidates", lambda *a: calls.append(a) or real(*a))
    if way == "spark":
        monkeypatch.setattr(candidates, "ROW_BYTES", 1 << 50)
    _run(["candidates", "--out", str(out), "--conf", str(CONF)])
    assert len(calls) == (way == "blobs")
    for table in ("candidate_pairs", "pair_seeds"):
        assert _sorted_rows(out, table, ["doc_a", "doc_b"]) == _sorted_rows(sample_run, table, ["doc_a", "doc_b"]), table
    assert _table(out, "candidate_pairs").num_rows > 100
    assert not [p.name for p in out.iterdir() if "count" in p.name]  # the counts' folder is gone


def test_template_kgrams_summed_on_the_driver_and_in_spark_alike(sample_run, tmp_path, monkeypatch):
    from webwinnow.stages import passages

    max_df = json.loads((sample_run / "candidate_pairs" / "_webwinnow.json").read_text())["stats"]["max_df"]
    want = _sorted_rows(sample_run, "template_kgrams", ["hash"])
    assert want and min(r["docs"] for r in want) > max_df
    # Spark sums the edge tasks' parts; each task sums a batch at a time (a hash in several sums)
    for name in ("DRIVER_EDGE_ROWS", "EDGE_SUM_ROWS"):
        out = tmp_path / name
        shutil.copytree(sample_run, out)
        monkeypatch.setattr(passages, name, -1 if name == "DRIVER_EDGE_ROWS" else 1)
        _run(["passages", "--out", str(out), "--conf", str(CONF)])
        monkeypatch.undo()
        assert _sorted_rows(out, "template_kgrams", ["hash"]) == want
        assert not [p.name for p in out.iterdir() if "edges" in p.name]  # the counts are gone once summed


@pytest.mark.parametrize("way", ["files_beyond_bounds", "driver_hosts", "spark"])
def test_hash_freq_counts_hosts_and_cuts_snippets_on_the_driver_and_in_spark_alike(sample_run, tmp_path, monkeypatch, way):
    from webwinnow.crawl.hosts import host_of
    from webwinnow.stages import hash_freq

    hosts = {d["doc_id"]: host_of(d["url"]) for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok"}
    holders: dict[int, set] = {}
    for h, d in zip(*(_table(sample_run, "fingerprints").column(c).to_pylist() for c in ("hash", "doc_id")), strict=True):
        holders.setdefault(h, set()).add(hosts[d])
    expected = {h: len(held - {None}) for h, held in holders.items()}
    assert len(set(hosts.values()) - {None}) > 3 and max(expected.values()) > 1  # several hosts, and hashes shared across them
    # The sample's run found each fingerprints file's hosts in the documents file its extract
    # task wrote beside it, and cut the snippets in one task per documents file, every request
    # shared. Beyond the driver's bounds, Spark sums the counts and moves each request to its
    # file's task. Without those files (a fingerprints table the fingerprint stage made): the
    # hosts read on the driver; or by a UDF and xxhash64 in Spark, snippets from the texts
    # joined to the requests.
    out = tmp_path / way
    shutil.copytree(sample_run, out)
    calls: dict[str, int] = {}
    for name in ("hosted_in_files", "_cut_routed", "driver_host_ids"):
        real = getattr(hash_freq, name)
        monkeypatch.setattr(hash_freq, name, lambda *a, _n=name, _f=real: calls.update({_n: calls.get(_n, 0) + 1}) or _f(*a))
    if way != "files_beyond_bounds":
        monkeypatch.setattr(hash_freq, "document_parts", lambda out: None)
    if way != "driver_hosts":
        monkeypatch.setattr(hash_freq, "BROADCAST_ROWS", -1)
    if way == "spark":
        monkeypatch.setattr(hash_freq, "DRIVER_HOSTS", -1)
    _run(["hash_freq", "--out", str(out), "--conf", str(CONF)])
    assert (
        calls
        == {
            "files_beyond_bounds": {"hosted_in_files": 1, "_cut_routed": 1},
            "driver_hosts": {"driver_host_ids": 1},
            "spark": {},
        }[way]
    )
    for run in (sample_run, out):
        got = _table(run, "hash_freq")
        assert dict(zip(got.column("hash").to_pylist(), got.column("hosts").to_pylist(), strict=True)) == expected
    rows = _sorted_rows(sample_run, "hash_freq", ["hash"])
    assert _sorted_rows(out, "hash_freq", ["hash"]) == rows
    # the frequencies of frequencies summed by Spark equal the driver's
    assert _sorted_rows(out, "rank_freq", ["rank"]) == _sorted_rows(sample_run, "rank_freq", ["rank"])
    stats = [json.loads((run / "rank_freq" / "_webwinnow.json").read_text())["stats"] for run in (sample_run, out)]
    assert stats[0] == stats[1] and stats[0]["hashes"] > 1000
    assert not [p.name for p in out.iterdir() if "counts" in p.name]  # the counting tasks' rows are gone
    assert sum(r["snippet"] is not None for r in rows) == sum(r["docs"] >= 2 for r in rows) > 100


def test_hash_freq_finds_hosts_beside_the_fingerprints_only_where_extract_wrote_both(sample_run, tmp_path):
    from webwinnow.stages.hash_freq import document_parts

    paired = document_parts(str(sample_run))
    assert paired and len(paired) == len(list((sample_run / "fingerprints").glob("*.parquet")))
    assert all(Path(fp).name == Path(doc).name and "/documents/" in doc for fp, doc in paired)
    for table, field, value in (
        ("fingerprints", "document_parts", None),  # made by the fingerprint stage (Spark's parts)
        ("documents", "recipe", "0000000000000000"),  # the documents made again since
    ):
        out = tmp_path / f"{table}-{field}"
        shutil.copytree(sample_run, out)
        meta_file = out / table / "_webwinnow.json"
        meta = json.loads(meta_file.read_text())
        meta.pop(field) if value is None else meta.update({field: value})
        meta_file.write_text(json.dumps(meta))
        assert document_parts(str(out)) is None
    out = tmp_path / "a_part_missing"
    shutil.copytree(sample_run, out)
    next((out / "documents").glob("*.parquet")).unlink()
    assert document_parts(str(out)) is None


def test_past_the_blob_shuffles_partitions_spark_sorts_and_the_tables_are_the_same(sample_run, tmp_path, monkeypatch):
    from webwinnow.stages import _exchange, candidates, hash_freq

    # hash_freq moves the fingerprints, candidates the seeds, as blobs; a crawl whose rows need
    # more than MAX_PARTITIONS blob partitions takes Spark's sorted shuffle instead: the same
    # tables and the same sorted parts.
    exchanges: list = []
    real = _exchange.exchanged
    for module in (candidates, hash_freq):
        monkeypatch.setattr(module, "exchanged", lambda *a: exchanges.append(a) or real(*a))

    def parts(run: Path) -> list[list[tuple]]:
        rows = [pq.read_table(p) for p in sorted((run / "hash_freq" / "_by_hash").glob("*.parquet"))]
        return [list(zip(*(t.column(c).to_pylist() for c in ("hash", "doc_id", "pos")), strict=True)) for t in rows]

    for way, most in (("blobs", _exchange.MAX_PARTITIONS), ("sorted", 0)):
        monkeypatch.setattr(_exchange, "MAX_PARTITIONS", most)
        out = tmp_path / way
        shutil.copytree(sample_run, out)
        before = len(exchanges)
        _run(["hash_freq", "--out", str(out), "--conf", str(CONF)])
        _run(["candidates", "--out", str(out), "--conf", str(CONF)])
        assert len(exchanges) - before == (2 if way == "blobs" else 0)
        assert _sorted_rows(out, "hash_freq", ["hash"]) == _sorted_rows(sample_run, "hash_freq", ["hash"])
        for table in ("candidate_pairs", "pair_seeds"):
            assert _sorted_rows(out, table, ["doc_a", "doc_b"]) == _sorted_rows(sample_run, table, ["doc_a", "doc_b"])
        held = parts(out)
        assert all(p == sorted(p) for p in held)  # each part sorted
        hashes = [{h for h, _, _ in p} for p in held]
        assert sum(len(h) for h in hashes) == len(set().union(*hashes))  # a hash in one part
        assert sorted(r for p in held for r in p) == sorted(r for p in parts(sample_run) for r in p)


def test_hash_freq_keeps_the_fingerprints_sorted_by_hash_and_candidates_seed_from_them(sample_run, tmp_path, monkeypatch):
    from webwinnow.stages import candidates

    parts = sorted((sample_run / "hash_freq" / "_by_hash").glob("*.parquet"))
    assert parts
    seen: set[int] = set()
    for part in parts:
        rows = pq.read_table(part)
        keys = list(zip(*(rows.column(c).to_pylist() for c in ("hash", "doc_id", "pos")), strict=True))
        assert keys == sorted(keys)  # sorted by hash, document, position
        hashes = set(rows.column("hash").to_pylist())
        assert not hashes & seen  # a hash's every row in one part
        seen |= hashes
    held = sorted(
        r for part in parts for r in zip(*(pq.read_table(part).column(c).to_pylist() for c in ("hash", "doc_id", "pos")))
    )
    fps = _table(sample_run, "fingerprints")
    assert held == sorted(zip(*(fps.column(c).to_pylist() for c in ("hash", "doc_id", "pos"))))
    # a page's opening text as template: some fingerprints excluded, on both paths
    doc = next(d for d in _table(sample_run, "documents").to_pylist() if d["status"] == "ok" and len(d["text"] or "") > 2000)
    (tmp_path / "template.txt").write_text(doc["text"][:1500])
    calls = []
    real = candidates.seeds_from_parts
    monkeypatch.setattr(candidates, "seeds_from_parts", lambda *a: calls.append(a) or real(*a))
    for exclude in ([], ["--exclude", str(tmp_path / "template.txt")]):
        got = {}
        for way in ("parts", "shuffle"):
            out = tmp_path / f"{way}{len(exclude)}"
            shutil.copytree(sample_run, out)
            if way == "shuffle":
                shutil.rmtree(out / "hash_freq" / "_by_hash")
            before = len(calls)
            _run(["candidates", "--out", str(out), "--conf", str(CONF), *exclude])
            assert len(calls) == before + (way == "parts")
            got[way] = [_sorted_rows(out, t, ["doc_a", "doc_b"]) for t in ("candidate_pairs", "pair_seeds")]
        assert got["parts"] == got["shuffle"]
        if exclude:
            assert json.loads((out / "candidate_pairs" / "_webwinnow.json").read_text())["excluded_hashes"] > 0
