"""Hash frequencies of a run: the power law, its fit's quality, the boilerplate tail, max_df.

Schleimer, Wilkerson and Aiken (section 5) found document frequencies of web k-gram hashes to
follow a power law (rank–frequency slope about -0.7 for all k-grams, -0.68 for winnowed
fingerprints, over 20,000 pages), with 82% of distinct hashes in one document, 14% in two and
2% in three. These functions give the same numbers for a run, and what a user decides from
them: which hashes are templates, and what the document-frequency cap max_df keeps out.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.powerlaw import fit_power_law, freq_of_freq_from_runs, frequency_shares, rank_frequency
from ..core.distinct import distinct_counts, factorized
from ..crawl.hosts import host_of
from .run import RunOutput


@dataclass(frozen=True)
class Curve:
    """A rank–frequency curve: RANK_FREQ runs (rank, rank_last, docs, hashes), its fit and shares."""

    label: str
    runs: list[tuple[int, int, int, int]]
    fit: dict[str, Any]
    shares: dict[str, Any]
    documents: int

    @classmethod
    def of_counts(cls, label: str, doc_freqs: np.ndarray, documents: int) -> Curve:
        """The curve of hashes whose document frequencies are doc_freqs (one entry per distinct hash)."""
        doc_freqs = np.asarray(doc_freqs, np.int64)
        if len(doc_freqs) and int(doc_freqs.min()) < 1:
            raise ValueError("a hash's document frequency is at least 1")
        hashes = np.bincount(doc_freqs)  # frequencies are at most the documents: counted, not sorted
        docs = np.flatnonzero(hashes)
        fof = dict(zip(docs.tolist(), hashes[docs].tolist(), strict=True))
        runs = rank_frequency(fof)
        return cls(label, runs, fit_power_law(runs), frequency_shares(fof), documents)


def fingerprint_curve(run: RunOutput) -> Curve:
    """The run's own curve: every fingerprint hash of every document (the hash_freq stage's)."""
    table = run.table("rank_freq").sort_by("rank")
    runs = list(zip(*(table.column(c).to_pylist() for c in ("rank", "rank_last", "docs", "hashes")), strict=True))
    stats = run.stats("hash_freq")
    fit = stats.get("fit") or fit_power_law(runs)
    shares = stats.get("shares") or frequency_shares(freq_of_freq_from_runs(runs))
    documents = int(run.stats("doc_stats").get("documents", 0))
    return Curve("fingerprints, all documents", runs, fit, shares, documents)


def sample_curves(run: RunOutput, max_docs: int | None = 2000) -> tuple[Curve, Curve]:
    """(all k-gram hashes, winnowed fingerprints) of the same sample of documents.

    The k-gram hashes are computed again from the documents' text (the fingerprint stage keeps
    only the selected ones); the fingerprints are winnowed from them with the run's settings,
    so the two curves differ only in the selection, as in the paper's comparison.
    """
    from ..core.docfreq import document_frequencies
    from ..core.winnowing import select_mod_p, winnow

    made = run.winnow
    w, robust, mod_p = made["w"], made["robust"], made.get("mod_p", 0)
    every, _ = run.sample_frequencies(max_docs)
    chosen = [
        hashes[select_mod_p(hashes, mod_p) if mod_p else winnow(hashes, w, robust)] for _, hashes in run.sample_kgrams(max_docs)
    ]
    bounds = np.zeros(len(chosen) + 1, np.int64)
    np.cumsum([len(c) for c in chosen], out=bounds[1:])
    fingerprints, _ = document_frequencies(np.concatenate(chosen) if chosen else np.zeros(0, np.int64), bounds)
    n = len(run.sample_doc_ids(max_docs))
    return (
        Curve.of_counts(f"all k-grams, {n:,} documents", every, n),
        Curve.of_counts(f"fingerprints, the same {n:,} documents", fingerprints, n),
    )


@dataclass(frozen=True)
class FitQuality:
    """How well the power law describes a curve, and where it stops doing so.

    residuals: at each run's first and last rank, (rank, docs, log10(docs / fitted docs)).
    plateaus: runs of many tied hashes inside the fitted range (a site template's k-grams all
    share the document frequency of the site's page count): flat steps the line cuts through.
    tail: the run of hashes seen in one document, left out of the fit (the paper's plateau end).
    """

    slope: float | None
    r2: float | None
    rank_min: int | None
    rank_max: int | None
    residuals: list[tuple[float, int, float]] = field(default_factory=list)
    plateaus: list[tuple[int, int, int, int]] = field(default_factory=list)
    tail: tuple[int, int, int, int] | None = None
    worst: tuple[float, int, float] | None = None  # the residual of largest size in the fitted range


def fit_quality(curve: Curve, plateau_share: float = 0.01) -> FitQuality:
    fit = curve.fit or {}
    slope, intercept = fit.get("slope"), fit.get("intercept")
    lo, hi = fit.get("rank_min"), fit.get("rank_max")
    residuals = []
    if slope is not None and intercept is not None:
        for rank, last, docs, _ in curve.runs:  # a run is flat, the line is not: both ends
            for x in (rank, last) if last > rank else (rank,):
                residuals.append((float(x), docs, math.log10(docs) - (intercept + slope * math.log10(x))))
    fitted = [r for r in curve.runs if lo is not None and hi is not None and r[0] >= lo and r[1] <= hi]
    ranks = sum(r[3] for r in fitted)
    plateaus = [r for r in fitted if r[3] >= max(10, plateau_share * ranks)]
    tail = next((r for r in curve.runs if r[2] == 1), None)
    inside = [x for x in residuals if lo is not None and hi is not None and lo <= x[0] <= hi]
    worst = max(inside, key=lambda x: abs(x[2])) if inside else None
    return FitQuality(slope, fit.get("r2"), lo, hi, residuals, plateaus, tail, worst)


def boilerplate_by_host(run: RunOutput, top: int = 20, hosts_per_hash: int = 5):
    """The most frequent fingerprints with their text, and the hosts whose pages carry them.

    Returns a DataFrame, one row per (hash, host) for the `top` hashes by document frequency
    (ties by occurrences, then hash): docs, occurrences, hosts (all, as hash_freq counted them),
    host, host_docs (that host's documents holding the hash, its `hosts_per_hash` largest
    hosts), host_share (of the hash's documents), snippet (crawled text: escape it to show it).
    """
    import pandas as pd

    hf = run.table("hash_freq", ["hash", "docs", "occurrences", "hosts", "snippet"], [("docs", ">=", 2)])
    frame = hf.to_pandas().sort_values(["docs", "occurrences", "hash"], ascending=[False, False, True]).head(top)
    columns = ["hash", "docs", "occurrences", "hosts", "host", "host_docs", "host_share", "snippet"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    fp = run.table("fingerprints", ["hash", "doc_id"], [("hash", "in", frame["hash"].tolist())])
    holders: dict[int, set[int]] = defaultdict(set)
    for h, d in zip(fp.column("hash").to_pylist(), fp.column("doc_id").to_pylist(), strict=True):
        holders[h].add(d)
    urls = run.urls({d for ds in holders.values() for d in ds})
    rows = []
    for r in frame.itertuples(index=False):
        hosts = Counter(host_of(urls.get(d)) or "(no host)" for d in holders.get(r.hash, ()))
        for host, n in sorted(hosts.items(), key=lambda x: (-x[1], x[0]))[:hosts_per_hash]:
            rows.append((r.hash, r.docs, r.occurrences, r.hosts, host, n, n / r.docs, r.snippet))
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class MaxDfSweep:
    """Pairs and boilerplate as functions of the document-frequency cap max_df.

    max_df[i] -> pairs[i]: document pairs sharing at least min_shared distinct hashes held by at
    most max_df[i] documents (the candidate pairs the candidates stage would emit with that cap); boilerplate_hashes
    and boilerplate_share: the distinct hashes above the cap and their share of all fingerprints.
    chosen: the cap the run used (auto: chosen by webwinnow). limited_by: why the sweep stops
    where it stops (the seed budget), sample: documents used when not all.
    """

    max_df: list[int]
    pairs: list[int]
    boilerplate_hashes: list[int]
    boilerplate_share: list[float]
    min_shared: int
    chosen: int | None
    chosen_auto: bool
    documents: int
    sample: int | None = None
    limited_by: str | None = None

    def frame(self):
        import pandas as pd

        return pd.DataFrame(
            {
                "max_df": self.max_df,
                "pairs": self.pairs,
                "boilerplate_hashes": self.boilerplate_hashes,
                "boilerplate_share": self.boilerplate_share,
            }
        )


def pair_thresholds(
    doc_a: np.ndarray, doc_b: np.ndarray, df: np.ndarray, min_shared: int, n_docs: int | None = None
) -> np.ndarray:
    """Per document pair, the smallest cap under which it has min_shared distinct shared hashes
    (in no particular order).

    Rows are (pair, shared hash) once each with the hash's document frequency df: the pair is
    emitted under a cap m exactly when min_shared of its hashes have df <= m, i.e. when m is at
    least the min_shared-th smallest df among its hashes. Pairs with fewer hashes never are.
    n_docs: the documents are numbered 0..n_docs-1 (a faster way for min_shared 1).
    """
    if not len(doc_a):
        return np.zeros(0, np.int64)
    if min_shared <= 1 and n_docs is not None:
        from ..analysis.pairing import pair_min_df

        found = pair_min_df(doc_a, doc_b, df, n_docs)
        if found is not None:
            return found
    if min_shared <= 1:  # the smallest df of each pair: a hash aggregation, no sort of the rows
        import pyarrow as pa

        grouped = pa.table({"a": doc_a, "b": doc_b, "df": df}).group_by(["a", "b"], use_threads=False)
        return grouped.aggregate([("df", "min")]).column("df_min").to_numpy()
    order = np.lexsort((df, doc_b, doc_a))
    a, b, d = doc_a[order], doc_b[order], df[order]
    new = np.ones(len(a), bool)
    new[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, len(a)))
    keep = sizes >= min_shared
    return d[starts[keep] + min_shared - 1]


def max_df_sweep(
    run: RunOutput, max_seeds: int = 10_000_000, max_docs: int | None = None, max_rows: int = 60_000_000
) -> MaxDfSweep:
    """The sweep over every document frequency up to the largest cap whose pairing work (the
    seeds: two documents sharing a hash, Σ hashes·df·(df−1)/2) fits max_seeds.

    Reads the fingerprints' (hash, doc_id) columns on this machine: all of them, or those of a
    sample of max_docs documents (then the pair counts are the sample's own). A run larger than
    max_rows fingerprints needs a sample. Hashes a run excluded (`--exclude` template files)
    are counted here like any other: the candidates stage's `excluded_hashes` says when that was so.
    """
    from ..analysis.pairing import pairs_by_min_df

    made_with = run.config("candidate_pairs")
    pairs_cfg = made_with.get("pairing") or made_with["pairs"]  # [pairs]: a run of webwinnow 0.2.0
    min_shared = int(pairs_cfg["min_shared"])
    pstats = run.stats("candidate_pairs")
    documents = int(run.stats("doc_stats").get("documents", 0))
    if max_docs is None:
        if run.rows("fingerprints") > max_rows:
            raise ValueError(
                f"{run.rows('fingerprints'):,} fingerprints are more than max_rows = {max_rows:,}: "
                "give max_docs to sweep a sample of documents"
            )
        fp = run.table("fingerprints", ["hash", "doc_id"])
        sample = None
    else:
        ids = run.sample_doc_ids(max_docs)
        fp = run.doc_rows("fingerprints", ids, ["hash"])
        sample = len(ids)
    chosen = pstats.get("max_df")
    chosen = int(chosen) if chosen is not None else None
    if not fp.num_rows:
        return MaxDfSweep([1], [0], [0], [0.0], min_shared, chosen, bool(pstats.get("max_df_auto")), documents, sample)
    # one row per (hash, document): a pair shares a hash once however often either repeats it
    hashes, docs, occurrences = _distinct_pairs(fp.column("hash").to_numpy(), fp.column("doc_id").to_numpy())
    # documents numbered 0..n-1 in id order: the same pairs, the same doc_a < doc_b
    ids, docs = factorized(docs)
    df = _run_lengths(hashes)  # documents per distinct hash, in hash order
    levels, level_hashes = distinct_counts(df)
    cost = np.cumsum(level_hashes * levels * (levels - 1) // 2)
    top = int(levels[cost <= max_seeds].max()) if (cost <= max_seeds).any() else 1
    limited = None
    if top < int(levels.max()):
        limited = f"the seed budget ({max_seeds:,} seeds) stops the sweep at max_df = {top:,}"
    caps = sorted({1, *(int(m) for m in levels if m <= top), *([chosen] if chosen and chosen <= top else [])})
    # one shared hash makes a pair: each hash's documents paired where they lie, no seeds
    by_min_df = pairs_by_min_df(docs, df, top, len(ids)) if min_shared <= 1 else None
    if by_min_df is not None:
        reached = np.cumsum(by_min_df)
        pairs = [int(reached[m]) for m in caps]
    else:
        pairs = _seed_pairs(hashes, docs, df, top, min_shared, len(ids), caps)
    total = float(occurrences.sum()) or 1.0
    by_df = np.argsort(df, kind="stable")
    ranked = df[by_df]
    beyond = np.r_[np.cumsum(occurrences[by_df][::-1])[::-1], 0]  # occurrences of the hashes from here on
    first_above = np.searchsorted(ranked, caps, side="right")
    above = [int(len(df) - i) for i in first_above]
    share = [float(beyond[i]) / total for i in first_above]
    return MaxDfSweep(caps, pairs, above, share, min_shared, chosen, bool(pstats.get("max_df_auto")), documents, sample, limited)


def _seed_pairs(
    hashes: np.ndarray, docs: np.ndarray, df: np.ndarray, top: int, min_shared: int, n_docs: int, caps: list[int]
) -> list[int]:
    """The pairs under each cap from the seeds (min_shared > 1, or too many documents for a bitmap)."""
    from ..analysis.pairing import partition_seeds

    # each row's hash's document frequency rides in the seeds' position field (pos_a): no
    # lookup of every seed's hash afterwards
    chunks = list(partition_seeds(hashes, docs, np.repeat(df, df).astype(np.int32), top))
    if chunks:
        a = np.concatenate([s.doc_a for s in chunks])
        b = np.concatenate([s.doc_b for s in chunks])
        seed_df = np.concatenate([s.pos_a for s in chunks]).astype(np.int64)
        q = np.sort(pair_thresholds(a, b, seed_df, min_shared, n_docs))
    else:
        q = np.zeros(0, np.int64)
    return [int(np.searchsorted(q, m, side="right")) for m in caps]


def _run_lengths(values: np.ndarray) -> np.ndarray:
    """The lengths of the runs of equal values of a sorted array."""
    if not len(values):
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return np.diff(np.r_[starts, len(values)])


def _distinct_pairs(hashes: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (hash, doc) pairs sorted by hash, then doc (np.unique(axis=0) without its
    structured-array sort, several times slower), and the fingerprints of each distinct hash,
    in hash order (a document repeating a k-gram holds it more than once)."""
    order = np.lexsort((docs, hashes))
    h, d = hashes[order], docs[order]
    new = np.ones(len(h), bool)
    new[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    return np.ascontiguousarray(h[new]), np.ascontiguousarray(d[new]), _run_lengths(h)
