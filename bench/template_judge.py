"""An independent judge of a run's content pairs: how many share only site template.

    python bench/template_judge.py OUT [--planted PLANTED.json]

Template text here is not webwinnow's (which is built from the boilerplate *fingerprints* and
the gaps between them): it is every normalized k-gram, selected or not, that more than ⌈√N⌉ of
the run's N ok documents hold, and a character is template when such a k-gram of either page
covers it. A content pair is **template-only** when the longest run of non-template characters
inside its passages is shorter than k: the two pages share nothing but their sites' template
(and the ragged edges of it). Prints the share, the distribution of that longest run, and with
--planted (the sample's planted.json) the planted copies of at least t characters that are
content pairs (recall).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import webwinnow as ww


def kgram_hashes(text: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every k-gram's hash of a text and its normalized start (w = 1 selects them all)."""
    hashes, positions = ww.fingerprint(text, k=k, w=1)
    _, offsets = ww.normalize(text)
    return hashes, np.searchsorted(np.asarray(offsets), positions)


def template_masks(texts: dict[int, str], k: int) -> dict[int, np.ndarray]:
    """Per document, a boolean mask over its normalized characters: covered by a k-gram in more
    than ⌈√N⌉ documents."""
    per_doc = {d: kgram_hashes(t, k) for d, t in texts.items()}
    hashes, counts = np.unique(
        np.concatenate([np.unique(h) for h, _ in per_doc.values()] or [np.zeros(0, np.int64)]), return_counts=True
    )
    common = hashes[counts > math.ceil(math.sqrt(len(texts)))]
    masks = {}
    for d, (hashes, starts) in per_doc.items():
        n = len(ww.normalize(texts[d])[0])
        mask = np.zeros(n + 1, np.int64)
        hit = starts[np.isin(hashes, common)]
        np.add.at(mask, hit, 1)
        np.add.at(mask, np.minimum(hit + k, n), -1)
        masks[d] = np.cumsum(mask)[:n] > 0
    return masks


def longest_run(free: np.ndarray) -> int:
    """The longest run of True."""
    if not free.any():
        return 0
    edges = np.flatnonzero(np.diff(np.concatenate([[0], free.astype(np.int8), [0]])))
    return int((edges[1::2] - edges[0::2]).max())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--planted", help="the sample's planted.json: recall of its copies of at least t")
    args = p.parse_args()
    out = Path(args.out)
    summary = json.loads((out / "summary.json").read_text())
    k, w = summary["config"]["winnow"]["k"], summary["config"]["winnow"]["w"]
    docs = pq.read_table(out / "documents", columns=["doc_id", "url", "text", "status"]).to_pylist()
    texts = {d["doc_id"]: d["text"] or "" for d in docs if d["status"] == "ok"}
    masks = template_masks(texts, k)
    offsets = {d: np.asarray(ww.normalize(t)[1]) for d, t in texts.items()}
    pairs = {(r["doc_a"], r["doc_b"]) for r in pq.read_table(out / "pairs", columns=["doc_a", "doc_b"]).to_pylist()}
    best: dict[tuple[int, int], int] = dict.fromkeys(pairs, 0)
    for r in pq.read_table(out / "passages").to_pylist():
        key = (r["doc_a"], r["doc_b"])
        if key not in best:
            continue
        sa = int(np.searchsorted(offsets[r["doc_a"]], r["start_a"]))
        sb = int(np.searchsorted(offsets[r["doc_b"]], r["start_b"]))
        n = r["length"]
        free = ~(masks[r["doc_a"]][sa : sa + n] | masks[r["doc_b"]][sb : sb + n])
        best[key] = max(best[key], longest_run(free))
    only = sum(v < k for v in best.values())
    print(f"{out}: {len(texts):,} documents, template = k-grams in more than {math.ceil(math.sqrt(len(texts)))}")
    print(
        f"content pairs {len(best):,}; template-only (longest non-template run < k = {k}): {only:,} = {100 * only / max(1, len(best)):.1f}%"
    )
    for lo, hi in ((0, k), (k, w), (w, k + w - 1), (k + w - 1, 10**12)):
        print(f"  longest run in [{lo}, {hi if hi < 10**12 else '∞'}): {sum(lo <= v < hi for v in best.values()):,}")
    if args.planted:
        url_docs: dict[str, list[int]] = {}
        for d in docs:
            if d["status"] == "ok":
                url_docs.setdefault(d["url"], []).append(d["doc_id"])
        texts_all = {d["doc_id"]: d["text"] or "" for d in docs if d["status"] == "ok"}
        spans: dict[tuple[int, int], list[dict]] = {}
        for r in pq.read_table(out / "passages").to_pylist():
            spans.setdefault((r["doc_a"], r["doc_b"]), []).append(r)
        found = exact = total = 0
        for c in json.loads(Path(args.planted).read_text())["copies"]:
            if c.get("kind") != "passage" or c.get("normalized_length", 0) < k + w - 1:
                continue
            total += 1
            ids = [(a, b) for a in url_docs.get(c["src_url"], []) for b in url_docs.get(c["dst_url"], [])]
            hit = [x for x in ids if tuple(sorted(x)) in pairs]
            found += bool(hit)
            if hit and c.get("text"):  # a passage of the pair holds the copy whole, on both sides
                wanted = ww.normalize(c["text"])[0]
                src, dst = hit[0]
                key = tuple(sorted(hit[0]))

                def holds(r, doc, side):
                    return wanted in ww.normalize(texts_all[doc][r[f"start_{side}"] : r[f"end_{side}"]])[0]

                sides = ("a", "b") if key[0] == src else ("b", "a")
                exact += any(holds(r, src, sides[0]) and holds(r, dst, sides[1]) for r in spans.get(key, []))
        print(f"planted copies of at least t = {k + w - 1}: {found} of {total} are content pairs", end="")
        print(f", {exact} held whole by one passage on both sides" if exact else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
