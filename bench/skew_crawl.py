"""An adversarial crawl for the skew bench (issue 26): the shapes that put one task, one key or
one machine under all the load.

    python bench/skew_crawl.py OUT [--scale 1.0]

Writes gzipped WARC files into OUT (refuses a folder that is not empty):
- mirrors.warc.gz: a mirror farm, 10,000 copies of one page on 100 hosts (one text, one cluster
  of identical documents, every fingerprint in 10,000 documents);
- shared.warc.gz: 100,000 records in one file, pages of their own text that all carry one
  sentence (a hash in 10^5 documents; one file of 10^5 records for one extract task);
- template.warc.gz: a site of 5,000 pages sharing 90% of their text (navigation and footer);
- huge.warc.gz: one page of 50 MB of text.
--scale multiplies the counts (0.01 for a quick try). Deterministic: the same scale writes the
same bytes.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DATE = "2026-01-05T10:00:00Z"


def _words(rng: random.Random, vocab: list[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n))


def _page(title: str, body: str) -> bytes:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


class Crawl:
    def __init__(self, path: Path) -> None:
        self.fh = path.open("wb")
        self.writer = WARCWriter(self.fh, gzip=True)
        self.records = 0

    def page(self, url: str, html: bytes) -> None:
        headers = StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(html)))], protocol="HTTP/1.1"
        )
        record = self.writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(html),
            length=len(html),
            http_headers=headers,
            warc_headers_dict={"WARC-Date": DATE},
        )
        self.writer.write_record(record)
        self.records += 1

    def close(self) -> None:
        self.fh.close()


def write(out: Path, scale: float = 1.0) -> dict[str, int]:
    rng = random.Random(26)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(20_000)]
    counts: dict[str, int] = {}

    crawl = Crawl(out / "mirrors.warc.gz")
    mirrored = _page("The mirrored page", "<p>" + _words(rng, vocab, 500) + "</p>")
    for i in range(max(2, int(10_000 * scale))):
        crawl.page(f"http://mirror{i % 100}.example/{i}/index.html", mirrored)
    crawl.close()
    counts["mirrors"] = crawl.records

    crawl = Crawl(out / "shared.warc.gz")
    sentence = _words(rng, vocab, 60)
    for i in range(max(2, int(100_000 * scale))):
        body = f"<p>{_words(rng, vocab, 120)}</p><p>{sentence}</p><p>{_words(rng, vocab, 80)}</p>"
        crawl.page(f"http://site{i % 1000}.example/page/{i}", _page(f"Page {i}", body))
    crawl.close()
    counts["shared"] = crawl.records

    crawl = Crawl(out / "template.warc.gz")
    nav = "<nav>" + "".join(f"<a href='/s/{j}'>{_words(rng, vocab, 4)}</a>" for j in range(300)) + "</nav>"
    footer = "<footer>" + _words(rng, vocab, 400) + "</footer>"
    for i in range(max(2, int(5_000 * scale))):
        crawl.page(
            f"http://templated.example/article/{i}",
            _page(f"Article {i}", f"{nav}<main><p>{_words(rng, vocab, 160)}</p></main>{footer}"),
        )
    crawl.close()
    counts["template"] = crawl.records

    crawl = Crawl(out / "huge.warc.gz")
    paragraphs = max(1, int(50_000 * scale))  # about 1 KB each
    crawl.page(
        "http://huge.example/all-of-it.html",
        _page("One huge page", "".join(f"<p>{_words(rng, vocab, 150)}</p>" for _ in range(paragraphs))),
    )
    crawl.close()
    counts["huge"] = crawl.records
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"skew_crawl: {args.out} is not empty: give a new folder", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    counts = write(args.out, args.scale)
    print(f"skew_crawl: {sum(counts.values()):,} pages in {args.out}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
