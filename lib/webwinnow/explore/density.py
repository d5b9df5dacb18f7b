"""Density and gaps on a run's documents: the paper's section 5 measurements as tables.

Winnowing selects about 2/(w+1) of the k-grams of random text, never fewer than 1.5/(w+1) for
any local algorithm (the paper's lower bound), and leaves at most w-1 consecutive k-grams
without a fingerprint. Robust winnowing keeps the previously selected k-gram when a window's
minimum is tied, so a run of equal hashes (low-entropy text: "aaaa…", rules, repeated table
cells) costs one fingerprint per window length instead of one per k-gram.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.distinct import distinct
from .run import RunOutput

DEFAULT_WS = (4, 8, 16, 32, 64, 100, 128, 256, 512)

#: Strings with little entropy, as crawls hold them: runs of one character, short cycles.
LOW_ENTROPY = {
    "one letter repeated": "a" * 4000,
    "two letters alternating": "ab" * 2000,
    "a phrase repeated": "the end " * 500,
    "a table of zeros": "0 " * 4000,
}


def density_by_w(run: RunOutput, ws: Sequence[int] = DEFAULT_WS, max_docs: int | None = 2000):
    """Measured fingerprint density for each window w on a sample of the run's documents (the
    run's k and robustness), beside 2/(w+1) and the lower bound 1.5/(w+1)."""
    import pandas as pd

    from ..core.winnowing import winnow

    made = run.winnow
    k, robust = made["k"], made["robust"]
    ws = sorted({int(w) for w in ws})
    picked = dict.fromkeys(ws, 0)
    kgrams = 0
    docs = 0
    for _, hashes in run.sample_kgrams(max_docs):
        docs += 1
        kgrams += int(hashes.size)
        for w in ws:
            picked[w] += int(winnow(hashes, w, robust).size)
    rows = [
        (w, w + k - 1, docs, kgrams, picked[w], picked[w] / kgrams if kgrams else float("nan"), 2 / (w + 1), 1.5 / (w + 1))
        for w in ws
    ]
    return pd.DataFrame(rows, columns=["w", "t", "documents", "kgrams", "fingerprints", "density", "expected", "lower_bound"])


def robust_vs_standard(
    run: RunOutput | None = None, w: int | None = None, k: int | None = None, run_docs: int = 5, max_docs: int | None = 2000
):
    """Fingerprints robust and standard winnowing select on low-entropy text.

    The built-in strings of LOW_ENTROPY, and (given a run) the run_docs documents of its sample
    whose k-grams repeat the most (fewest distinct hashes per k-gram), as robust ∕ standard
    counts and densities with the run's k and w (or the ones given).
    """
    import pandas as pd

    from ..core.winnowing import kgram_hashes, winnow

    unit, lexer = "char", "c"
    if run is not None:
        made = run.winnow
        w, k = w or made["w"], k or made["k"]
        unit, lexer = made.get("unit", "char"), made.get("lexer", "c")
    w, k = w or 100, k or 50
    cases: list[tuple[str, str]] = list(LOW_ENTROPY.items())
    if run is not None and run_docs:
        _, unique = run.sample_frequencies(max_docs)
        scored = sorted(
            (int(n) / hashes.size, doc_id)
            for (doc_id, hashes), n in zip(run.sample_kgrams(max_docs), unique, strict=True)
            if hashes.size >= 2 * w
        )[:run_docs]
        urls = run.urls([d for _, d in scored])
        texts: dict[int, str] = {}
        for ids, chunk in run.texts(np.array([d for _, d in scored], np.int64)):
            texts.update(zip(ids.tolist(), chunk, strict=True))
        cases += [(f"document {urls.get(d) or d} ({100 * r:.0f}% distinct k-grams)", texts[d]) for r, d in scored]
    rows = []
    for name, text in cases:
        hashes, _ = kgram_hashes(text, k, unit, lexer)
        n = int(hashes.size)
        if not n:
            continue
        robust, standard = int(winnow(hashes, w, True).size), int(winnow(hashes, w, False).size)
        rows.append((name, n, int(distinct(hashes).size), robust, standard, robust / n, standard / n))
    return pd.DataFrame(
        rows, columns=["text", "kgrams", "distinct_kgrams", "robust", "standard", "robust_density", "standard_density"]
    )


def paper_table(run: RunOutput, max_docs: int | None = None, mod_p: int | None = None) -> dict:
    """The paper's Web-data table for the run (webwinnow paper-tables): see webwinnow.explore.paper."""
    from .paper import paper_tables

    return paper_tables(run.out, mod_p=mod_p, max_docs=max_docs, folder=run.folder)


def sample_gaps(run: RunOutput, max_docs: int | None = 2000, mod_p: int | None = None) -> dict:
    """paper_table's gaps and missed matches (what the gaps figure shows) on the sample of
    documents the other per-document analyses use, from their k-gram hashes: no text read or
    hashed again."""
    from .paper import SelectionTally

    made = run.winnow
    w = made["w"]
    p = mod_p if mod_p is not None else max(1, round((w + 1) / 2))  # the same expected density
    tally = SelectionTally(w, made["robust"], p)
    for _, hashes in run.sample_kgrams(max_docs):
        tally.add(hashes)
    return tally.gaps(len(run.sample_doc_ids(max_docs)))


def paper_frame(result: dict):
    """paper_table's numbers as a two-column DataFrame, winnowing beside 0 mod p."""
    import pandas as pd

    win, mp = result["winnowing"], result["mod_p"]
    index = [
        "documents",
        "text characters",
        "text bytes",
        "k-gram hashes",
        "fingerprints",
        "density",
        "expected density",
        "longest gap (k-grams)",
        "gap bound (k-grams)",
        "threshold matches missed",
        "expected missed",
    ]
    return pd.DataFrame(
        {
            "winnowing": [
                result["documents"],
                result["text_chars"],
                result["text_bytes"],
                result["kgrams"],
                win["fingerprints"],
                win["density"],
                win["expected_density"],
                win["longest_gap_kgrams"],
                win["bound_gap_kgrams"],
                win["missed_threshold_matches"],
                0.0,
            ],
            f"0 mod {mp['p']}": [
                result["documents"],
                result["text_chars"],
                result["text_bytes"],
                result["kgrams"],
                mp["fingerprints"],
                mp["density"],
                mp["expected_density"],
                mp["longest_gap_kgrams"],
                None,
                mp["missed_threshold_matches"],
                mp["expected_missed"],
            ],
        },
        index=index,
        dtype=object,
    )  # counts stay integers, shares stay fractions
