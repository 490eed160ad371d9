"""The snapshot's lexical indexes: a part of ``SnapshotData`` (query/reader.py), opened with the snapshot and living
as long as it (a scoped view, query/scope.py, has its own over the allowed rows).

``text`` is the BM25 index of the passages' text, ``fields`` the one of their titles, headings and file names (None
in a snapshot built before it); both were checked against the chunks table's rows when the snapshot opened.  The
page term coverage a search reads (query/pages.py) is worked out from them, its per-term pages kept here on first
use, so a scoped view's coverage is its own.
"""

from __future__ import annotations

import numpy as np

from trustindex.query.lexical import LexicalIndex
from trustindex.query.pages import TermPages, page_term_coverage, pool_term_coverage
from trustindex.query.snapshot_passages import Passages


class LexicalIndexes:
    """The text and field BM25 indexes of one snapshot (or one scoped view of it) and the page terms read from them."""

    def __init__(self, text: LexicalIndex, fields: LexicalIndex | None, passages: Passages, n_pages: int):
        self.text, self.fields = text, fields
        self.passages, self.n_pages = passages, n_pages
        self._term_pages: TermPages | None = None

    def page_term_coverage(self, tokens: list[str], pages: np.ndarray) -> np.ndarray:
        """Per entry of ``pages`` (rows of the documents table), the idf-weighted share of the query's terms the page
        holds (query/pages.py): read from the candidates' pages when the snapshot stores passages page by page (every
        build does; checked once), else from every term's pages, memoised."""
        doc_row = self.passages.chunk_doc_row
        if self.passages.stored_page_by_page():
            return pool_term_coverage(self.text, tokens, doc_row, pages)
        if self._term_pages is None:
            self._term_pages = TermPages(self.text, doc_row)
        return page_term_coverage(self.text, tokens, doc_row, self.n_pages, self._term_pages)[pages]
