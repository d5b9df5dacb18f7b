"""The sample-crawl generator: deterministic bytes, readable WARCs, and planted copies that are really there."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from webwinnow import sample

from paths import LIB

# ---------------------------------------------------------------------------------------------
# helpers (deliberately independent of the generator's own)


def norm(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def visible(doc: str) -> str:
    doc = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", doc)
    doc = re.sub(r"(?s)<!--.*?-->", " ", doc)
    doc = re.sub(r"(?s)<[^>]+>", " ", doc)
    return html.unescape(doc)


def main_part(doc: str) -> str:
    found = re.findall(r"(?is)<main\b[^>]*>(.*?)</main>", doc)
    assert len(found) == 1, "every HTML page has exactly one <main>"
    return found[0]


def charset_of(ctype: str | None, body: bytes) -> str:
    m = re.search(r"charset=([\w-]+)", ctype or "", re.I)
    if m:
        return m.group(1)
    m = re.search(rb'<meta\s+charset="([\w-]+)"', body[:2048], re.I)
    if m:
        return m.group(1).decode("ascii")
    return "utf-8"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shingles(text: str, k: int = 25) -> set[str]:
    return {text[i : i + k] for i in range(len(text) - k + 1)}


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample_a")
    t0 = time.perf_counter()
    summary = sample.write_sample(out)
    elapsed = time.perf_counter() - t0
    return out, summary, elapsed


@pytest.fixture(scope="module")
def planted(generated):
    out, _, _ = generated
    return json.loads((out / "planted.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def records(generated):
    """Every record of every file, read fully with warcio."""
    out, summary, _ = generated
    recs = []
    for path in summary["warc_files"]:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                r = {
                    "file": os.path.basename(path),
                    "type": rec.rec_type,
                    "id": rec.rec_headers.get_header("WARC-Record-ID"),
                    "url": rec.rec_headers.get_header("WARC-Target-URI"),
                    "date": rec.rec_headers.get_header("WARC-Date"),
                    "warc": rec.rec_headers,
                    "http": rec.http_headers,
                }
                if rec.rec_type == "response":
                    # the stored (raw) payload; then decode it the way warcio does
                    raw = rec.raw_stream.read()
                    r["raw"] = raw
                    r["body"] = None
                else:
                    r["body"] = rec.content_stream().read()
                recs.append(r)
    # decoded bodies: a second pass, because the raw stream above has been consumed
    by_pos = iter([r for r in recs if r["type"] == "response"])
    for path in summary["warc_files"]:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "response":
                    next(by_pos)["body"] = rec.content_stream().read()
    return recs


@pytest.fixture(scope="module")
def pages(records):
    """HTML 200 responses: list of dicts with url, date, file, text (str), vis_norm, main_norm."""
    out = []
    for r in records:
        if r["type"] != "response" or r["http"].get_statuscode() != "200":
            continue
        ctype = r["http"].get_header("Content-Type") or ""
        if not ctype.startswith("text/html"):
            continue
        text = r["body"].decode(charset_of(ctype, r["body"]))
        out.append(
            {
                "url": r["url"],
                "date": r["date"],
                "file": r["file"],
                "text": text,
                "ctype": ctype,
                "vis": visible(text),
                "vis_norm": norm(visible(text)),
                "main_norm": norm(visible(main_part(text))),
            }
        )
    return out


def page(pages, url, date=None):
    found = [p for p in pages if p["url"] == url and (date is None or p["date"] == date)]
    assert len(found) == 1, (url, date, len(found))
    return found[0]


# ---------------------------------------------------------------------------------------------
# determinism and file format


def test_output_is_byte_identical_across_runs_and_processes(generated, tmp_path):
    out_a, summary, _ = generated
    out_b = tmp_path / "b"
    env = dict(os.environ, PYTHONPATH=str(LIB), PYTHONHASHSEED="12345")
    proc = subprocess.run(
        [sys.executable, "-m", "webwinnow.sample", str(out_b)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "planted_copies:" in proc.stdout
    names_a = sorted(p.name for p in out_a.iterdir())
    names_b = sorted(p.name for p in out_b.iterdir())
    assert names_a == names_b == ["planted.json", "sample-00000.warc.gz", "sample-00001.warc.gz", "sample-00002.warc.gz"]
    for name in names_a:
        assert sha256(out_a / name) == sha256(out_b / name), name


def test_seed_changes_output(generated, tmp_path):
    out_a, _, _ = generated
    sample.write_sample(tmp_path, seed=7, pages=60, files=2)
    assert sha256(out_a / "sample-00000.warc.gz") != sha256(tmp_path / "sample-00000.warc.gz")
    assert json.loads((tmp_path / "planted.json").read_text())["seed"] == 7


def test_site_tag_moves_every_site_to_its_own_hosts(tmp_path):
    """The scaling bench unions tagged crawls: no URL or host may collide with another tag's."""
    summary = sample.write_sample(tmp_path, seed=11, pages=60, files=1, site_tag="s11")
    planted = json.loads((tmp_path / "planted.json").read_text())
    assert set(planted["hosts"].values()) == {
        "news.s11.sample.test",
        "www.news.s11.sample.test",
        "docs.s11.sample.test",
        "blog.s11.sample.test",
        "mirror.s11.sample.test",
    }
    hosts, ips = Counter(), Counter()
    with open(summary["warc_files"][0], "rb") as fh:
        for rec in ArchiveIterator(fh):
            uri = rec.rec_headers.get_header("WARC-Target-URI")
            if uri:
                hosts[uri.split("/")[2]] += 1
            if rec.rec_headers.get_header("WARC-IP-Address"):
                ips[rec.rec_headers.get_header("WARC-IP-Address")] += 1
    assert hosts and all(h.endswith(".s11.sample.test") for h in hosts), hosts
    assert ips  # tagged hosts keep their addresses
    for copy in planted["copies"]:
        assert ".s11.sample.test" in copy["src_url"] and ".s11.sample.test" in copy["dst_url"]
    with pytest.raises(ValueError, match="site_tag"):
        sample.write_sample(tmp_path / "bad", site_tag="a.b")


