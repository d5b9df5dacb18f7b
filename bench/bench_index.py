"""What an index costs and what a check against it costs, by query size: index the docs corpus
less 4,000 held-out pages, then check 1, 100 and 4,000 of the held-out pages against it.

    python bench/bench_index.py [--set full|small] [--query-w 200,400] [--unit word]   (make bench runs it)

The held-out pages are chosen by a hash of their URL (the same every run) and written to their
own WARC files once (data/bench/index-split/). Printed: the index's build time, MB/s and size per
GB of HTML; per query, the check's seconds by stage, what the lookups read of the index (row
groups and bytes, against the whole), and the time `run` takes over the index's crawl and the
same query from scratch, in the same session. Then the paper's query-time trick: the 4,000-page
query fingerprinted with larger windows, each against the w = 100 check: its time, and the share
of the content pairs it still finds (all of those whose longest shared content passage reaches
its own guarantee, w_query + k − 1). `--unit word` (or code) measures an index and checks in that
unit instead (the query-window and planted-copy parts are the character unit's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data" / "bench"
WEBWINNOW = str(REPO / ".venv" / "bin" / "webwinnow")
QUICK = str(REPO / "tests" / "quick.toml")
HELD_OUT = 4000
QUERIES = (1, 100, 4000)


def corpus(which: str) -> Path:
    folder = DATA / ("docs-full" if which == "full" else "docs-small")
    if not (folder / "MANIFEST.tsv").exists():
        args = [sys.executable, str(REPO.parent / "shared" / "bench" / "build_docs_corpus.py"), str(folder)]
        subprocess.run(args + (["--set", "full"] if which == "full" else []), check=True)
    return folder


def held_out(url: str, share: float) -> bool:
    return int.from_bytes(hashlib.sha256(url.encode()).digest()[:8], "big") < share * 2**64


def split(source: Path, which: str) -> Path:
    """source's WARCs as index/*.warc.gz and query-N/query.warc.gz (the first N held-out pages),
    every record copied as it is."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    out = DATA / f"index-split-{which}"
    if (out / "done").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    files = sorted(source.glob("*.warc.gz"))
    urls = [
        r.rec_headers.get_header("WARC-Target-URI")
        for f in files
        for r in ArchiveIterator(open(f, "rb"))
        if r.rec_type == "response"
    ]
    share = min(1.0, 1.3 * HELD_OUT / len(urls))
    chosen = [u for u in urls if held_out(u, share)][:HELD_OUT]
    ranks = {u: i for i, u in enumerate(chosen)}
    for name, keep in [
        ("index", lambda u, rec: u not in ranks or rec.rec_type != "response"),
        *((f"query-{n}", lambda u, rec, n=n: rec.rec_type == "response" and ranks.get(u, n) < n) for n in QUERIES),
    ]:
        (out / name).mkdir(parents=True)
        for f in files:
            with open(f, "rb") as fh, open(out / name / f.name, "wb") as dst:
                writer = WARCWriter(dst, gzip=True)
                for record in ArchiveIterator(fh):
                    if keep(record.rec_headers.get_header("WARC-Target-URI"), record):
                        writer.write_record(record)
    (out / "done").write_text(f"{len(chosen)}\n")
    return out


def webwinnow(*args: str) -> float:
    started = time.time()
    subprocess.run([WEBWINNOW, *args, "-q"], check=True, stdout=subprocess.DEVNULL)
    return time.time() - started


def summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def html_bytes(folder: Path) -> int:
    import pyarrow.parquet as pq

    return sum(
        pq.read_table(p, columns=["html_bytes"]).column(0).to_numpy().sum() for p in (folder / "documents").rglob("*.parquet")
    )


def pairs(folder: Path) -> set:
    import pyarrow.parquet as pq

    return {(r["doc_a"], r["doc_b"]) for r in pq.read_table(folder / "pairs", columns=["doc_a", "doc_b"]).to_pylist()}


