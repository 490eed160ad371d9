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


def collapse_order(
    groups: np.ndarray, rows: np.ndarray, order: np.ndarray, copy_of: np.ndarray | None = None
) -> tuple[np.ndarray, list[list[int]] | None]:
    """Identical passages become one hit (the first in ``order``) with the others' rows in its ``also``: the hits'
    positions in the pool, best first, and each one's ``also`` (None: no two candidates share a text, the common
    case, and the positions are ``order`` itself).  ``groups``: per row, the first row with the same text (a copy of
    another source's passage: its original's group, query/copies.py).  ``copy_of``: per row, the original it
    copies (-1: none); a copy never heads a group that has a candidate which is no copy (it yields to the
    original): it waits in that candidate's ``also``, whatever its own place in ``order``."""
    ranked = rows[order].tolist()
    g = groups[ranked].tolist()
    if len(set(g)) == len(g):
        return order, None
    is_copy = (copy_of[ranked] >= 0).tolist() if copy_of is not None else [False] * len(ranked)
    heads = {text for text, c in zip(g, is_copy, strict=True) if not c}  # groups with a candidate that is no copy
    first: dict[int, int] = {}
    waiting: dict[int, list[int]] = {}  # copies ranked above their group's head
    at: list[int] = []
    also: list[list[int]] = []
    for j, r, text, c in zip(order.tolist(), ranked, g, is_copy, strict=True):
        h = first.get(text)
        if h is not None:
            also[h].append(r)
        elif c and text in heads:
            waiting.setdefault(text, []).append(r)
        else:
            first[text] = len(at)
            at.append(j)
            also.append(waiting.pop(text, []))
    return np.asarray(at, dtype=np.int64), also


@dataclass(frozen=True, slots=True)
class OrderedHit:
    """One hit of the order: its candidate's position in the pool, the rows of the identical passages collapsed into
    it (``also``) and the positions of its page's lower-ranked candidates folded under it (``same_page``)."""

    position: int
    also: list[int]
    same_page: list[int]


def fold_pages(
    at: np.ndarray,
    also: list[list[int]] | None,
    rows: np.ndarray,
    page_of: np.ndarray,
    wanted: int,
    shown: int,
    own_hit: np.ndarray | None = None,
) -> list[OrderedHit]:
    """One hit per page over the hits of ``collapse_order`` (their pool positions ``at``, best first, and each
    one's ``also``): a page's best candidate heads its hit, and the page's next ``shown`` candidates are listed
    under it (``same_page``); the first ``wanted`` pages.  A reader of k hits sees k pages: the 10 hits of a
    search named 5.1 distinct pages on average (real docs, dev half), so a passage-per-hit list showed a reader of
    its first 5 hits 2.7 pages (docs/architecture.md).  ``page_of``: per row, the page it is cited at
    (query/snapshot_pages.py ``cited_page``: a partial folds into the page that renders it).
    ``own_hit``: per row, whether the passage is always a hit of its own (one the content-risk rules flagged: its
    warning is shown with it, never folded out of sight under a page-mate).

    Worked out on arrays (the whole pool is read, ~100-400 candidates: a loop over them cost ~0.1 ms a search);
    tests/query/test_page_hits.py holds it to the loop that states the rule."""
    if not at.size:
        return []
    page = page_of[rows[at]].astype(np.int64)
    if own_hit is not None:  # a page of its own each: keys below every page's row
        page = np.where(own_hit[rows[at]], -1 - np.arange(at.size), page)
    by_page = np.argsort(page, kind="stable")  # each page's candidates together, in the hits' order
    sorted_pages = page[by_page]
    new_page = np.empty(at.size, dtype=bool)
    new_page[0] = True
    np.not_equal(sorted_pages[1:], sorted_pages[:-1], out=new_page[1:])
    heads = np.sort(by_page[new_page])[:wanted]  # each page's best, best first
    starts = np.searchsorted(sorted_pages, page[heads], side="left") + 1  # the head is its page's first
    ends = np.minimum(np.searchsorted(sorted_pages, page[heads], side="right"), starts + shown)
    return [
        OrderedHit(int(at[h]), also[h] if also is not None else [], at[by_page[s:e]].tolist())
        for h, s, e in zip(heads.tolist(), starts.tolist(), ends.tolist(), strict=True)
    ]
