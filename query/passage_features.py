"""What a search reads of a snapshot's passages and pages beyond their rows: texts and their terms, identical-text
groups, pages (each document's passages, its unit mean vector, its term coverage), the chunk-id order, and whether
the docs site serves each passage's page.  Each is worked out on first use and kept; ``warm`` prepares them all for
a long-lived process.

The part of ``SnapshotData`` (query/reader.py) that a search's ranking stages read; the opening and checking of
the snapshot's files stays there, its evidence in query/evidence.py.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.columns import Columns, RowMap
from trustindex.query.copies import copy_groups, copy_rows
from trustindex.query.dense import drop_mapped_pages
from trustindex.query.lexical import LexicalIndex
from trustindex.query.pages import TermPages, page_term_coverage, pool_term_coverage, stored_page_by_page
from trustindex.query.passage_text import PassageTexts
from trustindex.query.routes import route_codes
from trustindex.schemas.lexical import tokenize

PASSAGE_TERMS_KEPT = TEXTS_KEPT = 8192
PROVENANCE_COLUMNS = ("start_line", "end_line", "heading_path", "symbol_path")  # query/response.py provenance
# Rows from which warm() leaves the provenance columns in Arrow: as Python objects they cost more memory than their
# scalar reads cost time (heading_path alone: ~160 MiB at 1M passages, against ~15 µs a read for the ten hits).
PROVENANCE_LISTS_BELOW = 200_000
# Page vectors at warm-up: the embeddings' mapped pages are dropped every so many pages (~150 MB of rows at 1M).
RELEASE_EVERY_PAGES = 50_000


class PassageFeatures:
    """The passage and page features of ``SnapshotData``, each computed once (the lazy caches below)."""

    n: int
    chunks: Columns
    chunk_ids: list[str]
    chunk_doc_row: np.ndarray
    docs: RowMap
    embeddings: np.ndarray
    lexical: LexicalIndex
    passage_texts: PassageTexts
    copies_table: pa.Table | None

    def _init_features(self) -> None:
        self._page_rows: dict[str, np.ndarray] | None = None
        self._page_row_sets: list[np.ndarray] | None = None
        self._text_groups: np.ndarray | None = None
        self._chunk_page: np.ndarray | None = None
        self._chunk_id_rank: np.ndarray | None = None
        self._page_vectors: np.ndarray | None = None
        self._term_pages: TermPages | None = None
        self._page_by_page: bool | None = None  # stored_page_by_page()
        self._route_codes: np.ndarray | None = None  # route_codes()
        self._copy_of: np.ndarray | None = None  # copy_of()
        self._groups: np.ndarray | None = None  # hit_groups()
        self._passage_terms: dict[int, frozenset[str]] = {}
        self._texts: dict[int, str] = {}

    def texts(self, rows) -> list[str]:
        """The passages' texts, the last TEXTS_KEPT asked for kept (an Arrow take of a search's ten hits from
        the text store costs more than a dict lookup)."""
        return _memoised(self._texts, [int(r) for r in rows], TEXTS_KEPT, self.passage_texts.take)

    def passage_terms(self, rows: list[int]) -> list[frozenset[str]]:
        """Each passage's distinct lexical terms (schemas/lexical.py ``tokenize`` of its text), kept for the last
        PASSAGE_TERMS_KEPT passages asked for: the answer signals read the top hits' terms on every search."""
        return _memoised(
            self._passage_terms, rows, PASSAGE_TERMS_KEPT, lambda m: [frozenset(tokenize(t)) for t in self.texts(m)]
        )

    def text_groups(self) -> np.ndarray:
        """Per row, the first row with the same text (identical passages share it): a search collapses them
        by this number instead of comparing texts (the texts are compared by digest, never held in memory)."""
        groups = self._text_groups
        if groups is None:
            first: dict[bytes | None, int] = {}
            digests = self.passage_texts.digests()
            groups = np.array([first.setdefault(t, i) for i, t in enumerate(digests)], dtype=np.int64)
            self._text_groups = groups
        return groups

    def copy_of(self) -> np.ndarray:
        """Per passage, the row of the original of another source it copies (-1: none; query/copies.py)."""
        if self._copy_of is None:
            self._copy_of = copy_rows(self.copies_table, self.chunks.table.column("chunk_id"), self.n)
        return self._copy_of

    def hit_groups(self) -> np.ndarray:
        """Per passage, the group a search collapses into one hit: identical texts, and a copy with its original."""
        if self._groups is None:
            self._groups = copy_groups(self.text_groups(), self.copy_of())
        return self._groups

    def page_rows(self) -> dict[str, np.ndarray]:
        """Per document, the rows of its passages (built on first use; a search's page-level channel reads it).
        Pages are numbered in this order (``chunk_page``)."""
        pr = self._page_rows
        if pr is None:
            pr = self._page_rows = _rows_by_value(self.chunks.table.column("doc_id"))
        return pr

    def page_row_sets(self) -> list[np.ndarray]:
        """``page_rows``' values by page number (``chunk_page``)."""
        if self._page_row_sets is None:
            self._page_row_sets = list(self.page_rows().values())
        return self._page_row_sets

    def unit_mean(self, rows: np.ndarray) -> np.ndarray:
        """The unit mean vector of some passages (a page without its withheld passages, query/score.py); zero
        for none."""
        if not rows.size:
            return np.zeros(self.embeddings.shape[1], dtype=np.float32)
        return self._unit_means([rows])[0]

    def chunk_id_rank(self) -> np.ndarray:
        """Per passage, its chunk id's place among the sorted chunk ids (a search breaks ties by chunk id)."""
        rank = self._chunk_id_rank
        if rank is None:
            ids = self.chunk_ids
            rank = np.empty(self.n, dtype=np.int64)
            rank[sorted(range(self.n), key=ids.__getitem__)] = np.arange(self.n, dtype=np.int64)
            self._chunk_id_rank = rank
        return rank

    def chunk_page(self) -> np.ndarray:
        """Per passage, the number of its page (its document's place in ``page_rows``)."""
        cp = self._chunk_page
        if cp is None:
            cp = np.empty(self.n, dtype=np.int64)
            for j, rows in enumerate(self.page_rows().values()):
                cp[rows] = j
            self._chunk_page = cp
        return cp

    def page_vectors(self, pages: np.ndarray) -> np.ndarray:
        """Each page's unit mean passage vector (the page as one vector), one row per page number of ``pages``."""
        matrix = self._page_vectors
        if matrix is not None:  # warm: every page's vector computed once
            return matrix[pages]
        rows = list(self.page_rows().values())
        return self._unit_means([rows[p] for p in pages.tolist()])

    def stored_page_by_page(self) -> bool:
        """Whether this snapshot's passages are stored page by page (query/pages.py), checked once."""
        if self._page_by_page is None:
            self._page_by_page = stored_page_by_page(self.chunk_doc_row)
        return self._page_by_page

    def route_codes(self) -> np.ndarray:
        """Per passage, its page's route status (query/routes.py: an index in schemas.page_routes.ROUTE_STATUSES),
        worked out once."""
        if self._route_codes is None:
            self._route_codes = route_codes(self.docs.table, self.chunk_doc_row)
        return self._route_codes

    def page_term_coverage(self, tokens: list[str], pages: np.ndarray) -> np.ndarray:
        """Per entry of ``pages`` (rows of the documents table), the idf-weighted share of the query's terms the page
        holds (query/pages.py): read from the candidates' pages when the snapshot stores passages page by page (every
        build does; checked once), else from every term's pages, memoised."""
        if self.stored_page_by_page():
            return pool_term_coverage(self.lexical, tokens, self.chunk_doc_row, pages)
        if self._term_pages is None:
            self._term_pages = TermPages(self.lexical, self.chunk_doc_row)
        return page_term_coverage(self.lexical, tokens, self.chunk_doc_row, len(self.docs), self._term_pages)[pages]

    def _unit_means(self, row_sets: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(row_sets), self.embeddings.shape[1]), dtype=np.float32)
        emb = np.asarray(self.embeddings)  # a plain view: np.memmap's subclass hooks cost on every gather
        for j, rows in enumerate(row_sets):
            mean = np.asarray(emb[rows], dtype=np.float32).sum(axis=0)
            out[j] = mean / max(float(np.linalg.norm(mean)), 1e-12)
            if j % RELEASE_EVERY_PAGES == RELEASE_EVERY_PAGES - 1:
                self.release_embeddings()  # a warm-up over every page would otherwise map in the whole file
        return out

    def _warm_page_vectors(self) -> None:
        """Every page's vector at once, for a long-lived process: a search reads ~100 pages', and summing their
        passages' rows each time was a quarter of a warm search's CPU (a one-shot query computes its own)."""
        if self._page_vectors is None:
            matrix = self._unit_means(list(self.page_rows().values()))
            matrix.flags.writeable = False
            self._page_vectors = matrix

    def release_embeddings(self) -> None:
        """Drop the embeddings file's pages from this process's resident memory once warm-up has read them all (the
        page vectors, the int8 prefilter): a search then reads a few hundred rows (query/dense.py)."""
        drop_mapped_pages(self.embeddings)

    def warm(self) -> None:
        """What every search reads, prepared once for a long-lived process: the passage text's temporary copy, the
        text groups, pages and chunk-id order, every page's vector and, below PROVENANCE_LISTS_BELOW rows, as Python
        lists, the columns each hit's provenance reads (a scalar read from Arrow costs ~15 µs)."""
        self.passage_texts.build()
        self.hit_groups()
        self.chunk_page()
        self.chunk_id_rank()
        self.route_codes()
        self._warm_page_vectors()
        self.stored_page_by_page()
        if self.n < PROVENANCE_LISTS_BELOW:
            for name in PROVENANCE_COLUMNS:
                if name in self.chunks.table.column_names:
                    self.chunks[name]
        pa.default_memory_pool().release_unused()  # what decoding the text and the lists left behind


