"""A record's document id: a pure function of where the record is, the same on every run."""

from __future__ import annotations

import hashlib


def doc_id(path: str, offset: int, inner: int = 0) -> int:
    """Deterministic 63-bit id of the record at (file, offset[, offset inside the member]).

    Derived only from the input's absolute path and the record's coordinates, never from Spark
    partitioning, so it is the same on every run and every cluster that reads the same path.
    """
    key = f"{path}\0{offset}\0{inner}".encode("utf-8", "surrogateescape")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1
