"""What the site's links say of each page, at query time: two page-level terms of the ordering score (query/score.py).

- ``anchor``: the query's BM25 over the page's anchor texts (what other pages and the site's navigation call it;
  warehouse/page_links.py), saturated as s / (s + ``fusion.anchor_half``) like the lexical channel: a field of
  its own beside the passage's text, so a page others call "proof server" answers "proof server" even where its
  own passages say "prover" (BM25F's reasoning, Robertson, Zaragoza & Taylor 2004, with the field's score kept
  separate so a hit can show it).
- ``authority``: n / (n + ``fusion.authority_k``), n the page's inbound links from other pages of its own site:
  a query-independent prior that saturates (Craswell, Robertson, Zaragoza & Taylor 2005, "Relevance weighting for
  query independent evidence"), so the site's hub pages lead among equally relevant ones and no count of links
  lifts a page far.
- ``cited``: s / (s + ``fusion.cited_half``), s the sum over the other pages of the site whose passages among the
  question's ``fusion.cited_passages`` most relevant eligible candidates link to the page, each page's best loan
  (the citing passage's relevance x min(1, its trust / the cited candidate's trust), as support lends: issue 26).
  Query-dependent link evidence (Kleinberg's HITS and its local, query-time forms): a reference page that answers
  a question in passing links its reader to the page about it ("see Strict Mode"), so the page the question's
  best passages point at is the page about it.  Only links of the citing page's own site to another page count, and
  only from passages that may lend (no content risk, no version penalty): a page cannot cite itself up, another
  repository lends nothing, and a flagged passage's links lift nothing.  Worked out and shown only when weighted.

A snapshot built before links were indexed has no ``page_links/``: its hits show none of these terms.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.columns import row_positions
from trustindex.query.lexical import LexicalIndex
from trustindex.query.relevance import lexical_relevance
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.links import PAGE
from trustindex.schemas.snapshot import ANCHORS_DIR, INBOUND


class PageLinks:
    """A snapshot's ``page_links/`` index, one entry a documents row."""

    def __init__(self, directory: Path, pages: int, where: str, cites: Callable[[], Cites]):
        self.anchors = LexicalIndex(Path(directory) / ANCHORS_DIR)
        self.inbound = np.load(Path(directory) / INBOUND, allow_pickle=False)
        if self.anchors.n_docs != pages or self.inbound.shape != (pages,):
            raise SnapshotError(
                f"{where}: page links cover {self.anchors.n_docs} pages ({self.inbound.shape[0]} counts), "
                f"the documents table has {pages}"
            )
        self._cites = cites  # what each passage links to, worked out on first use (``cites``)

    @classmethod
    def open(cls, directory: Path, pages: int, where: str, cites: Callable[[], Cites]) -> PageLinks | None:
        return cls(directory, pages, where, cites) if (Path(directory) / ANCHORS_DIR).is_dir() else None

    @cached_property
    def cites(self) -> Cites:
        """What each passage links to, worked out on first use (only a policy that weighs ``cited`` reads it: ~60 ms
        on the real docs' 13k links, kept off every other open)."""
        return self._cites()

    def anchor(self, tokens: list[str], doc_rows: np.ndarray, half: float) -> np.ndarray:
        """Per entry of ``doc_rows`` (documents rows, -1: none), the saturated BM25 of the query's tokens over the
        page's anchor texts."""
        scores, known = self.anchors.token_scores(tokens)
        out = np.zeros(doc_rows.size, dtype=np.float64)
        if known:
            ok = doc_rows >= 0
            out[ok] = lexical_relevance(scores[doc_rows[ok]], half)
        return out

    def links_in(self, doc_rows: np.ndarray) -> np.ndarray:
        """Per entry of ``doc_rows``, the page's inbound links from other pages of its own site (0 for -1)."""
        return np.where(doc_rows >= 0, self.inbound[np.maximum(doc_rows, 0)], 0).astype(np.int64)


