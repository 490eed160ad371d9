"""BM25 statistics computed at build time with bm25s and saved in the snapshot.

The vocabulary is sorted so the saved files are byte-identical for the same
corpus (bm25s builds its vocabulary from a set, whose order varies between
processes).  The query side loads the matrix and never re-tokenizes the corpus.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from trustindex.schemas.lexical import TOKENIZER_ID, postings_ascending, tokenize

K1, B, METHOD = 1.5, 0.75, "lucene"


def build_bm25(texts: list[str], out_dir: Path) -> dict:
    # imported here: bm25s brings scipy.sparse (~0.5 s at start-up, measured in docs/benchmarks.md), which a
    # refresh that finds nothing changed, and so builds no index, never needs
    import bm25s
    from bm25s.tokenization import Tokenized

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # after its import, which sets DEBUG; it logs every build
    tokens = [tokenize(t) for t in texts]
    vocab = {tok: i for i, tok in enumerate(sorted({t for doc in tokens for t in doc} | {""}))}
    ids = [[vocab[t] for t in doc] for doc in tokens]
    retriever = bm25s.BM25(k1=K1, b=B, method=METHOD)
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    _postings_ascending(retriever.scores, len(texts), len(vocab))
    out_dir.mkdir(parents=True, exist_ok=True)
    retriever.save(str(out_dir), show_progress=False)
    meta = {
        "tokenizer": TOKENIZER_ID,
        "k1": K1,
        "b": B,
        "method": METHOD,
        "documents": len(texts),
        "vocabulary": len(vocab),
    }
    (out_dir / "tokenizer.json").write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
    return meta


def _postings_ascending(scores: dict, n_docs: int, n_terms: int) -> None:
    """Keep the snapshot's promise that each term's passages are ascending (schemas/lexical.py): bm25s builds its CSC
    matrix with scipy from passages in order, so they are; should a version not, they are sorted here."""
    if postings_ascending(scores["indices"], scores["indptr"]):
        return
    import scipy.sparse as sp

    m = sp.csc_matrix((scores["data"], scores["indices"], scores["indptr"]), shape=(n_docs, n_terms))
    m.sort_indices()
    scores["data"], scores["indices"] = m.data, m.indices
