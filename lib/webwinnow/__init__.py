"""webwinnow: copied and near-duplicate text across web crawls, by winnowing (Schleimer et al. 2003)."""

from .fingerprint import (
    Fingerprints,
    fingerprint,
    fingerprint_batch,
    kgram_hashes,
    normalize,
    resolve_window,
    select_mod_p,
    winnow,
)

__version__ = "0.1.0"

__all__ = [
    "Fingerprints",
    "fingerprint",
    "fingerprint_batch",
    "kgram_hashes",
    "normalize",
    "resolve_window",
    "select_mod_p",
    "winnow",
]
