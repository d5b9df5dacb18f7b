"""How a selection of k-gram hashes covers a document: how many it keeps and the longest stretch
of k-grams it leaves without a fingerprint -- the two measures the paper compares fingerprinting
schemes by (winnowing never leaves more than w - 1 k-grams in a row unselected; 0 mod p gives no
such bound, and on its web data left a gap of 29,983 characters)."""

from __future__ import annotations

import numpy as np


def longest_gap(selected: np.ndarray, n: int) -> int:
    """The longest run of consecutive k-gram indices in [0, n) of which none is selected.

    selected: the selected indices, strictly increasing, each in [0, n). A document with no
    k-gram has no gap (0); one whose k-grams are all unselected is one gap of n.
    """
    sel = np.asarray(selected)
    if sel.ndim != 1 or (sel.size and not np.issubdtype(sel.dtype, np.integer)):
        raise ValueError("selected must be a 1-d array of integer k-gram indices")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if sel.size == 0:
        return int(n)
    if sel[0] < 0 or sel[-1] >= n or (sel.size > 1 and np.any(np.diff(sel) <= 0)):
        raise ValueError("selected must be strictly increasing indices in [0, n)")
    inner = int(np.diff(sel).max()) - 1 if sel.size > 1 else 0
    return max(int(sel[0]), int(n - 1 - sel[-1]), inner)


def _gaps(sel: np.ndarray, n: int) -> np.ndarray:
    """Lengths of the runs of unselected indices: before the first, between, after the last."""
    if sel.size == 0:
        return np.array([n], dtype=np.int64)
    inner = np.diff(sel) - 1
    return np.concatenate(([sel[0]], inner, [n - 1 - sel[-1]])).astype(np.int64)


def unselected_windows(selected: np.ndarray, n: int, w: int) -> tuple[int, int]:
    """(windows of w consecutive k-grams with no selected k-gram, all such windows) in [0, n).

    A shared passage of t = w + k - 1 characters spans exactly w k-grams: the first number over
    the second is the share of such matches a selection misses (0 for winnowing by its guarantee;
    about (1 - 1/p)^w = e^(-w/p), 13.5% for 0 mod 50 at w = 100, in the paper's analysis).
    """
    if not isinstance(w, (int, np.integer)) or w < 1:
        raise ValueError(f"w must be a positive integer, got {w!r}")
    longest_gap(selected, n)  # validates
    windows = max(0, int(n) - int(w) + 1)
    if windows == 0:
        return 0, 0
    gaps = _gaps(np.asarray(selected, dtype=np.int64), int(n))
    return int(np.maximum(gaps - w + 1, 0).sum()), windows
