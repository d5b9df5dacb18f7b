"""Connected components of a document graph, by union–find (in Numba past a few thousand edges).

Edges arrive as two int64 arrays; documents are relabelled densely first, so memory is about
40 bytes per edge plus 24 per document, all on one machine: 10^8 near-duplicate links need ~4 GB.
Up to PYTHON_EDGES edges the same union–find runs as a Python loop: Numba's first call in a
process costs about 0.2 CPU-s of setup before the kernel loads, more than the loop takes on the
few thousand links of a crawl's near-duplicates, and the clusters stage calls it on the driver,
which calls no other kernel.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import JIT_OPTIONS, njit


@njit(**JIT_OPTIONS)
def _find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving keeps trees shallow
        x = parent[x]
    return x


@njit(**JIT_OPTIONS)
def _union_all(parent, a, b):
    for i in range(a.shape[0]):
        ra = _find(parent, a[i])
        rb = _find(parent, b[i])
        if ra != rb:
            # the smaller label wins, so a root is always its component's smallest node
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    for x in range(parent.shape[0]):
        parent[x] = _find(parent, x)
    return parent


#: Up to this many edges, _union_all's loop runs in Python (about a microsecond an edge).
PYTHON_EDGES = 50_000


def _union_all_python(parent: list[int], a: list[int], b: list[int]) -> list[int]:
    """_union_all on lists, the same steps (path halving, the smaller root wins)."""

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(a, b, strict=True):
        rx, ry = find(x), find(y)
        if rx != ry:
            if rx < ry:
                parent[ry] = rx
            else:
                parent[rx] = ry
    return [find(x) for x in range(len(parent))]


def components(doc_a: np.ndarray, doc_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc_id, cluster_id, cluster_size) for every document on an edge; cluster_id = smallest doc_id."""
    doc_a = np.asarray(doc_a, dtype=np.int64)
    doc_b = np.asarray(doc_b, dtype=np.int64)
    if doc_a.shape != doc_b.shape:
        raise ValueError("doc_a and doc_b must have the same length")
    nodes, inverse = np.unique(np.concatenate([doc_a, doc_b]), return_inverse=True)
    n = len(nodes)
    # nodes are sorted, so dense label order = doc_id order and the smallest label is the smallest id
    a, b = inverse[: len(doc_a)].astype(np.int64), inverse[len(doc_a) :].astype(np.int64)
    if len(a) <= PYTHON_EDGES:
        parent = np.array(_union_all_python(list(range(n)), a.tolist(), b.tolist()), np.int64)
    else:
        parent = _union_all(np.arange(n, dtype=np.int64), a, b)
    sizes = np.bincount(parent, minlength=n)
    return nodes, nodes[parent], sizes[parent]
