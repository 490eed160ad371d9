"""The snapshot's passages (the chunks table's rows) and the copies among them: two parts of ``SnapshotData``
(query/reader.py), each built when the snapshot opens and living as long as it.

``Passages`` holds the rows and what is read per passage: the Arrow columns (query/columns.py ``Columns``), the
chunk ids, each passage's document id and documents-table row, and, each worked out on first use and kept, its
text (query/passage_text.py reads it from a temporary copy), its lexical terms, its identical-text group and its
chunk id's sort rank.  ``Copies`` holds which passage copies another source's (query/copies.py) and the groups a
search collapses into one hit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np
import pyarrow as pa

from trustindex.query.columns import Columns
from trustindex.query.copies import copy_groups, copy_rows
from trustindex.query.pages import stored_page_by_page
from trustindex.query.passage_text import TEXT_COLUMN, PassageTexts
from trustindex.schemas.lexical import tokenize

PASSAGE_TERMS_KEPT = TEXTS_KEPT = 8192
PROVENANCE_COLUMNS = ("start_line", "end_line", "heading_path", "symbol_path", "anchor")  # query/response.py
# Rows from which warm() leaves the provenance columns in Arrow: as Python objects they cost more memory than their
# scalar reads cost time (heading_path alone: ~160 MiB at 1M passages, against ~15 µs a read for the ten hits).
PROVENANCE_LISTS_BELOW = 200_000

V = TypeVar("V")


class Passages:
    """The passages of one snapshot: rows, ids, documents, texts (``chunks``: the chunks table without its text
    column, which ``passage_texts`` reads on demand; ``chunk_doc_row``: each passage's row in the documents table,
    -1 for a passage whose document is missing)."""

    def __init__(self, chunks: pa.Table, passage_texts: PassageTexts, chunk_doc_row: np.ndarray):
        self.n = chunks.num_rows
        self.passage_texts = passage_texts
        self.chunks = Columns(chunks, {TEXT_COLUMN: passage_texts})
        self.chunk_ids: list[str] = self.chunks["chunk_id"]
        self.chunk_doc: list[str] = self.chunks.shared_strings("doc_id")
        self.chunk_doc_row = chunk_doc_row
        self._texts: dict[int, str] = {}
        self._terms: dict[int, frozenset[str]] = {}
        self._text_groups: np.ndarray | None = None
        self._chunk_id_rank: np.ndarray | None = None
        self._page_by_page: bool | None = None

    def texts(self, rows: Iterable[int]) -> list[str]:
        """The passages' texts, the last TEXTS_KEPT asked for kept (an Arrow take of a search's ten hits from
        the text store costs more than a dict lookup)."""
        return _memoised(self._texts, [int(r) for r in rows], TEXTS_KEPT, self.passage_texts.take)

    def passage_terms(self, rows: list[int]) -> list[frozenset[str]]:
        """Each passage's distinct lexical terms (schemas/lexical.py ``tokenize`` of its text), kept for the last
        PASSAGE_TERMS_KEPT passages asked for: the answer signals read the top hits' terms on every search."""
        return _memoised(
            self._terms, rows, PASSAGE_TERMS_KEPT, lambda m: [frozenset(tokenize(t)) for t in self.texts(m)]
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

    def chunk_id_rank(self) -> np.ndarray:
        """Per passage, its chunk id's place among the sorted chunk ids (a search breaks ties by chunk id)."""
        rank = self._chunk_id_rank
        if rank is None:
            ids = self.chunk_ids
            rank = np.empty(self.n, dtype=np.int64)
            rank[sorted(range(self.n), key=ids.__getitem__)] = np.arange(self.n, dtype=np.int64)
            self._chunk_id_rank = rank
        return rank

    def stored_page_by_page(self) -> bool:
        """Whether this snapshot's passages are stored page by page (query/pages.py), checked once."""
        if self._page_by_page is None:
            self._page_by_page = stored_page_by_page(self.chunk_doc_row)
        return self._page_by_page

    def warm(self) -> None:
        """The text's temporary copy, the text groups, the chunk-id order and, below PROVENANCE_LISTS_BELOW rows,
        as Python lists, the columns each hit's provenance reads (a scalar read from Arrow costs ~15 µs)."""
        self.passage_texts.build()
        self.text_groups()
        self.chunk_id_rank()
        self.stored_page_by_page()
        if self.n < PROVENANCE_LISTS_BELOW:
            for name in PROVENANCE_COLUMNS:
                if name in self.chunks.table.column_names:
                    self.chunks[name]


class Copies:
    """Which passage copies another source's (``table``: the snapshot's copies table, often absent) and the groups a
    search collapses into one hit, each worked out on first use."""

    def __init__(self, table: pa.Table | None, passages: Passages):
        self.table, self.passages = table, passages
        self._copy_of: np.ndarray | None = None
        self._groups: np.ndarray | None = None

    def copy_of(self) -> np.ndarray:
        """Per passage, the row of the original of another source it copies (-1: none; query/copies.py)."""
        if self._copy_of is None:
            p = self.passages
            self._copy_of = copy_rows(self.table, p.chunks.table.column("chunk_id"), p.n)
        return self._copy_of

    def hit_groups(self) -> np.ndarray:
        """Per passage, the group a search collapses into one hit: identical texts, and a copy with its original."""
        if self._groups is None:
            self._groups = copy_groups(self.passages.text_groups(), self.copy_of())
        return self._groups


def _memoised(memo: dict[int, V], rows: list[int], limit: int, compute: Callable[[list[int]], list]) -> list:
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