def test_generation_is_fast(generated):
    _, _, elapsed = generated
    assert elapsed < 15  # about 1 s on a laptop core; generous for slow CI


def test_one_gzip_member_per_record_without_timestamps(generated, records):
    _, summary, _ = generated
    members = 0
    for path in summary["warc_files"]:
        data = Path(path).read_bytes()
        while data:
            assert data[:3] == b"\x1f\x8b\x08"
            assert data[4:8] == b"\x00\x00\x00\x00", "gzip MTIME must be zero"
            d = zlib.decompressobj(wbits=31)
            d.decompress(data)
            assert d.eof
            data = d.unused_data
            members += 1
    assert members == len(records) == sum(summary["records"].values())


def test_record_counts_match_summary(generated, records):
    _, summary, _ = generated
    assert dict(Counter(r["type"] for r in records)) == summary["records"]
    for path, expected in zip(summary["warc_files"], summary["records_per_file"]):
        got = Counter(r["type"] for r in records if r["file"] == os.path.basename(path))
        assert dict(got) == expected
        assert got["warcinfo"] == 1
    first = {}
    for r in records:
        first.setdefault(r["file"], r["type"])
    assert set(first.values()) == {"warcinfo"}
    assert summary["records"]["revisit"] == 2
    assert summary["records"]["metadata"] == 1
    assert summary["html_pages"] >= 300


def test_every_response_follows_its_request(records):
    for prev, rec in zip(records, records[1:]):
        if rec["type"] in ("response", "revisit"):
            assert prev["type"] == "request"
            assert prev["url"] == rec["url"]
            assert prev["warc"].get_header("WARC-Concurrent-To") == rec["id"]
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"<urn:uuid:[0-9a-f-]{36}>", i) for i in ids)


# ---------------------------------------------------------------------------------------------
# planted copies


def test_passages_are_in_source_and_destination(planted, pages):
    passages = [c for c in planted["copies"] if c["kind"] == "passage"]
    assert len(passages) >= 25
    for c in passages:
        n = norm(c["text"])
        assert len(n) == c["normalized_length"]
        src = page(pages, c["src_url"], c["src_date"])
        dst = page(pages, c["dst_url"], c["dst_date"])
        assert src["file"] == c["src_file"] and dst["file"] == c["dst_file"]
        assert n in src["main_norm"], c["src_url"]
        assert n in dst["main_norm"], c["dst_url"]
        # the words appear in the source exactly as recorded (up to whitespace)
        collapse = lambda s: " ".join(s.split())  # noqa: E731
        assert collapse(c["text"]) in collapse(src["vis"])


