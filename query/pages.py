"""Passage → page aggregation: a passage's place in the order counts the other strong passages of its page.

A page that answers a question usually matches it in several passages (its introduction, the steps, the
example); a page that mentions the topic once has one.  Each candidate's order key is its own key plus
``fusion.page_weight`` × the keys of the next best ``fusion.page_passages`` candidates of the same document
(CombSUM over a page's top passages, Fox & Shaw 1994, with the page's best passage at full weight).  Two page-level
channels add to that key: the page's mean passage vector against the query (``fusion.page_vector_weight``) and
the share of the query's terms the page contains anywhere (``fusion.page_terms_weight``).  Only the order
changes: every hit keeps its own confidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np


def with_page_support(
    cands: list[dict], chunk_doc: list[str], key: Callable[[dict], float], weight: float, passages: int
) -> Callable[[dict], float]:
    if weight <= 0 or passages <= 0:
        return key
    by_doc: dict[str, list[float]] = defaultdict(list)
    for c in cands:
        by_doc[chunk_doc[c["i"]]].append(key(c))
    support: dict[str, list[float]] = {doc: sorted(v, reverse=True) for doc, v in by_doc.items()}

    def supported(c: dict) -> float:
        own = key(c)
        others = support[chunk_doc[c["i"]]]
        # the page's best passages other than this one (this one counted once, at full weight)
        rest = others[: passages + 1]
        if own in rest:
            rest = list(rest)
            rest.remove(own)
        return own + weight * sum(rest[:passages])

    return supported


def with_page_vector(key: Callable[[dict], float], page_relevance: dict[int, float], weight: float):
    """The order key plus ``weight`` x a page-level score of the candidate's whole page (by row): the dense
    relevance of its mean passage vector (query/relevance.py dense_relevance), or its query-term coverage
    (``page_term_coverage``).  A page about the question as a whole gains over a page with one passage that
    happens to match."""
    if weight <= 0:
        return key
    return lambda c: key(c) + weight * page_relevance[c["i"]]


def page_term_coverage(
    lexical, tokens: list[str], passage_page: np.ndarray, pages: int, term_pages: TermPages | None = None
) -> np.ndarray:
    """Per page (row of the documents table): the idf-weighted share of the query's distinct known terms found
    in any of its passages (idf as the lexical index's BM25 computes it: ln(1 + (N - df + 0.5) / (df + 0.5))).
    ``term_pages``: the same snapshot's memo of each term's pages (a long-lived process keeps one)."""
    term_pages = term_pages or TermPages(lexical, passage_page)
    out = np.zeros(max(pages, 0), dtype=np.float64)
    total = 0.0
    for t in dict.fromkeys(tok for tok in tokens if tok in lexical.vocab):
        idf, rows = term_pages.of(lexical.vocab[t])
        out[rows] += idf
        total += idf
    return out / total if total > 0 else out


class TermPages:
    """Per lexical term (column of the BM25 index): its idf and the pages (rows of the documents table) whose
    passages hold it, each worked out once (np.unique over a common term's passages is most of the coverage's
    cost); at most one entry a vocabulary term."""

    def __init__(self, lexical, passage_page: np.ndarray):
        self.lexical, self.passage_page = lexical, passage_page
        self._memo: dict[int, tuple[float, np.ndarray]] = {}

    def of(self, col: int) -> tuple[float, np.ndarray]:
        hit = self._memo.get(col)
        if hit is None:
            lex = self.lexical
            lo, hi = lex.indptr[col], lex.indptr[col + 1]
            df = hi - lo
            idf = float(np.log(1.0 + (lex.n_docs - df + 0.5) / (df + 0.5)))
            rows = self.passage_page[lex.indices[lo:hi]]
            hit = self._memo[col] = (idf, np.unique(rows[rows >= 0]))
        return hit
