"""One search's candidate pool as arrays (one value a candidate): its order and its collapse into hits.

A pool holds a few hundred passages and a response shows ten: the pool's scores stay numpy arrays through the
ranking (query/pages.py page support, the page channels), and a Python dict is made only for a hit that is
returned.  Every value is the one the scalar formulas give, bit for bit (the arrays apply the same float64
operations in the same order), so the order and the response do not depend on this representation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Pool:
    rows: np.ndarray  # the candidates' passages (rows of the chunks table), ascending
    trust: np.ndarray
    relevance: np.ndarray
    confidence: np.ndarray
    rerank: list[float | None] | None = None  # the cross-encoder's probability, where it read the passage

    @property
    def size(self) -> int:
        return int(self.rows.size)

    def pages(self, chunk_page: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The candidates' pages (numbers, query/reader.py ``chunk_page``) in order of first appearance, and each
        candidate's place in that array."""
        uniq, first, inverse = np.unique(chunk_page[self.rows], return_index=True, return_inverse=True)
        by_first = np.argsort(first)
        place = np.empty(by_first.size, dtype=np.int64)
        place[by_first] = np.arange(by_first.size)
        return uniq[by_first], place[inverse.reshape(-1)]

    def hit(self, j: int, also: list[int]) -> dict:
        """Candidate ``j`` as the dict query/response.py ``hit`` reads."""
        c: dict[str, Any] = {
            "i": int(self.rows[j]),
            "trust": float(self.trust[j]),
            "relevance": float(self.relevance[j]),
            "confidence": float(self.confidence[j]),
        }
        if self.rerank is not None and self.rerank[j] is not None:
            c["rerank"] = self.rerank[j]
        c["also"] = also
        return c


def collapse(
    groups: np.ndarray, rows: np.ndarray, order: np.ndarray, wanted: int, copy_of: np.ndarray | None = None
) -> list[tuple[int, list[int]]]:
    """Identical passages become one hit (the first in ``order``) with the others' rows in its ``also``; the
    first ``wanted`` hits as (position, also).  ``groups``: per row, the first row with the same text (a copy of
    another source's passage: its original's group, query/copies.py).  ``copy_of``: per row, the original it
    copies (-1: none); a copy never heads a group that has a candidate which is no copy (it yields to the
    original): it waits in that candidate's ``also``, whatever its own place in ``order``."""
    ranked = rows[order].tolist()
    g = groups[ranked].tolist()
    positions = order.tolist()
    if len(set(g)) == len(g):  # the common case: no two candidates share a text
        return [(j, []) for j in positions[:wanted]]
    is_copy = (copy_of[ranked] >= 0).tolist() if copy_of is not None else [False] * len(ranked)
    heads = {text for text, c in zip(g, is_copy, strict=True) if not c}  # groups with a candidate that is no copy
    first: dict[int, int] = {}
    waiting: dict[int, list[int]] = {}  # copies ranked above their group's head
    hits: list[tuple[int, list[int]]] = []
    for j, r, text, c in zip(positions, ranked, g, is_copy, strict=True):
        h = first.get(text)
        if h is not None:
            hits[h][1].append(r)
        elif c and text in heads:
            waiting.setdefault(text, []).append(r)
        else:
            first[text] = len(hits)
            hits.append((j, waiting.pop(text, [])))
    return hits[:wanted]


@dataclass(frozen=True, slots=True)
class OrderedHit:
    """One hit of the order: its candidate's position in the pool, the rows of the identical passages collapsed into
    it (``also``) and the positions of its page's lower-ranked candidates folded under it (``same_page``)."""

    position: int
    also: list[int]
    same_page: list[int]


def fold_pages(
    hits: list[tuple[int, list[int]]],
    rows: np.ndarray,
    page_of: np.ndarray,
    wanted: int,
    shown: int,
    own_hit: np.ndarray | None = None,
) -> list[OrderedHit]:
    """One hit per page: a page's best candidate heads its hit, and the page's next ``shown`` candidates in
    ``hits``' order are listed under it (``same_page``); the first ``wanted`` pages.  A reader of k hits sees k
    pages: the 10 hits of a search named 5.1 distinct pages on average (real docs, dev half), so a passage-per-hit
    list showed a reader of its first 5 hits 2.7 pages (docs/architecture.md).  ``page_of``: per row, the page it
    is cited at (query/snapshot_pages.py ``cited_page``: a partial folds into the page that renders it).
    ``own_hit``: per row, whether the passage is always a hit of its own (one the content-risk rules flagged: its
    warning is shown with it, never folded out of sight under a page-mate)."""
    out: list[OrderedHit] = []
    at: dict[int, OrderedHit] = {}
    for j, also in hits:
        if own_hit is not None and own_hit[rows[j]]:
            if len(out) < wanted:
                out.append(OrderedHit(j, also, []))
            continue
        page = int(page_of[rows[j]])
        head = at.get(page)
        if head is not None:
            if len(head.same_page) < shown:
                head.same_page.append(j)
        elif len(out) < wanted:
            at[page] = OrderedHit(j, also, [])
            out.append(at[page])
    return out


def as_hits(hits: list[tuple[int, list[int]]]) -> list[OrderedHit]:
    """Hits without folding: every candidate a hit of its own."""
    return [OrderedHit(j, also, []) for j, also in hits]