def test_long_passages_occur_only_where_planted(planted, pages):
    for c in planted["copies"]:
        if c["kind"] != "passage" or c["normalized_length"] < 149:
            continue
        n = norm(c["text"])
        where = {p["url"] for p in pages if n in p["vis_norm"]}
        assert where == {c["src_url"], c["dst_url"]}, c


def test_passage_length_classes(planted):
    classes = planted["length_classes"]
    assert classes["short"] == [20, 45] and classes["threshold"] == [149, 200]
    by_class = Counter()
    for c in planted["copies"]:
        if c["kind"] != "passage":
            continue
        lo, hi = classes[c["length_class"]]
        assert lo <= c["normalized_length"] <= hi
        by_class[c["length_class"]] += 1
    assert set(by_class) == {"short", "threshold", "medium", "long"}
    assert min(by_class.values()) >= 4
    lengths = {c["normalized_length"] for c in planted["copies"] if c["kind"] == "passage"}
    assert {149, 150, 151}.issubset(lengths)


def test_passage_copies_vary_markup_case_and_host(planted, pages):
    passages = [c for c in planted["copies"] if c["kind"] == "passage"]
    assert {c["case"] for c in passages} >= {"upper", "lower", None}
    assert len({c["dst_style"] for c in passages}) >= 3
    host = lambda u: u.split("/")[2]  # noqa: E731
    cross = sum(host(c["src_url"]) != host(c["dst_url"]) for c in passages)
    assert cross >= len(passages) * 0.6
    assert sum(c["src_file"] != c["dst_file"] for c in passages) >= len(passages) // 2
    for c in passages:
        if c["case"]:
            dst = page(pages, c["dst_url"], c["dst_date"])
            first_words = " ".join(c["text"].split()[:3])
            assert first_words not in " ".join(dst["vis"].split())  # the case really differs
            assert getattr(first_words, c["case"])() in " ".join(dst["vis"].split())


def test_exact_mirrors_have_identical_main_text(planted, pages):
    mirrors = [c for c in planted["copies"] if c["kind"] == "mirror_exact"]
    assert len(mirrors) >= 3
    for c in mirrors:
        src = page(pages, c["src_url"], c["src_date"])
        dst = page(pages, c["dst_url"], c["dst_date"])
        assert c["src_url"] != c["dst_url"]
        assert src["main_norm"] == dst["main_norm"]
        assert len(src["main_norm"]) == c["normalized_length"]
    # one of them is a www. twin: the whole page is the same apart from nothing at all
    twins = [c for c in mirrors if c["dst_url"].replace("://www.", "://") == c["src_url"]]
    assert twins
    c = twins[0]
    assert page(pages, c["src_url"])["text"] == page(pages, c["dst_url"])["text"]


def test_edited_mirrors_overlap_mostly(planted, pages):
    mirrors = [c for c in planted["copies"] if c["kind"] == "mirror_edited"]
    assert len(mirrors) >= 3
    for c in mirrors:
        src = page(pages, c["src_url"], c["src_date"])["main_norm"]
        dst = page(pages, c["dst_url"], c["dst_date"])["main_norm"]
        assert src != dst
        kept = len(shingles(src) & shingles(dst)) / len(shingles(src))
        assert 0.6 <= kept < 1.0, (c["dst_url"], kept)
    assert len(mirrors) + len([c for c in planted["copies"] if c["kind"] == "mirror_exact"]) >= 8


def test_versions_share_url_and_differ_slightly(planted, pages):
    versions = [c for c in planted["copies"] if c["kind"] == "version"]
    assert len(versions) >= 2
    for c in versions:
        assert c["src_url"] == c["dst_url"] and c["src_date"] < c["dst_date"]
        old = page(pages, c["src_url"], c["src_date"])["main_norm"]
        new = page(pages, c["dst_url"], c["dst_date"])["main_norm"]
        assert old != new
        assert len(shingles(old) & shingles(new)) / len(shingles(old)) > 0.7


# ---------------------------------------------------------------------------------------------
# page content and the records that exercise skipping and decoding


