"""The bare reference loop webwinnow's pipeline is measured against: one process, one core.

warcio → selectolax → the Numba winnowing kernel → NumPy sort-based pairing with a
document-frequency cap → Parquet. No ledger, no damage handling, no passages: the least work
that produces the same kind of pairs, so "webwinnow MB/s per core ÷ this loop's MB/s" says what
the pipeline's machinery costs.

    python bench/reference_loop.py CRAWL_DIR [--out pairs.parquet]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numba import njit
from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from webwinnow.core.winnowing import fingerprint_batch  # noqa: E402


@njit(cache=True)
def _count_pairs(starts, ends):
    total = 0
    for g in range(starts.shape[0]):
        n = ends[g] - starts[g]
        total += n * (n - 1) // 2
    return total


@njit(cache=True)
def _emit_pairs(docs, starts, ends, total, n_docs):
    out = np.empty(total, dtype=np.int64)
    k = 0
    for g in range(starts.shape[0]):
        for i in range(starts[g], ends[g]):
            for j in range(i + 1, ends[g]):
                a, b = docs[i], docs[j]
                if a > b:
                    a, b = b, a
                out[k] = a * n_docs + b
                k += 1
    return out


def texts(paths: list[Path]) -> tuple[list[str], int]:
    """Text of every 2xx HTML response, and the HTML bytes read."""
    out, html_bytes = [], 0
    for path in paths:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                if not rec.http_headers.get_statuscode().startswith("2"):
                    continue
                if "html" not in (rec.http_headers.get_header("Content-Type") or ""):
                    continue
                body = rec.content_stream().read()
                html_bytes += len(body)
                tree = LexborHTMLParser(body)
                for node in tree.css("script, style"):
                    node.decompose()
                root = tree.body or tree.root
                out.append(root.text(separator="\n") if root is not None else "")
    return out, html_bytes


def pairs(doc: np.ndarray, hashes: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(pair ids doc_a * n + doc_b, shared distinct hashes, max_df) below a sqrt(N) document-frequency cap."""
    key = np.unique(np.stack([hashes, doc.astype(np.int64)], axis=1), axis=0)  # one row per (hash, doc)
    h, d = key[:, 0], key[:, 1]
    boundaries = np.flatnonzero(np.diff(h)) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [len(h)]])
    df = ends - starts
    max_df = max(10, math.isqrt(max(n_docs - 1, 0)) + 1)
    keep = (df >= 2) & (df <= max_df)
    starts, ends = starts[keep], ends[keep]
    ids = _emit_pairs(d, starts, ends, _count_pairs(starts, ends), n_docs)
    pair_ids, shared = np.unique(ids, return_counts=True)
    return pair_ids, shared, max_df


def warm_up() -> None:
    """Compile the kernels outside any timing."""
    fingerprint_batch(["warm up " * 20], 5, 4)
    pairs(np.array([0, 1], np.int64), np.array([5, 5], np.int64), 2)


def run(crawl: Path | list[Path], out: Path | None = None, k: int = 50, w: int = 100) -> dict:
    """The loop over the WARC files under crawl (a folder, or several)."""
    folders = crawl if isinstance(crawl, list) else [crawl]
    paths = sorted(p for folder in folders for p in folder.rglob("*") if p.name.endswith((".warc.gz", ".warc")))
    started = time.perf_counter()
    cpu_started = time.process_time()
    docs, html_bytes = texts(paths)
    extracted = time.perf_counter()
    fp = fingerprint_batch(docs, k, w)
    fingerprinted = time.perf_counter()
    pair_ids, shared, max_df = pairs(fp.doc, fp.hashes, len(docs))
    table = pa.table({"doc_a": pair_ids // len(docs), "doc_b": pair_ids % len(docs), "shared": shared})
    if out is not None:
        pq.write_table(table, out)
    done = time.perf_counter()
    seconds = done - started
    cpu = time.process_time() - cpu_started  # one process, one thread of work: CPU ≈ wall when quiet
    return {
        "documents": len(docs),
        "html_bytes": html_bytes,
        "fingerprints": int(len(fp.hashes)),
        "pairs": int(len(pair_ids)),
        "max_df": max_df,
        "seconds": seconds,
        "extract_s": extracted - started,
        "fingerprint_s": fingerprinted - extracted,
        "pairs_s": done - fingerprinted,
        "mb_per_s": html_bytes / 1e6 / seconds,
        "cpu_s": cpu,
        "cpu_s_per_mb": cpu / (html_bytes / 1e6) if html_bytes else 0.0,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("crawl", type=Path)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    warm_up()
    r = run(args.crawl, args.out)
    print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
