"""A search over some sources of a snapshot only: what a scoped token reads (schemas/access.py ``SourceScope``).

``view(state, scope)`` is the state a scoped search runs on: the same snapshot, policy and encoder, with every
part that reads the whole library narrowed to the sources the scope allows, so the search itself (query/search.py)
runs unchanged and cannot reach a passage outside:

- the dense channel (``ScopedDense``) ranks only the allowed rows (``DenseIndex.top_within``): the best cosine,
  the match tier, the page margin and every rank come from them alone;
- the lexical channels (``ScopedLexical``, text and fields) hold only the allowed rows' postings, and their BM25
  contributions are rescaled from the whole library's idf to the scope's own (N and df counted in the scope): a
  term only the other sources use is unknown (the lexical channel does not run on it, ``unknown_term_share``
  counts it), and a passage's score does not move with how often the other sources use a term;
- the evidence a request can name or list (version components and constraints, docs version names, sources and
  their commits in ``sources`` and the manifest) holds the allowed sources' only.

What stays the whole library's: the BM25 length normalisation (the build stores each contribution with the
library's average passage length, and the passage lengths are not in the snapshot to redo it), the snapshot id and
build date, and the policy (its calibration was fitted once for the library).  Caches are per scope: each view
keeps its own shown hits (its state's memos), page terms (its lexical indexes) and docs version names (its evidence),
and the query vectors are keyed by it (query/state.py ``QueryVectors``).  The snapshot's other parts are the base's,
memos included (query/reader.py): a passage's text, terms and groups, a page's rows and vector do not depend on the
scope, and a view only ever asks for its own rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from copy import copy
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.dense import DenseIndex
from trustindex.query.lexical import LexicalIndex
from trustindex.query.reader import SnapshotData
from trustindex.query.snapshot_lexical import LexicalIndexes
from trustindex.query.state import QueryVectors, Reranker, SearchState
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.access import SourceScope
from trustindex.schemas.snapshot import source_name

VIEWS_KEPT = 32  # scoped views a state keeps (one per distinct set of sources; a few MiB of memos each)
TERMS_KEPT = 8192  # terms whose scoped postings a view keeps


def source_names(data: SnapshotData) -> list[str]:
    """Every source the snapshot names: its passages', its sources table's and its manifest's."""
    names = set(pc.unique(data.passages.chunks.table.column("source")).to_pylist()) | set(data.sources)
    names |= set(data.manifest.source_rows())
    return sorted(n for n in names if n)


def allowed_sources(state: SearchState, scope: SourceScope | None) -> frozenset[str] | None:
    """The snapshot's sources ``scope`` allows; None when it allows them all (the unscoped search)."""
    if scope is None or scope.everything:
        return None
    names = source_names(state.data)
    allowed = scope.resolve(names)
    return None if len(allowed) == len(names) else allowed


def view(state: SearchState, scope: SourceScope | None) -> SearchState:
    """``state`` itself when ``scope`` allows every source, else its view over the allowed sources (kept)."""
    allowed = allowed_sources(state, scope)
    if allowed is None:
        return state
    views = state.scoped_views
    hit = views.get(allowed)
    if hit is None:
        if len(views) >= VIEWS_KEPT:
            views.clear()  # bounded memory; a rare rebuild costs a pass over the passages' sources
        hit = views[allowed] = ScopedState(state, allowed)
    return hit


class ScopedState(SearchState):
    """``base`` over the ``allowed`` sources; the trust prior and the reranker are the base's (per passage)."""

    __slots__ = ("base", "allowed")

    def __init__(self, base: SearchState, allowed: frozenset[str]):
        rows_allowed = np.asarray(
            pc.is_in(base.data.passages.chunks.table.column("source"), value_set=pa.array(sorted(allowed), pa.string()))
            .fill_null(False)
            .to_numpy(zero_copy_only=False),
            dtype=bool,
        )
        vectors = ScopedQueryVectors(base.query_vectors, "\x1f".join(sorted(allowed)))
        super().__init__(
            scoped_data(base.data, allowed, rows_allowed),
            base.policy,
            ScopedDense(base.dense, rows_allowed),
            base.encoder,
            vectors,
        )
        self.base, self.allowed = base, allowed

    def prior(self, today: datetime) -> TrustPrior:
        return self.base.prior(today)

    def reranker(self) -> Reranker:
        return self.base.reranker()


class ScopedQueryVectors(QueryVectors):
    """The base state's query vectors, kept under this scope's key (its hits and misses are the base's counts)."""

    def __init__(self, shared: QueryVectors, key: str):
        super().__init__(shared.encoder, shared.size)
        self.shared, self.key = shared, key

    def encode(self, text: str, scope: str = "") -> np.ndarray:
        return self.shared.encode(text, self.key)


