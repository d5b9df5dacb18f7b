"""`webwinnow paper-tables`: the paper's Web-data measurements, reproduced on a run's output.

Schleimer, Wilkerson and Aiken (SIGMOD 2003), section 5, compare winnowing with selecting the
hashes that are 0 mod p at the same expected density: fingerprints per k-gram, the longest
stretch of k-grams left without one (winnowing: at most w - 1 by construction; 0 mod 50 left
29,983 characters on their crawl), and the share of matches of the guarantee length t that get
no fingerprint (winnowing none; 0 mod p about (1 - 1/p)^w, 13.5% in the paper). Both are measured here on the run's documents table: every
document's k-gram hashes are computed again (normalization and the rolling hash, the Numba
kernels) and both selections applied -- no second pipeline run, and a check that the winnowing
recomputed selects exactly what the fingerprint stage stored. The hash-frequency power law and
the shares of hashes seen once, twice and three times come from the hash_freq stage's
statistics.

The cost is one pass over the documents' text on the driver (about the fingerprint stage's
work on one core); `--max-docs N` takes the first N documents for a quicker look.
"""

from __future__ import annotations

import time
from typing import Any

from .. import storage
from ..errors import UserError
from .run import run_folder


def _texts(folder: str, max_docs: int | None):
    """The documents' texts in the table's order (its files sorted), in batches."""
    import pyarrow.parquet as pq

    from ..outputs.tables import parquet_files

    left = max_docs
    for name in parquet_files(folder, "documents"):
        with storage.open_input(name) as fh:
            for batch in pq.ParquetFile(fh).iter_batches(columns=["text"], batch_size=2048):
                texts = batch.column(0).to_pylist()
                if left is not None:
                    texts = texts[:left]
                    left -= len(texts)
                yield texts
                if left is not None and left <= 0:
                    return


class SelectionTally:
    """Winnowing against 0 mod p over documents' k-gram hashes, one document at a time: per
    scheme [fingerprints, longest gap, windows of w k-grams with none], the k-grams and the
    windows in all."""

    def __init__(self, w: int, robust: bool, p: int) -> None:
        self.w, self.robust, self.p = w, robust, p
        self.tally = {"winnowing": [0, 0, 0], "mod_p": [0, 0, 0]}
        self.kgrams = self.windows = 0

    def add(self, hashes) -> None:
        from ..analysis.selection import longest_gap, unselected_windows
        from ..core.winnowing import select_mod_p, winnow

        n = int(hashes.shape[0])
        self.kgrams += n
        if n == 0:
            return
        all_windows = 0
        # both selections give strictly increasing indices: each k-gram once
        for name, selected in (("winnowing", winnow(hashes, self.w, self.robust)), ("mod_p", select_mod_p(hashes, self.p))):
            missed, all_windows = unselected_windows(selected, n, self.w)
            self.tally[name][0] += int(selected.size)
            self.tally[name][1] = max(self.tally[name][1], longest_gap(selected, n))
            self.tally[name][2] += missed
        self.windows += all_windows

    def gaps(self, documents: int) -> dict[str, Any]:
        """What the gaps figure shows (explore.figures.gaps_figure): paper_tables' keys."""
        w, p = self.w, self.p
        win, mp = self.tally["winnowing"], self.tally["mod_p"]
        return {
            "documents": documents,
            "kgrams": self.kgrams,
            "winnowing": {
                "fingerprints": win[0],
                "longest_gap_kgrams": win[1],
                "bound_gap_kgrams": w - 1,
                "missed_threshold_matches": win[2] / self.windows if self.windows else None,
            },
            "mod_p": {
                "p": p,
                "fingerprints": mp[0],
                "longest_gap_kgrams": mp[1],
                "missed_threshold_matches": mp[2] / self.windows if self.windows else None,
                "expected_missed": (1 - 1 / p) ** w,
            },
        }


