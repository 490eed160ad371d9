"""One search's candidate pool as arrays (one value a candidate): its order and its collapse into hits.

A pool holds a few hundred passages and a response shows ten: the pool's scores stay numpy arrays through the
ranking (query/pages.py page support, the page channels), and a Python dict is made only for a hit that is
returned.  Every value is the one the scalar formulas give, bit for bit (the arrays apply the same float64
operations in the same order), so the order and the response do not depend on this representation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Pool:
    rows: np.ndarray  # the candidates' passages (rows of the chunks table), ascending
    trust: np.ndarray
    relevance: np.ndarray
    confidence: np.ndarray
    ranking: np.ndarray  # the fused (RRF) score
    rerank: list[float | None] | None = None  # the cross-encoder's probability, where it read the passage

    @property
    def size(self) -> int:
        return int(self.rows.size)

    def pages(self, chunk_doc: list[str]) -> tuple[list[str], np.ndarray]:
        """The candidates' pages in order of first appearance, and each candidate's place in that list."""
        at: dict[str, int] = {}
        code = [at.setdefault(chunk_doc[r], len(at)) for r in self.rows.tolist()]
        return list(at), np.asarray(code, dtype=np.int64)

    def order(self, key: np.ndarray, chunk_ids: list[str]) -> list[int]:
        """Positions best first: by ``key``, then the fused score, then the chunk id (both descending, the id
        ascending: a total order, so equal keys never depend on the pool's layout)."""
        ids = [chunk_ids[r] for r in self.rows.tolist()]
        ranked = sorted(zip((-key).tolist(), (-self.ranking).tolist(), ids, range(len(ids)), strict=True))
        return [j for _k, _r, _id, j in ranked]

    def hit(self, j: int, also: list[int]) -> dict:
        """Candidate ``j`` as the dict query/response.py ``hit`` reads."""
        c = {
            "i": int(self.rows[j]),
            "trust": float(self.trust[j]),
            "relevance": float(self.relevance[j]),
            "confidence": float(self.confidence[j]),
            "ranking": float(self.ranking[j]),
        }
        if self.rerank is not None and self.rerank[j] is not None:
            c["rerank"] = self.rerank[j]
        c["also"] = also
        return c


def collapse(groups, rows: list[int], order: list[int], wanted: int) -> list[tuple[int, list[int]]]:
    """Identical passages become one hit (the first in order) with the others' rows in its ``also``; the first
    ``wanted`` hits as (position, also).  ``groups``: per row, the first row with the same text."""
    first: dict[int, int] = {}
    hits: list[tuple[int, list[int]]] = []
    for j in order:
        r = rows[j]
        g = groups[r]
        h = first.get(g)
        if h is None:
            first[g] = len(hits)
            hits.append((j, []))
        else:
            hits[h][1].append(r)
    return hits[:wanted]
