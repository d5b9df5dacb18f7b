"""The peers on the same crawl files, in the same `make bench` run: datatrove's MinHash
deduplication and copydetect's winnowing, each in its own process, with MB/s per core,
documents/s and peak RSS.

    python bench/bench_peers.py [--set small|full]
    python bench/bench_peers.py --smoke     # each peer on the sample's first file: does it start?

The peers live in their own virtualenv (data/bench/peers-venv, made on first use from PyPI with
pinned versions), never in webwinnow's. datatrove reads the WARC files; without a
WARC-Identified-Payload-Type header it sniffs each payload with libmagic and silently skips
what it does not call HTML, so the bench gives it a copy of the crawl whose HTML responses carry
that header (data/bench/docs-SET-typed). copydetect has no reader: it gets the texts webwinnow
extracted (from the pipeline bench's output), so its figure covers fingerprinting and pairing only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO / "data" / "bench" / "peers-venv"
PINNED = [
    "datatrove[processing]==0.10.1",
    "spacy==3.8.18",
    "lxml_html_clean",
    "faust-cchardet==3.2.0",  # datatrove's WarcReader refuses to start without it and python-magic
    "python-magic==0.4.27",
    "orjson==3.13.0",  # ... and its JsonlWriter without orjson
    "copydetect==0.5.0",
    "warcio==1.8.1",
]


def peers_python() -> Path:
    python = PEERS / "bin" / "python"
    stamp = PEERS / ".installed"
    if not stamp.exists() or stamp.read_text() != " ".join(PINNED):
        print(f"# installing the peers into {PEERS}: {' '.join(PINNED)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PINNED], check=True)
        stamp.write_text(" ".join(PINNED))
    return python


def typed_copy(crawl: Path) -> Path:
    """The crawl with `WARC-Identified-Payload-Type: text/html` on every HTML response."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    folder = crawl.with_name(crawl.name + "-typed")
    if (folder / "_done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(crawl.glob("*.warc.gz")):
        with open(path, "rb") as src, open(folder / path.name, "wb") as dst:
            writer = WARCWriter(dst, gzip=True)
            for rec in ArchiveIterator(src):
                if (
                    rec.rec_type == "response"
                    and rec.http_headers is not None
                    and "html" in (rec.http_headers.get_header("Content-Type") or "").lower()
                ):
                    rec.rec_headers.add_header("WARC-Identified-Payload-Type", "text/html")
                writer.write_record(rec)
    (folder / "_done").write_text("")
    return folder


def texts_jsonl(out: Path) -> Path:
    import pyarrow.parquet as pq

    path = out.with_name(out.name + "-texts.jsonl")
    docs = pq.read_table(out / "documents", columns=["text", "status"]).to_pydict()
    with open(path, "w", encoding="utf-8") as fh:
        for text, status in zip(docs["text"], docs["status"], strict=True):
            if status == "ok":
                fh.write(json.dumps({"text": text}) + "\n")
    return path


def measured(cmd: list[str]) -> tuple[dict, float, int]:
    """The command's JSON line, its wall seconds and peak RSS (MiB, itself and its children)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"# {' '.join(cmd[:2])} failed (exit {os.waitstatus_to_exitcode(status)})")
    return json.loads(out.strip().splitlines()[-1]), wall, usage.ru_maxrss // 1024


def smoke() -> int:
    """Each peer from its pinned virtualenv on the sample's first WARC file (data/sample, made by
    `make sample`), and copydetect on texts planted there: what CI runs, so a pin that no longer
    starts is found before a `make bench` on the docs corpus."""
    sample = REPO / "data" / "sample"
    first = sorted(sample.glob("*.warc.gz"))[:1]
    if not first:
        raise SystemExit(f"# {sample} holds no WARC file: run `make sample` first")
    crawl = REPO / "data" / "bench" / "smoke"
    subprocess.run(["rm", "-rf", str(crawl), str(crawl) + "-typed"], check=True)
    crawl.mkdir(parents=True)
    (crawl / first[0].name).write_bytes(first[0].read_bytes())
    python = peers_python()
    work = REPO / "data" / "bench" / "peers-smoke"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    dt, wall, _ = measured(
        [
            str(python),
            str(REPO / "bench" / "peers" / "datatrove_minhash.py"),
            str(typed_copy(crawl)),
            str(work / "datatrove"),
            "1",
        ]
    )
    if not dt["documents"]:
        raise SystemExit("# datatrove read no document of the sample's first file")
    print(f"peer  datatrove smoke: {dt['documents']:,} documents, {dt['kept']:,} kept in {wall:.1f} s", flush=True)
    planted = json.loads((sample / "planted.json").read_text())["copies"]
    texts = work / "texts.jsonl"
    texts.write_text("".join(json.dumps({"text": c["text"]}) + "\n" for c in planted if c.get("text")))
    cd, wall, _ = measured([str(python), str(REPO / "bench" / "peers" / "copydetect_winnow.py"), str(texts), "50", "100", "10"])
    if not cd["documents"]:
        raise SystemExit("# copydetect fingerprinted no text")
    print(f"peer  copydetect smoke: {cd['documents']:,} texts, {cd['pairs']:,} pairs in {wall:.1f} s", flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", default="small", choices=["small", "full"])
    p.add_argument("--smoke", action="store_true", help="each peer on a few pages of the sample: that it runs, not how fast")
    args = p.parse_args()
    if args.smoke:
        return smoke()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pipeline import corpus

    crawl = corpus(args.set)
    out = REPO / "data" / "bench" / f"out-{args.set}"
    if not (out / "summary.json").exists():
        raise SystemExit(f"# {out} is missing: run bench/bench_pipeline.py --set {args.set} first")
    summary = json.loads((out / "summary.json").read_text())
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    mb = pc.sum(pq.read_table(out / "documents", columns=["html_bytes"])["html_bytes"]).as_py() / 1e6
    cores = os.cpu_count() or 1
    python = peers_python()
    work = REPO / "data" / "bench" / f"peers-{args.set}"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    typed = typed_copy(crawl)
    dt, wall, rss = measured(
        [str(python), str(REPO / "bench" / "peers" / "datatrove_minhash.py"), str(typed), str(work / "datatrove"), str(cores)]
    )
    print(
        f"peer  datatrove 0.10.1 minhash (trafilatura), {cores} workers  {wall:7.1f} s  {mb / wall / cores:6.2f} MB/s per core  "
        f"{dt['documents'] / wall:7.1f} documents/s  peak RSS {rss} MiB  ({dt['documents']:,} documents, {dt['kept']:,} kept)",
        flush=True,
    )
    winnow = summary["config"]["winnow"]
    cd, cd_wall, cd_rss = measured(
        [
            str(python),
            str(REPO / "bench" / "peers" / "copydetect_winnow.py"),
            str(texts_jsonl(out)),
            str(winnow["k"]),
            str(winnow["w"]),
            str(summary["candidates"]["max_df"]),
        ]
    )
    print(
        f"peer  copydetect 0.5.0 winnowing, one core  {cd_wall:7.1f} s  {cd['text_bytes'] / 1e6 / cd['seconds']:6.2f} MB/s of "
        f"text  {cd['documents'] / cd_wall:7.1f} documents/s  peak RSS {cd_rss} MiB  ({cd['pairs']:,} pairs; "
        "fingerprinting and pairing only)",
        flush=True,
    )
    ours = mb / summary["seconds"] / cores
    print(
        f"peer  webwinnow (this bench's pipeline run)  {summary['seconds']:7.1f} s  {ours:6.2f} MB/s per core  "
        f"= {ours / (mb / wall / cores):.2f}x datatrove per core (target >= 10x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
