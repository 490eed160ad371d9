"""Passage → page aggregation: a passage's place in the order counts the other strong passages of its page.

A page that answers a question usually matches it in several passages (its introduction, the steps, the
example); a page that mentions the topic once has one.  Each candidate's order key is its own key plus
``fusion.page_weight`` × the keys of the next best ``fusion.page_passages`` candidates of the same document
(CombSUM over a page's top passages, Fox & Shaw 1994, with the page's best passage at full weight).  Two page-level
channels add to that key (query/index.py): ``fusion.page_vector_weight`` × the dense relevance of the page's
mean passage vector (a page about the question as a whole gains over a page with one lucky passage) and
``fusion.page_terms_weight`` × the share of the query's terms the page contains anywhere
(``page_term_coverage``).  Only the order changes: every hit keeps its own confidence.  The keys are arrays,
one value a candidate.
"""

from __future__ import annotations

import numpy as np


def page_support(own: np.ndarray, page: np.ndarray, weight: float, passages: int) -> np.ndarray:
    """Each candidate's key ``own`` plus ``weight`` × the sum of the ``passages`` best keys of the other
    candidates of its page (``page``: one integer a page), added best first."""
    if weight <= 0 or passages <= 0 or own.size == 0:
        return own
    m = own.size
    order = np.lexsort((-own, page))  # grouped by page, each page's keys best first
    page_sorted, key_sorted = page[order], own[order]
    starts = np.flatnonzero(np.concatenate(([True], page_sorted[1:] != page_sorted[:-1])))
    sizes = np.diff(np.append(starts, m))
    first = np.repeat(starts, sizes)  # each sorted candidate's page's first position
    size = np.repeat(sizes, sizes)
    pos = np.arange(m) - first  # its place within its page
    # The page's best passages other than this one: its first passages + 1 keys without this one, the first
    # ``passages`` of what is left (one of equal keys removed is the same sum, whichever it is).
    support = np.zeros(m, dtype=np.float64)
    for j in range(min(passages + 1, int(sizes.max()))):
        take = (j < size) & (j != pos) & ((j < passages) | (pos < passages))
        support += np.where(take, key_sorted[np.minimum(first + j, m - 1)], 0.0)
    out = np.empty(m, dtype=np.float64)
    out[order] = key_sorted + weight * support
    return out


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
    lo, hi = lexical.indptr[col], lexical.indptr[col + 1]
    df = hi - lo
    return float(np.log(1.0 + (lexical.n_docs - df + 0.5) / (df + 0.5))), lexical.indices[lo:hi]


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
