"""Page-level signals: what a passage's page adds to its place in the order (query/score.py).

A page that answers a question usually matches it in several passages (its introduction, the steps, the
example); a page that mentions the topic once has one.  query/score.py adds three page terms to a passage's
relevance: ``support`` from its page's other strong candidates (CombSUM over a page's top passages, Fox & Shaw
1994, eligible lenders only), the dense relevance of the page's mean passage vector, and the share of the query's
terms the page contains anywhere (this module's ``page_term_coverage``).
"""

from __future__ import annotations

import numpy as np


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


def term_postings(lexical, col: int) -> tuple[float, np.ndarray]:
    """A lexical term's (column of the BM25 index) idf, as the index's BM25 computes it
    (ln(1 + (N - df + 0.5) / (df + 0.5))), and its passages."""
    df = lexical.df(col)
    return float(np.log(1.0 + (lexical.n_docs - df + 0.5) / (df + 0.5))), lexical.postings(col)[0]


def pool_term_coverage(lexical, tokens: list[str], passage_page: np.ndarray, pages: np.ndarray) -> np.ndarray:
    """``page_term_coverage(...)[pages]``, the same values, for a snapshot whose passages are stored page by page
    (``passage_page`` non-decreasing and ≥ 0; each term's passages ascending, as bm25s writes its CSC index): a page
    holds a term when one of the term's passages falls in the page's run of rows, two binary searches a page and a
    term.  The whole-corpus version sorted each common term's passages into pages (``TermPages``): at 1M passages
    ~45 ms a search and a memo that grew with every new term; this reads only the candidates' pages."""
    uniq, inverse = np.unique(pages, return_inverse=True)
    starts = np.searchsorted(passage_page, uniq, "left")
    ends = np.searchsorted(passage_page, uniq, "right")
    out = np.zeros(uniq.size, dtype=np.float64)
    total = 0.0
    for t in dict.fromkeys(tok for tok in tokens if tok in lexical.vocab):
        idf, postings = term_postings(lexical, lexical.vocab[t])
        out[np.searchsorted(postings, starts) < np.searchsorted(postings, ends)] += idf
        total += idf
    return (out / total if total > 0 else out)[inverse]


def stored_page_by_page(passage_page: np.ndarray) -> bool:
    """Whether ``pool_term_coverage`` applies: passages grouped by page (``passage_page`` non-decreasing) and none
    without a page.  Each term's passages are ascending by the snapshot's own contract (schemas/lexical.py
    ``postings_ascending``, kept by the build): checking it here would read the whole BM25 index into memory."""
    return not passage_page.size or (passage_page[0] >= 0 and not bool(np.any(passage_page[1:] < passage_page[:-1])))


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
            idf, postings = term_postings(self.lexical, col)
            rows = self.passage_page[postings]
            hit = self._memo[col] = (idf, np.unique(rows[rows >= 0]))
        return hit
