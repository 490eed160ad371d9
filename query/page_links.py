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

A snapshot built before links were indexed has no ``page_links/``: its hits show neither term.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trustindex.query.lexical import LexicalIndex
from trustindex.query.relevance import lexical_relevance
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import ANCHORS_DIR, INBOUND


class PageLinks:
    """A snapshot's ``page_links/`` index, one entry a documents row."""

    def __init__(self, directory: Path, pages: int, where: str):
        self.anchors = LexicalIndex(Path(directory) / ANCHORS_DIR)
        self.inbound = np.load(Path(directory) / INBOUND, allow_pickle=False)
        if self.anchors.n_docs != pages or self.inbound.shape != (pages,):
            raise SnapshotError(
                f"{where}: page links cover {self.anchors.n_docs} pages ({self.inbound.shape[0]} counts), "
                f"the documents table has {pages}"
            )

    @classmethod
    def open(cls, directory: Path, pages: int, where: str) -> PageLinks | None:
        return cls(directory, pages, where) if (Path(directory) / ANCHORS_DIR).is_dir() else None

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
