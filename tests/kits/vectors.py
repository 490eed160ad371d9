"""Synthetic unit vectors for the dense search tests: clustered corpora, exact copies, and the full scan they are
checked against (tests/query/test_dense.py, test_dense_int8.py)."""

from __future__ import annotations

import numpy as np

DIMS = 32  # small vectors keep the HNSW builds here well under a second


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def clustered(n: int, seed: int = 0, dims: int = DIMS) -> np.ndarray:
    """Low-rank Gaussian rows plus noise: structured like sentence embeddings (not isotropic)."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((8, dims))
    x = rng.standard_normal((n, 8)) @ basis + 0.3 * rng.standard_normal((n, dims))
    return unit(x).astype(np.float16)


def full_scan(emb: np.ndarray, q: np.ndarray, depth: int):
    """The reference: every row's float32 cosine, best first, ties to the lower row."""
    s = np.array([np.dot(r.astype(np.float32), q) for r in emb], dtype=np.float32)
    order = np.lexsort((np.arange(len(s)), -s))[:depth]
    return order, s[order]


def with_copies(n: int, copies: int, seed: int = 1) -> np.ndarray:
    """``copies`` identical rows spread through the matrix: ties at any cut."""
    emb = clustered(n, seed)
    rng = np.random.default_rng(seed)
    emb[rng.choice(n, copies, replace=False)] = emb[0]
    return emb