def paper_tables(out: str, *, mod_p: int | None = None, max_docs: int | None = None, folder: str | None = None) -> dict[str, Any]:
    """The measurements as one JSON-able dict (see the module's docstring); folder: where the
    run's tables are, when known (else found from out)."""
    from ..core.winnowing import kgram_hashes
    from ..outputs.tables import read_table_config, table_stats

    if max_docs is not None and max_docs < 1:
        raise UserError(f"--max-docs must be at least 1, got {max_docs}")
    folder = folder or run_folder(out)
    made = read_table_config(folder, "fingerprints")["config"]["winnow"]
    k, w, robust, run_mod_p = made["k"], made["w"], made["robust"], made.get("mod_p", 0)
    p = mod_p if mod_p is not None else max(1, round((w + 1) / 2))  # the same expected density
    if p < 1:
        raise UserError(f"--mod-p must be at least 1, got {p}")
    started = time.time()
    docs = chars = text_bytes = 0
    counted = SelectionTally(w, robust, p)
    for texts in _texts(folder, max_docs):
        for text in texts:
            docs += 1
            if not text:
                continue
            hashes, _ = kgram_hashes(text, k, made.get("unit", "char"), made.get("lexer", "c"))
            chars += len(text)
            text_bytes += len(text.encode("utf-8", "surrogatepass"))  # the paper counts bytes
            counted.add(hashes)
    seconds = time.time() - started
    tally, kgrams, windows = counted.tally, counted.kgrams, counted.windows
    stats = table_stats(folder, "hash_freq") or {}
    fit, shares = stats.get("fit") or {}, stats.get("shares") or {}
    stored = table_stats(folder, "fingerprints") or {}
    result: dict[str, Any] = {
        "k": k,
        "w": w,
        "t": w + k - 1,
        "robust": robust,
        "documents": docs,
        "text_chars": chars,
        "text_bytes": text_bytes,
        "kgrams": kgrams,
        "winnowing": {
            "fingerprints": tally["winnowing"][0],
            "density": tally["winnowing"][0] / kgrams if kgrams else None,
            "expected_density": 2 / (w + 1),
            "longest_gap_kgrams": tally["winnowing"][1],
            "bound_gap_kgrams": w - 1,
            "missed_threshold_matches": tally["winnowing"][2] / windows if windows else None,
        },
        "mod_p": {
            "p": p,
            "fingerprints": tally["mod_p"][0],
            "density": tally["mod_p"][0] / kgrams if kgrams else None,
            "expected_density": 1 / p,
            "longest_gap_kgrams": tally["mod_p"][1],
            "missed_threshold_matches": tally["mod_p"][2] / windows if windows else None,
            "expected_missed": (1 - 1 / p) ** w,
        },
        "lower_bound_density": 1.5 / (w + 1),
        "power_law": {
            "slope": fit.get("slope"),
            "r2": fit.get("r2"),
            "rank_min": fit.get("rank_min"),
            "rank_max": fit.get("rank_max"),
            "min_docs": fit.get("min_docs"),
        },
        "shares": {key: shares.get(key) for key in ("hashes", "once", "twice", "three_times", "more")},
        "cost": {"seconds": round(seconds, 2), "mb_per_s": round(chars / 1e6 / seconds, 2) if seconds > 0 else None},
    }
    if max_docs is None and not run_mod_p and "fingerprints" in stored:
        # the stage's own count: the recomputation must select exactly the same k-grams
        result["winnowing"]["matches_fingerprint_stage"] = stored["fingerprints"] == tally["winnowing"][0]
    return result


def _pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def format_tables(r: dict[str, Any]) -> list[str]:
    """The paper's layout: one column per scheme, then the power law and the frequency shares."""
    win, mp = r["winnowing"], r["mod_p"]
    rows = [
        ("", "winnowing", f"0 mod {mp['p']}"),
        ("documents", f"{r['documents']:,}", f"{r['documents']:,}"),
        ("text characters", f"{r['text_chars']:,}", f"{r['text_chars']:,}"),
        ("text bytes (UTF-8)", f"{r['text_bytes']:,}", f"{r['text_bytes']:,}"),
        ("k-gram hashes", f"{r['kgrams']:,}", f"{r['kgrams']:,}"),
        ("fingerprints", f"{win['fingerprints']:,}", f"{mp['fingerprints']:,}"),
        ("density", _pct(win["density"], 3), _pct(mp["density"], 3)),
        ("expected density", _pct(win["expected_density"], 3) + " = 2/(w+1)", _pct(mp["expected_density"], 3) + " = 1/p"),
        (
            "longest gap (k-grams)",
            f"{win['longest_gap_kgrams']:,} (bound w-1 = {win['bound_gap_kgrams']})",
            f"{mp['longest_gap_kgrams']:,} (no bound)",
        ),
        (
            "matches of length t missed",
            _pct(win["missed_threshold_matches"]),
            f"{_pct(mp['missed_threshold_matches'])} (≈ {_pct(mp['expected_missed'], 1)})",
        ),
    ]
    width = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        f"k = {r['k']}, w = {r['w']}, t = {r['t']} ({'robust' if r['robust'] else 'standard'} winnowing); "
        f"lower bound on density 1.5/(w+1) = {_pct(r['lower_bound_density'], 3)}"
    ]
    lines += ["  ".join(cell.ljust(width[i]) if i == 0 else cell.rjust(width[i]) for i, cell in enumerate(row)) for row in rows]
    if "matches_fingerprint_stage" in win:
        lines.append(
            "recomputed winnowing = the fingerprint stage's table: "
            + ("yes" if win["matches_fingerprint_stage"] else "NO (the table is not from these settings)")
        )
    pl, sh = r["power_law"], r["shares"]
    if pl.get("slope") is not None:
        lines.append(
            f"rank-frequency power law: slope {pl['slope']:.2f} (R² {pl['r2']:.2f}, ranks {pl['rank_min']:,}-"
            f"{pl['rank_max']:,}); the paper: about -0.7 for k-grams, -0.68 for fingerprints"
        )
    if sh.get("hashes"):
        lines.append(
            f"distinct fingerprint hashes {sh['hashes']:,}: in 1 document {_pct(sh['once'], 1)}, 2 "
            f"{_pct(sh['twice'], 1)}, 3 {_pct(sh['three_times'], 1)}; the paper: 82%, 14%, 2%"
        )
    lines.append(f"computed in {r['cost']['seconds']} s ({r['cost']['mb_per_s']} MB of text/s, one core)")
    return lines


def command(args) -> int:
    """`webwinnow paper-tables`: the table, or with --json the numbers; errors are one line."""
    import json
    import sys

    try:
        result = paper_tables(args.out, mod_p=args.mod_p, max_docs=args.max_docs)
    except (UserError, storage.StorageError) as exc:
        print(f"webwinnow: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2, sort_keys=True) if args.json else "\n".join(format_tables(result)))
    return 0
