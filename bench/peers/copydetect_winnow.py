"""copydetect's winnowing (pure Python, Python's per-process hash()) on the texts webwinnow
extracted, with the same k, w and document-frequency cap, paired by shared fingerprints.

    python copydetect_winnow.py TEXTS.jsonl K W MAX_DF

Prints one JSON line: seconds, documents, text bytes, fingerprints, pairs.
"""

import json
import sys
import time
from collections import defaultdict

from copydetect.utils import get_document_fingerprints


def main() -> int:
    path, k, w, max_df = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    texts = [json.loads(line)["text"] for line in open(path, encoding="utf-8")]
    started = time.perf_counter()
    docs_of = defaultdict(list)
    fingerprints = 0
    for doc, text in enumerate(texts):
        hashes, where = get_document_fingerprints(text, k, w)
        fingerprints += sum(len(v) for v in where.values())
        for h in hashes:
            docs_of[h].append(doc)
    pairs = set()
    for docs in docs_of.values():
        if 2 <= len(docs) <= max_df:
            pairs.update((a, b) for i, a in enumerate(docs) for b in docs[i + 1 :])
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "seconds": seconds,
                "documents": len(texts),
                "text_bytes": sum(len(t.encode()) for t in texts),
                "fingerprints": fingerprints,
                "pairs": len(pairs),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
