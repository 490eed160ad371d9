"""Two terms of the ordering score (query/score.py) that tell the page about a question from pages that mention its
terms in passing (issue 43):

- ``page_focus``: the share of a page's passages that each hold at least ``fusion.focus_share`` of the query's
  idf-weighted distinct terms (idf as the lexical index's BM25 computes it).  A reference page of forty sections
  with one that mentions the topic scores 1/40; the page written about it, whose sections keep returning to the
  question's terms, scores most of 1.  ``page_terms`` (query/pages.py) asks whether the page holds the terms
  anywhere; this asks how much of the page is about them.  Read without the withheld passages (content risk, a
  penalised version), as the other page terms are.
- ``problem_section``: 1 when the question's wording reports a problem and the passage's own headings or its file's
  path name a section about problems (schemas/question_form.py), else 0.

Both are worked out only when their weight is above 0, and shown in a hit's page terms only then.
"""

from __future__ import annotations

import numpy as np

from trustindex.query.pages import term_postings
from trustindex.schemas.question_form import names_problem_section, reports_problem


def page_focus(d, tokens: list[str], pages: np.ndarray, page: np.ndarray, withheld: np.ndarray, share: float):
    """Per candidate (``page``: its index into ``pages``, the pool's page numbers), its page's focus."""
    lexical = d.lexical_indexes.text
    row_sets = d.pages.page_row_sets()
    kept = [row_sets[p] for p in pages.tolist()]
    if withheld.size:
        kept = [rows[~np.isin(rows, withheld)] for rows in kept]
    rows = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    cover = np.zeros(rows.size, dtype=np.float64)
    total = 0.0
    for t in dict.fromkeys(tok for tok in tokens if tok in lexical.vocab):
        idf, postings = term_postings(lexical, lexical.vocab[t])
        total += idf
        if postings.size and rows.size:
            at = np.minimum(np.searchsorted(postings, rows), postings.size - 1)
            cover += np.where(postings[at] == rows, idf, 0.0)
    sizes = np.array([r.size for r in kept], dtype=np.int64)
    if total <= 0 or not rows.size:
        return np.zeros(page.size, dtype=np.float64)
    focused = (cover >= share * total - 1e-9).astype(np.float64)
    return (_counts(focused, sizes) / np.maximum(sizes, 1))[page]


def _counts(focused: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per run of ``sizes`` (some empty: a page whose passages are all withheld), the sum of ``focused``."""
    ends = np.cumsum(sizes)
    sums = np.concatenate([[0.0], np.cumsum(focused)])
    return sums[ends] - sums[ends - sizes]


def problem_sections(d, question: str, rows: np.ndarray) -> np.ndarray:
    """Per candidate (``rows``: the pool's passages), 1.0 when the question reports a problem and the passage's
    headings or file name a section about problems, else 0.0."""
    out = np.zeros(rows.size, dtype=np.float64)
    if not reports_problem(question) or not rows.size:
        return out
    passages = d.passages
    headings = passages.chunks.take("heading_path", rows)
    for j, (row, hp) in enumerate(zip(rows.tolist(), headings, strict=True)):
        path = d.pages.document(passages.chunk_doc[row]).path
        out[j] = 1.0 if names_problem_section(hp, path) else 0.0
    return out
