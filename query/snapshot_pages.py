"""The snapshot's pages and vectors: two parts of ``SnapshotData`` (query/reader.py), each built when the snapshot
opens and living as long as it.

``Pages`` holds the documents and attribution tables (Arrow, query/columns.py ``RowMap``) and, each worked out on
first use and kept, a document's row and its attribution typed (``DocumentRow``, ``AttributionRow``: read once, then
by field), each document's passages (pages are numbered in their order), each passage's page number and
whether the docs site serves its page.  ``Vectors`` holds the memory-mapped passage embeddings and what is derived
from them: a set of passages' unit mean vector and every page's, prepared at warm-up for a long-lived process.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.columns import RowMap
from trustindex.query.dense import drop_mapped_pages
from trustindex.query.evidence_rows import StoredRow
from trustindex.query.page_languages import PageLanguages
from trustindex.query.routes import route_codes
from trustindex.query.snapshot_passages import Passages
from trustindex.schemas.language import load_language_model

# Page vectors at warm-up: the embeddings' mapped pages are dropped every so many pages (~150 MB of rows at 1M).
RELEASE_EVERY_PAGES = 50_000


@dataclass(frozen=True, slots=True)
class DocumentRow(StoredRow):
    """What a hit and the passage listing read of a document: a row of the documents table (schemas/tables.py
    ``DOCUMENTS``; a column a snapshot predates reads None)."""

    doc_id: str
    source: str
    repo: str
    commit: str
    path: str
    kind: str | None
    url: str | None
    page_url: str | None  # "" when the source has no site
    part_of: str | None  # "" when the page is no partial
    last_modified: Any  # timestamps as stored (query/trust_factors/base.py ``iso`` writes them)
    last_substantive_change: Any
    last_substantive_commit: str | None
    page_kind: str | None
    page_kind_reason: str | None
    language: str | None  # of its prose; "" none (extractors/page_language.py)


@dataclass(frozen=True, slots=True)
class AttributionRow(StoredRow):
    """The publisher a document is attributed to: a row of the attribution table (``ATTRIBUTION``)."""

    doc_id: str
    publisher: str | None
    publisher_name: str | None
    tier: str
    origin: str | None
    author_name: str | None
    author_publisher: str | None


class Pages:
    """The documents of one snapshot (``docs``, ``attribution``: by doc id) and its passages grouped by page."""

    def __init__(self, docs: RowMap, attribution: RowMap, passages: Passages):
        self.docs, self.attribution, self.passages = docs, attribution, passages
        self._documents: dict[str, DocumentRow] = {}
        self._attributions: dict[str, AttributionRow | None] = {}
        self._page_rows: dict[str, np.ndarray] | None = None
        self._page_row_sets: list[np.ndarray] | None = None
        self._chunk_page: np.ndarray | None = None
        self._route_codes: np.ndarray | None = None
        self._cited_page: np.ndarray | None = None
        self._languages: PageLanguages | None = None

    def document(self, doc_id: str) -> DocumentRow:
        """A document's row, typed (KeyError for an unknown id)."""
        row = self._documents.get(doc_id)
        if row is None:
            row = self._documents[doc_id] = DocumentRow.of(self.docs.read(doc_id))
        return row

    def attribution_of(self, doc_id: str) -> AttributionRow | None:
        """A document's attribution, typed (None: the operator attributes it to no publisher)."""
        if doc_id not in self._attributions:
            known = doc_id in self.attribution
            self._attributions[doc_id] = AttributionRow.of(self.attribution.read(doc_id)) if known else None
        return self._attributions[doc_id]

    def page_rows(self) -> dict[str, np.ndarray]:
        """Per document, the rows of its passages (a search's page-level channel reads it).  Pages are numbered in
        this order (``chunk_page``)."""
        pr = self._page_rows
        if pr is None:
            pr = self._page_rows = _rows_by_value(self.passages.chunks.table.column("doc_id"))
        return pr

    def page_row_sets(self) -> list[np.ndarray]:
        """``page_rows``' values by page number (``chunk_page``)."""
        if self._page_row_sets is None:
            self._page_row_sets = list(self.page_rows().values())
        return self._page_row_sets

    def chunk_page(self) -> np.ndarray:
        """Per passage, the number of its page (its document's place in ``page_rows``)."""
        cp = self._chunk_page
        if cp is None:
            cp = np.empty(self.passages.n, dtype=np.int64)
            for j, rows in enumerate(self.page_rows().values()):
                cp[rows] = j
            self._chunk_page = cp
        return cp

    def route_codes(self) -> np.ndarray:
        """Per passage, its page's route status (query/routes.py: an index in schemas.page_routes.ROUTE_STATUSES),
        worked out once."""
        if self._route_codes is None:
            self._route_codes = route_codes(self.docs.table, self.passages.chunk_doc_row)
        return self._route_codes

    def cited_page(self) -> np.ndarray:
        """Per passage, the documents-table row of the page it is cited at: its own document's, or for a partial an
        importing page renders (``part_of``, same source), that page's (a search shows one hit per cited page)."""
        if self._cited_page is None:
            t = self.docs.table
            keys = list(zip(t.column("source").to_pylist(), t.column("path").to_pylist(), strict=True))
            row_of = {k: r for r, k in enumerate(keys)}
            part_of = t.column("part_of").to_pylist() if "part_of" in t.column_names else [None] * len(keys)
            pairs = enumerate(zip(keys, part_of, strict=True))
            cited = [row_of.get((src, p), r) if p else r for r, ((src, _), p) in pairs]
            # chunk_doc_row's len(docs) stands for a passage without a document (query/routes.py)
            self._cited_page = np.array([*cited, len(keys)], dtype=np.int64)[self.passages.chunk_doc_row]
        return self._cited_page

    def languages(self) -> PageLanguages:
        """Each page's language and whether it is another than its source's (query/page_languages.py)."""
        if self._languages is None:
            self._languages = PageLanguages.of(self.docs.table)
        return self._languages

    def warm(self) -> None:
        self.chunk_page()
        self.route_codes()
        self.cited_page()
        if self.languages().question_languages:  # its first question would load the language model (~1 s)
            load_language_model()


