"""The lexical channel: BM25 scores from the statistics saved at build time.

bm25s precomputes every (token, document) BM25 contribution into a CSC matrix
(one column per vocabulary token), so a query's score for a document is the sum
of its tokens' columns: Lucene's BM25 variant, idf = ln(1 + (N - df + 0.5) /
(df + 0.5)) (Kamphuis et al., 2020, "Which BM25 do you mean?").  Reading the
arrays with numpy avoids importing bm25s/scipy on the serving path; a parity
test checks the scores equal bm25s's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.lexical import TOKENIZER_ID, tokenize


class LexicalIndex:
    def __init__(self, directory: Path):
        meta = json.loads((directory / "tokenizer.json").read_text())
        if meta.get("tokenizer") != TOKENIZER_ID:
            raise SnapshotError(
                f"{directory}: BM25 index was built with tokenizer {meta.get('tokenizer')!r}, "
                f"this reader uses {TOKENIZER_ID!r}"
            )
        self.n_docs = int(meta["documents"])
        # Plain ndarray views of the memory maps: np.memmap's subclass hooks cost microseconds per slice, which
        # is most of a query's time on small corpora.  indptr (one entry a term) is small: read it into memory.
        self.data = np.asarray(np.load(directory / "data.csc.index.npy", mmap_mode="r"))
        self.indices = np.asarray(np.load(directory / "indices.csc.index.npy", mmap_mode="r"))
        self.indptr = np.load(directory / "indptr.csc.index.npy").tolist()
        self.vocab: Mapping[str, int] = json.loads((directory / "vocab.index.json").read_text())

    def df(self, col: int) -> int:
        """How many passages hold the term of column ``col`` (its document frequency)."""
        return self.indptr[col + 1] - self.indptr[col]

    def postings(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's passages (ascending) and its BM25 contribution to each."""
        lo, hi = self.indptr[col], self.indptr[col + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def query_ids(self, text: str) -> list[int]:
        return [self.vocab[t] for t in tokenize(text) if t in self.vocab]

    def scores(self, text: str) -> tuple[np.ndarray, int]:
        """BM25 score of every document, and how many query terms the corpus knows."""
        return self.token_scores(tokenize(text))

    def token_scores(self, tokens: list[str]) -> tuple[np.ndarray, int]:
        """BM25 score of every document for already tokenized terms, and how many of them the corpus knows."""
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        out = np.zeros(self.n_docs, dtype=np.float32)
        for t in ids:
            lo, hi = self.indptr[t], self.indptr[t + 1]
            # A CSC column lists each document once, so a plain fancy-index add is exact (np.add.at, which
            # bm25s uses, is only needed for repeated indices and is ~3x slower).  Per-term float32 adds in
            # query order: the same sums as bm25s, bit for bit.
            out[self.indices[lo:hi]] += self.data[lo:hi]
        return out, len(ids)