class ScopedDense(DenseIndex):
    """``base``'s dense index (its arrays, prefilter and float32 rows shared) whose ``top`` ranks the allowed rows."""

    def __init__(self, base: DenseIndex, allowed: np.ndarray):  # noqa: D107 (no DenseIndex.__init__: nothing to load)
        self.__dict__.update(base.__dict__)
        self.allowed, self.allowed_rows = allowed, np.flatnonzero(allowed)

    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        return self.top_within(q, depth, self.allowed, self.allowed_rows)


def scoped_data(base: SnapshotData, allowed: frozenset[str], rows_allowed: np.ndarray) -> SnapshotData:
    """``base`` seen through the allowed sources: the same parts (their tables, arrays and memos shared) but the
    lexical indexes and the evidence, narrowed, and the sources and the manifest of the allowed sources only."""
    scoped = copy(base)
    n_allowed = int(np.count_nonzero(rows_allowed))
    lex = base.lexical_indexes
    scoped.lexical_indexes = LexicalIndexes(
        ScopedLexical(lex.text, rows_allowed, n_allowed),
        ScopedLexical(lex.fields, rows_allowed, n_allowed) if lex.fields is not None else None,
        lex.passages,
        lex.n_pages,
    )
    scoped.sources = {n: r for n, r in base.sources.items() if n in allowed}
    scoped.manifest = copy(base.manifest)
    scoped.manifest.sources = [s for s in base.manifest.sources if source_name(s) in allowed]
    docs = base.pages.docs.table
    in_scope = pc.filter(docs.column("doc_id"), pc.is_in(docs.column("source"), pa.array(sorted(allowed))))
    scoped.evidence = base.evidence.within(set(in_scope.to_pylist()))
    return scoped


def _idf(n: int, df: int) -> float:
    """BM25's (Lucene's) idf, as bm25s computes it at build time: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


class ScopedLexical(LexicalIndex):
    """A lexical index (query/lexical.py) over the allowed rows only, each term's postings narrowed on first use:
    ``n_docs`` and ``df`` count the scope's passages, so every idf read of it (answer signals, page terms) is the
    scope's, and ``postings`` carry BM25 contributions rescaled to that idf.  The raw CSC arrays (``indptr``,
    ``indices``, ``data``) are not there on purpose: a reader of the whole library's postings fails here instead of
    reading past the scope."""

    def __init__(self, base: LexicalIndex, allowed: np.ndarray, n_allowed: int):  # noqa: D107 (nothing to load)
        self.base, self.allowed = base, allowed
        self.n_docs = n_allowed  # the N of every idf read of this index
        self.vocab: Mapping[str, int] = _ScopedVocab(self)
        self._df: dict[int, int] = {}
        self._postings: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def df(self, col: int) -> int:
        known = self._df.get(col)
        if known is None:
            if len(self._df) >= TERMS_KEPT:
                self._df.clear()
            known = self._df[col] = int(np.count_nonzero(self.allowed[self.base.postings(col)[0]]))
        return known

    def postings(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        kept = self._postings.get(col)
        if kept is None:
            rows, scores = self.base.postings(col)
            inside = self.allowed[rows]
            rows, scores = rows[inside], scores[inside]
            if rows.size:  # each contribution is idf × a term-frequency part: the idf becomes the scope's
                ratio = _idf(self.n_docs, int(rows.size)) / _idf(self.base.n_docs, self.base.df(col))
                scores = scores * np.float32(ratio)
            if len(self._postings) >= TERMS_KEPT:
                self._postings.clear()
            kept = self._postings[col] = (rows, scores)
        return kept

    def token_scores(self, tokens: list[str]) -> tuple[np.ndarray, int]:
        """As ``LexicalIndex.token_scores``: a score per row of the snapshot (0 outside the scope), and how many of
        the terms the scope's passages use."""
        vocab = self.base.vocab
        ids = [vocab[t] for t in tokens if t in self.vocab]
        out = np.zeros(self.base.n_docs, dtype=np.float32)
        for col in ids:
            rows, scores = self.postings(col)
            out[rows] += scores
        return out, len(ids)


class _ScopedVocab(Mapping[str, int]):
    """The base vocabulary's terms that some allowed passage uses (column numbers unchanged)."""

    def __init__(self, lexical: ScopedLexical):
        self.lexical = lexical

    def __getitem__(self, term: str) -> int:
        col = self.lexical.base.vocab[term]
        if not self.lexical.df(col):
            raise KeyError(term)
        return col

    def __contains__(self, term: object) -> bool:
        col = self.lexical.base.vocab.get(term) if isinstance(term, str) else None
        return col is not None and self.lexical.df(col) > 0

    def __iter__(self) -> Iterator[str]:
        return (t for t, col in self.lexical.base.vocab.items() if self.lexical.df(col) > 0)

    def __len__(self) -> int:
        return sum(1 for _ in self)