def due(folder: Path, t: int) -> set:
    """The passages of at least t normalized characters, none of them template on either side:
    what a check with guarantee t must find, span for span."""
    import pyarrow.parquet as pq

    keys = ["doc_a", "doc_b", "start_a", "end_a", "start_b", "end_b"]
    rows = pq.read_table(folder / "passages").to_pylist()
    return {
        tuple(r[k] for k in keys)
        for r in rows
        if r["length"] >= t and r["content_chars_a"] == r["length"] == r["content_chars_b"]
    }


def spans(folder: Path) -> set:
    import pyarrow.parquet as pq

    keys = ["doc_a", "doc_b", "start_a", "end_a", "start_b", "end_b"]
    return {tuple(r[k] for k in keys) for r in pq.read_table(folder / "passages", columns=keys).to_pylist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="full", choices=["full", "small"])
    ap.add_argument("--query-w", default="200,400", help="larger query windows to measure (comma-separated)")
    ap.add_argument("--skip-run", action="store_true", help="leave out the from-scratch run")
    ap.add_argument("--unit", default="char", choices=["char", "word", "code"], help="the index's unit (char)")
    args = ap.parse_args()
    parts = split(corpus(args.set), args.set)
    work = DATA / f"index-bench-{args.set}" if args.unit == "char" else DATA / f"index-bench-{args.set}-{args.unit}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    idx = work / "idx"
    seconds = webwinnow("index", str(parts / "index"), "--out", str(idx), "--unit", args.unit)
    html = html_bytes(idx)
    size = sum(p.stat().st_size for p in idx.rglob("*") if p.is_file())
    manifest = json.loads((idx / "_webwinnow_index.json").read_text())
    print(
        f"index: {manifest['documents']:,} documents, {html / 1e6:,.1f} MB of HTML, {manifest['fingerprints']:,} "
        f"fingerprints, {manifest['hashes']:,} hashes in {seconds:.1f} s ({html / 1e6 / seconds:.2f} MB/s); "
        f"{size / 1e6:,.1f} MB on disk = {size / html * 1000:,.0f} MB per GB of HTML"
    )
    base: dict = {}
    for n in QUERIES:
        out = work / f"check-{n}"
        took = webwinnow("check", str(parts / f"query-{n}"), "--index", str(idx), "--out", str(out), "--conf", QUICK)
        s = summary(out)
        reads = s["lookup"]["index_reads"]
        read = "; ".join(
            f"{t} {r['row_groups']}/{r['row_groups_total']} groups {r['bytes'] / 1e6:.1f}/{r['bytes_total'] / 1e6:.1f} MB"
            for t, r in reads.items()
        )
        stages = ", ".join(f"{k} {v}" for k, v in s["stage_seconds"].items())
        print(
            f"check {n:>5} pages: {took:6.1f} s ({took / n:.3f} s/page); {s['lookup']['indexed_documents']:,} "
            f"indexed documents compared, {s['passages']['pairs']:,} content pairs; read {read}"
        )
        print(f"      stages: {stages}")
        base[n] = out
    if not args.skip_run:
        scratch = work / "run-100"
        took = webwinnow(
            "run", str(parts / "index"), str(parts / "query-100"), "--out", str(scratch), "--conf", QUICK, "--unit", args.unit
        )
        print(
            f"run from scratch over the index's crawl + the 100-page query: {took:.1f} s (check: "
            f"{summary(base[100])['seconds']:.1f} s inside, plus the index built once)"
        )
    if args.unit != "char":
        return
    reference = pairs(base[QUERIES[-1]])
    ref_summary = summary(base[QUERIES[-1]])
    w, k = manifest["settings"]["w"], manifest["settings"]["k"]
    print(
        f"query window (the {QUERIES[-1]}-page query; w = {w}: {ref_summary['seconds']:.1f} s, lookup "
        f"{ref_summary['stage_seconds']['lookup']:.1f} s, {len(reference):,} content pairs):"
    )
    for wq in (int(x) for x in args.query_w.split(",") if x):
        out = work / f"check-w{wq}"
        webwinnow(
            "check",
            str(parts / f"query-{QUERIES[-1]}"),
            "--index",
            str(idx),
            "--out",
            str(out),
            "--conf",
            QUICK,
            "--query-w",
            str(wq),
        )
        got, s = pairs(out), summary(out)
        wanted = due(base[QUERIES[-1]], wq + k - 1)
        kept = len(wanted & spans(out)) / len(wanted) if wanted else 1.0
        ratio = s["fingerprint"]["fingerprints"] / ref_summary["fingerprint"]["fingerprints"]
        print(
            f"  w_query {wq:>4}: {s['seconds']:.1f} s ({s['seconds'] / ref_summary['seconds']:.2f}x; lookup "
            f"{s['stage_seconds']['lookup']:.1f} s), fingerprints {ratio:.2f}x; content pairs {len(got):,} = "
            f"{len(got & reference) / len(reference):.1%} of w = {w}'s; wholly-content passages >= {wq + k - 1} "
            f"(its guarantee) found with the same spans: {len(wanted & spans(out)):,} of {len(wanted):,} = {kept:.1%}"
        )