def authority(inbound: np.ndarray, k: float) -> np.ndarray:
    """n / (n + k): 0 with no inbound link, 0.5 at k of them, towards 1 beyond."""
    n = np.asarray(inbound, dtype=np.float64)
    return n / (n + k)


class Cites:
    """Per passage (chunks row), the pages (documents rows) its links name on its own site, other than its own page:
    compressed rows (``starts``, one more than the passages; ``pages``)."""

    def __init__(self, starts: np.ndarray, pages: np.ndarray):
        self.starts, self.pages = starts, pages

    @classmethod
    def empty(cls, passages: int) -> Cites:
        return cls(np.zeros(passages + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, links: pa.Table | None, chunk_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> Cites:
        """From the snapshot's links table: each link a passage writes to another page of its own source, once."""
        n = len(chunk_ids)
        if links is None or not links.num_rows:
            return cls.empty(n)
        own_site = pc.and_(
            pc.equal(links.column("status"), PAGE),
            pc.and_(
                pc.equal(links.column("source"), links.column("target_source")),
                pc.not_equal(links.column("doc_id"), links.column("target_doc_id")),
            ),
        )
        kept = links.filter(pc.fill_null(own_site, False))
        rows = row_positions(kept.column("chunk_id"), chunk_ids)
        targets = row_positions(kept.column("target_doc_id"), doc_ids)
        ok = (rows >= 0) & (targets >= 0)
        pairs = np.unique(rows[ok] * max(len(doc_ids), 1) + targets[ok])  # sorted by passage, each link once
        rows, targets = pairs // max(len(doc_ids), 1), pairs % max(len(doc_ids), 1)
        return cls(np.searchsorted(rows, np.arange(n + 1)).astype(np.int64), targets.astype(np.int64))

    def of_row(self, row: int) -> np.ndarray:
        return self.pages[self.starts[row] : self.starts[row + 1]]


def cited(
    cites: Cites,
    rows: np.ndarray,
    doc_rows: np.ndarray,
    rel: np.ndarray,
    trust: np.ndarray,
    lender: np.ndarray,
    passages: int,
    half: float,
) -> tuple[np.ndarray, list[list[int]]]:
    """Per candidate of a pool (``rows``: chunks rows, ``doc_rows``: their pages), s / (s + ``half``) of the loans of
    the pages citing its page, and the positions of the citing candidates (each citing page's best), best first.

    The citers are the ``passages`` most relevant candidates that may lend (``lender``, relevance above 0; ties by
    position).  A loan is the citer's relevance x min(1, its trust / the cited candidate's trust); a citing page
    lends its best loan once."""
    m = rows.size
    out = np.zeros(m, dtype=np.float64)
    citers: list[list[int]] = [[] for _ in range(m)]
    able = np.flatnonzero(lender & (rel > 0))
    if not able.size or m == 0:
        return out, citers
    top = able[np.lexsort((able, -rel[able]))][:passages]
    by_page: dict[int, list[int]] = {}
    for j, p in enumerate(doc_rows.tolist()):
        if p >= 0:
            by_page.setdefault(p, []).append(j)
    best: dict[tuple[int, int], tuple[float, int]] = {}  # (cited candidate, citing page) -> (loan, citer)
    for c in top.tolist():
        for p in cites.of_row(int(rows[c])).tolist():
            for j in by_page.get(p, ()):
                loan = float(rel[c]) * min(1.0, float(trust[c]) / max(float(trust[j]), 1e-12))
                key = (j, int(doc_rows[c]))
                if key not in best or loan > best[key][0]:
                    best[key] = (loan, c)
    total = np.zeros(m, dtype=np.float64)
    for (j, _page), (loan, c) in sorted(best.items(), key=lambda kv: (kv[0][0], -kv[1][0], kv[1][1])):
        total[j] += loan
        citers[j].append(c)
    hit = total > 0
    out[hit] = total[hit] / (total[hit] + half)
    return out, citers
