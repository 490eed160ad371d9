"""Relevance in [0, 1] from absolute signals, comparable across queries.

Dense: the raw cosine mapped linearly from ``cosine_floor`` (0) to
``cosine_ceiling`` (1) and clipped.  Lexical: BM25 saturated as s / (s + h)
(the form of BM25's own term-frequency saturation, Robertson & Zaragoza 2009,
"The Probabilistic Relevance Framework", §3.4), so a score of ``bm25_half``
gives 0.5.  The two are averaged with the policy's weights over the channels
that ran; a query naming an identifier adds a third share, the identifier's own BM25 saturated the same way
(query/lexical_signals.py), weighted by ``identifier_weight``.  Nothing is normalised over the returned
list, so a passage's relevance does not depend on its neighbours or on k.
"""

from __future__ import annotations

import numpy as np


def dense_relevance(cosine: np.ndarray | float, floor: float, ceiling: float):
    return np.clip((np.asarray(cosine, dtype=np.float64) - floor) / (ceiling - floor), 0.0, 1.0)


def lexical_relevance(bm25: np.ndarray | float, half: float):
    s = np.maximum(np.asarray(bm25, dtype=np.float64), 0.0)
    return s / (s + half)


def relevance(cosine, bm25, policy, lexical_ran: bool, identifier=None):
    r = policy.relevance
    d = dense_relevance(cosine, r.cosine_floor, r.cosine_ceiling)
    total, weight = r.dense_weight * d, r.dense_weight
    if lexical_ran and r.lexical_weight > 0:
        total, weight = (
            total + r.lexical_weight * lexical_relevance(bm25, r.bm25_half),
            weight + r.lexical_weight,
        )
    if identifier is not None and r.identifier_weight > 0:
        wi = r.identifier_weight
        total, weight = total + wi * lexical_relevance(identifier, r.bm25_half), weight + wi
    return d if weight == r.dense_weight else total / weight