def planted(query_ws: list[int]) -> None:
    """The trade-off on planted copies: the sample crawl's first two files indexed, the third
    checked with each query window; recall of the planted passages by their length."""
    import pyarrow.parquet as pq

    from webwinnow import normalize

    sample = DATA / "index-sample"
    if not (sample / "planted.json").exists():
        subprocess.run([WEBWINNOW, "sample", str(sample)], check=True, stdout=subprocess.DEVNULL)
    work = DATA / "index-bench-sample"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    idx = work / "idx"
    webwinnow("index", str(sample / "sample-00000.warc.gz"), str(sample / "sample-00001.warc.gz"), "--out", str(idx))
    copies = [
        c
        for c in json.loads((sample / "planted.json").read_text())["copies"]
        if c["kind"] == "passage" and c["src_file"] != "sample-00002.warc.gz" and c["dst_file"] == "sample-00002.warc.gz"
    ]
    print(f"planted copies (sample: {len(copies)} passages copied from an indexed page into a checked one):")
    for wq in [100, *query_ws]:
        out = work / f"check-w{wq}"
        took = webwinnow(
            "check",
            str(sample / "sample-00002.warc.gz"),
            "--index",
            str(idx),
            "--out",
            str(out),
            "--conf",
            QUICK,
            "--query-w",
            str(wq),
        )
        docs = {r["url"]: r for r in pq.read_table(out / "documents").to_pylist() if r["status"] == "ok"}
        docs.update({r["url"]: r for r in pq.read_table(out / "indexed_documents").to_pylist()})
        spans: dict = {}
        for p in pq.read_table(out / "passages").to_pylist():
            spans.setdefault((p["doc_a"], p["doc_b"]), []).append(p)
        found = {"below t": [0, 0], "t to t_query": [0, 0], ">= t_query": [0, 0]}
        for c in copies:
            src, dst = docs.get(c["src_url"]), docs[c["dst_url"]]  # an indexed page is here when it matched
            wanted = normalize(c["text"])[0]
            hit = src is not None and any(
                wanted in normalize(src["text"][p["start_a"] : p["end_a"]])[0]
                for p in spans.get((src["doc_id"], dst["doc_id"]), [])
            )
            n = c["normalized_length"]
            band = "below t" if n < 149 else ("t to t_query" if n < wq + 49 else ">= t_query")
            found[band][0] += hit
            found[band][1] += 1
        bands = ", ".join(f"{b}: {h}/{n}" for b, (h, n) in found.items() if n)
        print(f"  w_query {wq:>4} (t_query {wq + 49}): {took:.1f} s; planted passages found {bands}")


if __name__ == "__main__":
    main()
    if "--unit" not in sys.argv or "char" in sys.argv:
        planted([200, 400])
