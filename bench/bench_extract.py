"""Extraction benchmark: crawl files → rows (read, decode, HTML → text) on one core, and peak
memory on the hostile catalogue records (100 MiB record, 1 GiB gzip bomb).

    python bench/bench_extract.py            (make bench runs it)

Reads ../shared/data (beside the repository); prints one line per measurement.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

PEAK = """
import resource, sys
from webwinnow.config import ExtractConfig
from webwinnow.crawl.records import file_rows
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = list(file_rows(sys.argv[1], ExtractConfig()))
print(rows[-1]["flagged"], (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""


def main() -> int:
    from webwinnow.config import ExtractConfig
    from webwinnow.crawl.records import file_rows

    real = sorted(p for p in (SHARED / "warc" / "real").glob("*") if p.is_file())
    if not real:
        print(f"# {SHARED} is absent: nothing to measure")
        return 0
    cfg = ExtractConfig()
    list(file_rows(str(real[0]), cfg))  # JIT warm-up
    best = None
    for _ in range(3):
        started = time.perf_counter()
        html = docs = records = 0
        for path in real:
            for row in file_rows(str(path), cfg):
                if row.get("table") == "documents" and row.get("status") == "ok":
                    docs += 1
                    html += row["html_bytes"]
                if row.get("kind") == "file":
                    records += row["records_seen"]
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    size = sum(p.stat().st_size for p in real)
    print(f"extract  real crawls  {len(real)} files {size / 1e6:.1f} MB on disk, {records} records, {docs} documents")
    print(f"extract  real crawls  {html / 1e6 / best:8.1f} MB/s of decoded HTML per core ({best:.2f} s)")
    for fault in ("f18", "f19"):
        path = next((SHARED / "badwarc" / "files").glob(f"{fault}_*"))
        done = subprocess.run([sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, check=True)
        flagged, grown = map(int, done.stdout.split())
        print(
            f"extract  {path.name:40s} flagged {flagged}  peak RSS growth {grown} MiB "
            f"(bound: 2 x max_body_bytes + max_decoded_bytes = {(2 * cfg.max_body_bytes + cfg.max_decoded_bytes) >> 20} MiB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