def test_templates_repeat_boilerplate(pages):
    news = [p for p in pages if p["url"].startswith("http://news.sample.test/")]
    docs = [p for p in pages if p["url"].startswith("http://docs.sample.test/")]
    assert len(news) > 100 and len(docs) > 100
    for group, pattern in (
        (news, r"(?s)<aside class=\"sidebar\">(.*?)</aside>"),
        (docs, r"(?s)<nav id=\"side-nav\">(.*?)</nav>"),
    ):
        parts = [norm(visible(re.search(pattern, p["text"]).group(1))) for p in group]
        assert len(set(parts)) == 1 and len(parts[0]) > 200
        nav_links = re.search(pattern, group[0]["text"]).group(1).count("<a ")
        assert nav_links >= 8


def test_script_and_style_content_is_not_visible(planted, pages):
    s, t = planted["sentinels"]["script"], planted["sentinels"]["style"]
    for p in pages:
        assert s in p["text"] and t in p["text"]
        assert s not in p["vis"] and t not in p["vis"]
    # the structure the extractor has to handle is common, not a one-off
    for tag in ("<table", "<h2>", "<li>", "<ul>", "<b>", "<em>", '<a href="/topic/'):
        assert sum(tag in main_part(p["text"]) for p in pages) > 100, tag


def test_charsets(planted, records, pages):
    special = planted["special"]
    by_url = {r["url"]: r for r in records if r["type"] == "response"}

    r = by_url[special["latin1"]]
    assert "charset=ISO-8859-1" in r["http"].get_header("Content-Type")
    assert b"<meta charset" not in r["body"]
    with pytest.raises(UnicodeDecodeError):
        r["body"].decode("utf-8")
    assert re.search("[éèàâüöñçêôî]", r["body"].decode("latin-1"))

    r = by_url[special["cp1252_meta"]]
    assert "charset" not in r["http"].get_header("Content-Type")
    assert b'<meta charset="windows-1252">' in r["body"]
    assert b"\x80" in r["body"] and b"\x93" in r["body"]  # euro sign and a curly quote

    r = by_url[special["undeclared_utf8"]]
    assert "charset" not in r["http"].get_header("Content-Type")
    assert b"charset" not in r["body"]
    text = r["body"].decode("utf-8")
    assert re.search("[őłžščę]", text)

    for script, letters in (("greek", "\u0370-\u03ff"), ("cyrillic", "\u0400-\u04ff"), ("cjk", "\u3040-\u9fff")):
        vis = page(pages, special[script])["vis"]
        alpha = [ch for ch in vis if ch.isalpha()]
        share = sum(bool(re.match(f"[{letters}]", ch)) for ch in alpha) / len(alpha)
        assert share > 0.5, (script, share)
    assert any(c["kind"] == "mirror_exact" and c["src_url"] == special["greek"] for c in planted["copies"])


def test_transfer_and_content_encoding(planted, records):
    special = planted["special"]
    by_url = {r["url"]: r for r in records if r["type"] == "response"}

    r = by_url[special["chunked"]]
    assert r["http"].get_header("Transfer-Encoding") == "chunked"
    assert r["http"].get_header("Content-Length") is None
    assert re.match(rb"[0-9a-f]+\r\n<!DOCTYPE html>", r["raw"])
    assert r["raw"].endswith(b"0\r\n\r\n")
    assert r["body"].startswith(b"<!DOCTYPE html>") and r["body"].endswith(b"</html>\n")

    r = by_url[special["gzip"]]
    assert r["http"].get_header("Content-Encoding") == "gzip"
    assert r["raw"][:2] == b"\x1f\x8b" and r["raw"][4:8] == b"\x00\x00\x00\x00"
    assert int(r["http"].get_header("Content-Length")) == len(r["raw"])
    assert r["body"].startswith(b"<!DOCTYPE html>") and r["body"].endswith(b"</html>\n")
    # both are used by planted passages, so decoding them matters
    used = {c["src_url"] for c in planted["copies"]} | {c["dst_url"] for c in planted["copies"]}
    assert special["chunked"] in used and special["gzip"] in used


