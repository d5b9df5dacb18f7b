"""A planted crawl of real pages: copies of known paragraphs planted into other real pages, to
measure, with bench/template_judge.py, how many content pairs share only template and how many
planted copies are found, on text webwinnow did not make.

    python bench/planted_real.py CRAWL_DIR OUT_DIR [--pages 2000] [--copies 120] [--seed 1]
    webwinnow run OUT_DIR/warc --out RUN && python bench/template_judge.py RUN --planted OUT_DIR/planted.json

CRAWL_DIR holds WARC files of real HTML pages (bench/build_docs_corpus.py makes one from Debian
documentation packages: several sites, each with its own template). Pages are drawn at random;
a copy is a <p> paragraph of one page (its text: content, not navigation) of at least t = 149
normalized characters, inserted after the first paragraph of another page.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import random
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

import webwinnow as ww


def pages_of(crawl: Path) -> list[tuple[str, str, bytes]]:
    """(url, date, html) of every 200 text/html response."""
    out = []
    for path in sorted(crawl.glob("*.warc*")):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                if rec.http_headers.get_statuscode() != "200" or "html" not in (
                    rec.http_headers.get_header("Content-Type") or ""
                ):
                    continue
                out.append(
                    (
                        rec.rec_headers.get_header("WARC-Target-URI"),
                        rec.rec_headers.get_header("WARC-Date"),
                        rec.content_stream().read(),
                    )
                )
    return out


def paragraphs(body: bytes) -> list[str]:
    tree = LexborHTMLParser(body.decode("utf-8", "replace"))
    found = []
    for node in tree.css("p"):
        text = " ".join((node.text(separator=" ") or "").split())
        if len(ww.normalize(text)[0]) >= 160 and len(text) <= 1500:
            found.append(text)
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("crawl")
    p.add_argument("out")
    p.add_argument("--pages", type=int, default=2000)
    p.add_argument("--copies", type=int, default=120)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    rng = random.Random(args.seed)
    pages = pages_of(Path(args.crawl))
    pages = sorted(rng.sample(pages, min(args.pages, len(pages))), key=lambda x: x[1])  # crawl order: by date
    bodies = [body for _, _, body in pages]
    sources = [(i, para) for i, body in enumerate(bodies) for para in paragraphs(body)]
    copies = []
    for src, para in rng.sample(sources, min(args.copies, len(sources))):
        dst = rng.choice([j for j in range(len(pages)) if j != src])
        block = f"<p>{html.escape(para)}</p>".encode()
        at = bodies[dst].find(b"</p>")
        at = at + 4 if at >= 0 else max(bodies[dst].rfind(b"</body>"), 0)
        bodies[dst] = bodies[dst][:at] + block + bodies[dst][at:]
        copies.append(
            {
                "kind": "passage",
                "src_url": pages[src][0],
                "dst_url": pages[dst][0],
                "normalized_length": len(ww.normalize(para)[0]),
                "text": para,
            }
        )
    out = Path(args.out)
    (out / "warc").mkdir(parents=True, exist_ok=False)
    with (out / "warc" / "planted-00000.warc.gz").open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for (url, date, _), body in zip(pages, bodies, strict=True):
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body)
            writer.write_record(
                writer.create_warc_record(url, "response", payload=io.BytesIO(head + body), warc_headers_dict={"WARC-Date": date})
            )
    (out / "planted.json").write_text(json.dumps({"copies": copies}, indent=1))
    print(
        f"{out}: {len(pages):,} pages, {len(copies)} planted copies of {min(c['normalized_length'] for c in copies)}+ normalized characters"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
