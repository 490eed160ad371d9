"""Pseudo-relevance feedback (issue 43 item 4): the first pass's best passages reshape the query. Off by default.

- Feedback set: the ``feedback.passages`` best passages of the first pass (the user's wording's dense and lexical
  channels fused by RRF, as the pool is).
- Dense, Rocchio (Rocchio 1971, "Relevance feedback in information retrieval"): the query vector moves toward the
  feedback set's unit mean, q' = unit(q + dense_share × unit_mean(F)).
- Lexical, RM3 (Lavrenko & Croft 2001, "Relevance-based language models"; the interpolation of Abdul-Jaleel et al.
  2004, "UMass at TREC 2004"): each feedback passage's BM25 contributions normalised to a distribution over its terms,
  summed over the set; the ``feedback.terms`` heaviest terms the query lacks, their weights normalised, interpolated
  with the original scores: (1 - lexical_share) × BM25(q) + lexical_share × |q| × Σ_t w_t BM25(t).

Both replace the first pass for the pool and the passages' relevance.  Measured on both judged corpora's dev halves
(docs/benchmarks.md, "Ranking changes of issue 43"): every setting tried lost, so ``feedback.passages`` is 0.
"""

from __future__ import annotations

import numpy as np


def feedback_rows(pool: np.ndarray, fused: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` best rows of a fused pool (ties: the smaller row), ascending."""
    return np.sort(pool[np.lexsort((pool, -fused))[:count]])


def rocchio(query_vector: np.ndarray, feedback_mean: np.ndarray, share: float) -> np.ndarray:
    v = np.asarray(query_vector, np.float32) + np.float32(share) * np.asarray(feedback_mean, np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-12)


def expansion_terms(lexical, rows: np.ndarray, known: set[int], count: int) -> tuple[np.ndarray, np.ndarray]:
    """RM3's expansion: the ``count`` terms (vocabulary ids, not in ``known``) heaviest over the feedback passages,
    each passage's BM25 contributions normalised to sum 1; their weights normalised to sum 1."""
    pos = np.flatnonzero(np.isin(lexical.indices, rows))
    if not pos.size:
        return np.zeros(0, np.int64), np.zeros(0)
    term = np.searchsorted(np.asarray(lexical.indptr), pos, side="right") - 1
    doc = lexical.indices[pos]
    contrib = lexical.data[pos].astype(np.float64)
    per_doc = np.zeros(lexical.n_docs)
    np.add.at(per_doc, doc, contrib)
    weight = np.zeros(len(lexical.indptr) - 1)
    np.add.at(weight, term, contrib / np.maximum(per_doc[doc], 1e-12))
    weight[list(known)] = 0.0
    top = np.argsort(-weight, kind="stable")[:count]
    top = top[weight[top] > 0]
    return top, weight[top] / max(float(weight[top].sum()), 1e-12)


def rm3_scores(lexical, base: np.ndarray, nterms: int, terms: np.ndarray, weights: np.ndarray, share: float):
    """The interpolated lexical scores of every passage (float32, as BM25's own)."""
    extra = np.zeros(lexical.n_docs, np.float32)
    for t, w in zip(terms.tolist(), weights.tolist(), strict=True):
        lo, hi = lexical.indptr[t], lexical.indptr[t + 1]
        extra[lexical.indices[lo:hi]] += np.float32(w) * lexical.data[lo:hi]
    return ((1.0 - share) * base + np.float32(share * nterms) * extra).astype(np.float32)
