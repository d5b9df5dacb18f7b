"""datatrove's MinHash deduplication, end to end, on WARC files (run in the peers' virtualenv).

    python datatrove_minhash.py WARC_DIR WORK_DIR WORKERS

The pipeline of datatrove's own minhash example: WarcReader → Trafilatura → signatures;
buckets; clusters; filter. Prints one JSON line: seconds, documents extracted, documents kept.
"""

import gzip
import json
import sys
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature
from datatrove.pipeline.dedup.minhash import MinhashConfig
from datatrove.pipeline.extractors import Trafilatura
from datatrove.pipeline.readers import JsonlReader, WarcReader
from datatrove.pipeline.writers import JsonlWriter


def count(folder: Path) -> int:
    return sum(sum(1 for _ in gzip.open(f, "rt")) for f in folder.glob("*.jsonl.gz"))


def main() -> int:
    src, work, workers = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    tasks = len(list(Path(src).glob("*.warc.gz")))
    cfg = MinhashConfig()
    started = time.perf_counter()
    LocalPipelineExecutor(
        pipeline=[
            WarcReader(src, glob_pattern="*.warc.gz"),
            Trafilatura(),
            JsonlWriter(str(work / "docs")),
            MinhashDedupSignature(output_folder=str(work / "signatures"), config=cfg),
        ],
        tasks=tasks,
        workers=workers,
        logging_dir=str(work / "logs" / "1"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[MinhashDedupBuckets(input_folder=str(work / "signatures"), output_folder=str(work / "buckets"), config=cfg)],
        tasks=cfg.num_buckets,
        workers=workers,
        logging_dir=str(work / "logs" / "2"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[MinhashDedupCluster(input_folder=str(work / "buckets"), output_folder=str(work / "remove_ids"), config=cfg)],
        tasks=1,
        logging_dir=str(work / "logs" / "3"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader(str(work / "docs")),
            MinhashDedupFilter(input_folder=str(work / "remove_ids")),
            JsonlWriter(str(work / "deduped")),
        ],
        tasks=tasks,
        workers=workers,
        logging_dir=str(work / "logs" / "4"),
    ).run()
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "documents": count(work / "docs"), "kept": count(work / "deduped")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