def test_non_html_revisits_and_statuses(planted, records):
    responses = [r for r in records if r["type"] == "response"]
    types = {(r["http"].get_header("Content-Type") or "").split(";")[0] for r in responses}
    assert {"image/png", "application/pdf", "text/css", "application/json", "text/html"} <= types
    png = next(r for r in responses if r["http"].get_header("Content-Type") == "image/png")
    assert png["body"].startswith(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    pdf = next(r for r in responses if r["http"].get_header("Content-Type") == "application/pdf")
    assert pdf["body"].startswith(b"%PDF-1.4") and pdf["body"].rstrip().endswith(b"%%EOF")
    js = next(r for r in responses if r["http"].get_header("Content-Type") == "application/json")
    assert json.loads(js["body"])["results"]

    status = {r["url"]: r["http"].get_statuscode() for r in responses}
    assert status[planted["special"]["404"]] == "404"
    assert status[planted["special"]["301"]] == "301"
    r301 = next(r for r in responses if r["url"] == planted["special"]["301"])
    assert r301["http"].get_header("Location").startswith("http://docs.sample.test/wiki/")

    revisits = [r for r in records if r["type"] == "revisit"]
    assert len(revisits) == 2
    for rv in revisits:
        assert rv["warc"].get_header("WARC-Profile").endswith("/revisit/identical-payload-digest")
        orig = [
            r
            for r in responses
            if r["url"] == rv["warc"].get_header("WARC-Refers-To-Target-URI")
            and r["date"] == rv["warc"].get_header("WARC-Refers-To-Date")
        ]
        assert len(orig) == 1 and orig[0]["date"] < rv["date"]
        assert orig[0]["warc"].get_header("WARC-Payload-Digest") == rv["warc"].get_header("WARC-Payload-Digest")

    meta = [r for r in records if r["type"] == "metadata"]
    assert len(meta) == 1 and meta[0]["url"] == planted["special"]["metadata"]
    assert b"outlink: " in meta[0]["body"]
    concurrent = {r["id"] for r in responses if r["url"] == meta[0]["url"]}
    assert meta[0]["warc"].get_header("WARC-Concurrent-To") in concurrent


def test_summary_matches_planted(generated, planted):
    _, summary, _ = generated
    assert summary["planted_copies"] == len(planted["copies"])
    assert summary["copies_by_kind"] == dict(Counter(c["kind"] for c in planted["copies"]))
    assert summary["copies_by_kind"]["mirror_exact"] >= 3 and summary["copies_by_kind"]["mirror_edited"] >= 3
    assert planted["seed"] == 2003 and planted["pages"] == 300


def test_cli_rejects_too_few_pages(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        sample.main([str(tmp_path), "--pages", "5"])
    assert exc.value.code == 2
    assert "at least" in capsys.readouterr().err


def test_small_crawl_still_has_every_class(tmp_path):
    summary = sample.write_sample(tmp_path, pages=sample.MIN_PAGES, files=1)
    assert min(summary["passages_by_class"].values()) >= 4
    assert len(summary["warc_files"]) == 1


def test_sample_command_writes_only_into_new_empty_or_own_folders(tmp_path, capsys):
    from webwinnow.app.cli import main

    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    assert main(["sample", str(user), "--pages", "60"]) == 2
    assert "not a webwinnow sample" in capsys.readouterr().err
    assert [p.name for p in user.iterdir()] == ["notes.txt"] and (user / "notes.txt").read_text() == "keep me"

    lookalike = tmp_path / "lookalike"
    lookalike.mkdir()
    (lookalike / "sample-00000.warc.gz").write_bytes(b"someone else's crawl")
    assert main(["sample", str(lookalike), "--pages", "60"]) == 2  # no planted.json of ours
    assert (lookalike / "sample-00000.warc.gz").read_bytes() == b"someone else's crawl"

    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert main(["sample", str(afile)]) == 2 and afile.read_text() == "x"

    ours = tmp_path / "ours"
    assert main(["sample", str(ours), "--pages", "60"]) == 0
    (ours / "sample-00007.warc.gz").write_bytes(b"left from a larger sample")  # a name the sample owns
    assert main(["sample", str(ours), "--pages", "60", "--seed", "9"]) == 0
    assert sorted(p.name for p in ours.iterdir()) == [
        "planted.json",
        "sample-00000.warc.gz",
        "sample-00001.warc.gz",
        "sample-00002.warc.gz",
    ]
    assert json.loads((ours / "planted.json").read_text())["seed"] == 9