def _rows_by_value(column: pa.ChunkedArray) -> dict[str, np.ndarray]:
    """Per value, the rows holding it (ascending), values in order of first appearance."""
    if column.null_count:  # not in a valid snapshot; grouped one by one as before
        lists: dict = defaultdict(list)
        for i, v in enumerate(column.to_pylist()):
            lists[v].append(i)
        return {v: np.asarray(rows, dtype=np.int64) for v, rows in lists.items()}
    if len(column) == 0:
        return {}
    enc = pc.dictionary_encode(column).combine_chunks()  # codes in order of first appearance
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(enc.dictionary)))[:-1]
    return dict(zip(enc.dictionary.to_pylist(), np.split(order, bounds), strict=True))


def _memoised(memo: dict, rows: list[int], limit: int, compute) -> list:
    """Each row's value from ``memo``, the missing ones computed together by ``compute(rows)`` and kept; the memo
    is emptied when it would pass ``limit`` (bounded memory; a rare refill costs less than an LRU's bookkeeping)."""
    got = [memo.get(r) for r in rows]
    missing = [r for r, value in zip(rows, got, strict=True) if value is None]
    if missing:
        if len(memo) + len(missing) > limit:
            memo.clear()
        fresh = dict(zip(missing, compute(missing), strict=True))
        memo.update(fresh)
        got = [fresh[r] if value is None else value for r, value in zip(rows, got, strict=True)]
    return got