class Vectors:
    """The passages' embeddings (memory-mapped, one row per passage) and the page vectors derived from them."""

    def __init__(self, embeddings: np.ndarray, pages: Pages):
        self.embeddings, self.pages = embeddings, pages
        self._page_vectors: np.ndarray | None = None

    def unit_mean(self, rows: np.ndarray) -> np.ndarray:
        """The unit mean vector of some passages (a page without its withheld passages, query/score.py); zero
        for none."""
        if not rows.size:
            return np.zeros(self.embeddings.shape[1], dtype=np.float32)
        return self._unit_means([rows])[0]

    def page_vectors(self, pages: np.ndarray) -> np.ndarray:
        """Each page's unit mean passage vector (the page as one vector), one row per page number of ``pages``."""
        matrix = self._page_vectors
        if matrix is not None:  # warm: every page's vector computed once
            return matrix[pages]
        rows = self.pages.page_row_sets()
        return self._unit_means([rows[p] for p in pages.tolist()])

    def _unit_means(self, row_sets: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(row_sets), self.embeddings.shape[1]), dtype=np.float32)
        emb = np.asarray(self.embeddings)  # a plain view: np.memmap's subclass hooks cost on every gather
        for j, rows in enumerate(row_sets):
            mean = np.asarray(emb[rows], dtype=np.float32).sum(axis=0)
            out[j] = mean / max(float(np.linalg.norm(mean)), 1e-12)
            if j % RELEASE_EVERY_PAGES == RELEASE_EVERY_PAGES - 1:
                self.release()  # a warm-up over every page would otherwise map in the whole file
        return out

    def warm(self) -> None:
        """Every page's vector at once, for a long-lived process: a search reads ~100 pages', and summing their
        passages' rows each time was a quarter of a warm search's CPU (a one-shot query computes its own)."""
        if self._page_vectors is None:
            matrix = self._unit_means(self.pages.page_row_sets())
            matrix.flags.writeable = False
            self._page_vectors = matrix

    def release(self) -> None:
        """Drop the embeddings file's pages from this process's resident memory once warm-up has read them all (the
        page vectors, the int8 prefilter): a search then reads a few hundred rows (query/dense.py)."""
        drop_mapped_pages(self.embeddings)


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
