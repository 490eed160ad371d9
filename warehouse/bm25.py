"""BM25 statistics computed at build time with bm25s and saved in the snapshot.

The vocabulary is sorted so the saved files are byte-identical for the same
corpus (bm25s builds its vocabulary from a set, whose order varies between
processes).  The query side loads the matrix and never re-tokenizes the corpus.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from trustindex.schemas.lexical import TOKENIZER_ID, postings_ascending, tokenize

K1, B, METHOD = 1.5, 0.75, "lucene"
# tokens (then pairs) handled at once while the index is built: its transient memory is a few of these arrays, not
# a few corpus-long ones (at 105k passages the whole-corpus arrays put the org build ~0.3 GB higher, issue 29)
BLOCK = 1 << 20


class FlatIds(Sequence):
    """Every passage's token ids as one flat int64 array and the passages' lengths.

    Why: a list of token lists and a list of id lists for the whole corpus (~14M tokens at 92k passages) were the
    build's largest transient (~270 MiB over the rest at 82k passages, issue 29); the flat array is 8 bytes a
    token, and _vectorised_bm25 reads it as is.  Indexing a passage gives its ids (bm25s's own builder)."""

    def __init__(self, flat, lengths):
        import numpy as np

        self.flat, self.lengths = flat, lengths
        self._starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else lengths

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        start = int(self._starts[i])
        return self.flat[start : start + int(self.lengths[i])].tolist()


def build_bm25(texts: list[str], out_dir: Path) -> dict:
    """Tokenize each text and build its BM25 without keeping the tokens: ids are given in first-seen order, then
    renumbered in the sorted vocabulary's order (what corpus_ids gives: the same files)."""
    from array import array

    import numpy as np

    first_seen: dict[str, int] = {}
    flat, lengths = array("q"), array("q")
    for text in texts:
        tokens = tokenize(text)
        lengths.append(len(tokens))
        flat.extend([first_seen.setdefault(t, len(first_seen)) for t in tokens])
    vocab = {tok: i for i, tok in enumerate(sorted(first_seen.keys() | {""}))}
    renumber = np.fromiter((vocab[t] for t in first_seen), dtype=np.int64, count=len(first_seen))
    ids = FlatIds(renumber[np.frombuffer(flat, dtype=np.int64)] if flat else np.zeros(0, np.int64), np.asarray(lengths))
    del flat, first_seen
    return _build(ids, vocab, out_dir)


def build_bm25_from_tokens(tokens: list[list[str]], out_dir: Path) -> dict:
    """What build_bm25 writes, from each passage's tokens (already made by schemas/lexical.py's tokenizer)."""
    ids, vocab = corpus_ids(tokens)
    return _build(ids, vocab, out_dir)


def _build(ids: Sequence, vocab: dict[str, int], out_dir: Path) -> dict:
    # imported here (and in _vectorised_bm25): bm25s brings scipy.sparse (~0.5 s at start-up, measured in
    # docs/benchmarks.md), which a refresh that finds nothing changed, and so builds no index, never needs
    from bm25s.tokenization import Tokenized

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # after its import, which sets DEBUG; it logs every build
    retriever = _vectorised_bm25()(k1=K1, b=B, method=METHOD)
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    _postings_ascending(retriever.scores, len(ids), len(vocab))
    out_dir.mkdir(parents=True, exist_ok=True)
    retriever.save(str(out_dir), show_progress=False)
    meta = {
        "tokenizer": TOKENIZER_ID,
        "k1": K1,
        "b": B,
        "method": METHOD,
        "documents": len(ids),
        "vocabulary": len(vocab),
    }
    (out_dir / "tokenizer.json").write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")
    return meta


def corpus_ids(tokens: list[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    """Each passage's token ids and the vocabulary, sorted (with bm25s's empty token) so builds are byte-identical."""
    vocab = {tok: i for i, tok in enumerate(sorted({t for doc in tokens for t in doc} | {""}))}
    return [[vocab[t] for t in doc] for doc in tokens], vocab


@functools.cache  # one class, however many builds
def _vectorised_bm25():
    """bm25s.BM25 whose index is built with whole-corpus numpy operations instead of a Python loop per passage.

    ``build_index_from_ids`` is the override point bm25s documents for this.  The scores are bm25s's own, bit for
    bit (tests/warehouse/test_bm25_build.py compares the saved files): the same idf function on the same document
    frequencies, and the same float64 arithmetic per (passage, term) pair, cast to float32 once as bm25s stores
    them.  Only the loop moved: a refresh rebuilds the whole corpus's BM25 twice (body and fields), and on a
    ~3,600-passage corpus bm25s's per-passage Counter and arrays took half of that."""
    import bm25s
    import numpy as np
    from bm25s.scoring import _build_idf_array, _select_idf_scorer

    class VectorisedBM25(bm25s.BM25):
        def build_index_from_ids(self, unique_token_ids, corpus_token_ids, show_progress=True, leave_progress=False):
            if (
                self.method not in ("robertson", "lucene", "atire")  # bm25l/bm25+: a non-occurrence term
                or self.csc_backend != "numpy"  # bm25s's default, the one build_bm25 uses
                or not corpus_token_ids  # no passages: no mean length
            ):
                return super().build_index_from_ids(unique_token_ids, corpus_token_ids, show_progress, leave_progress)
            self.nonoccurrence_array = None  # as bm25s sets it for these methods (save() reads it)
            n_docs, n_vocab = len(corpus_token_ids), len(unique_token_ids)
            if isinstance(corpus_token_ids, FlatIds):  # build_bm25's: already one array
                lengths, flat = np.asarray(corpus_token_ids.lengths, np.int64), corpus_token_ids.flat
            else:
                lengths = np.fromiter(map(len, corpus_token_ids), dtype=np.int64, count=n_docs)
                flat = np.fromiter(
                    (t for doc in corpus_token_ids for t in doc), dtype=np.int64, count=int(lengths.sum())
                )
            doc_idx, vocab_idx, tf = _passage_terms(flat, lengths, n_vocab, self.int_dtype)
            df = np.bincount(vocab_idx, minlength=n_vocab)
            idf = _build_idf_array(
                doc_frequencies={t: int(df[t]) for t in unique_token_ids},
                n_docs=n_docs,
                compute_idf_fn=_select_idf_scorer(self.idf_method),
                dtype=self.dtype,
            )
            # bm25s per passage: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), l_avg a float64 mean, so float64
            # (passages without a token, as most pages of the anchor-text index have: no pair reads the mean)
            mean = lengths.mean() if lengths.any() else 1.0
            length_norm = self.k1 * ((1 - self.b) + self.b * lengths.astype(np.float64) / mean)
            scores = np.empty(len(tf), dtype=self.dtype)
            for i in range(0, len(tf), BLOCK):  # float64 per block: four corpus-long float64 arrays were ~0.3 GB
                tf64 = tf[i : i + BLOCK].astype(np.float64)
                part = idf[vocab_idx[i : i + BLOCK]] * (tf64 / (length_norm[doc_idx[i : i + BLOCK]] + tf64))
                scores[i : i + BLOCK] = part
            del tf
            # bm25s's _np_csc sorts the packed (term << 32 | passage) keys; the pairs are passage-major, so a stable
            # sort by term alone gives that same order without the packed keys' copy
            sorter = np.argsort(vocab_idx, kind="stable")
            data, indices = scores[sorter], doc_idx[sorter]  # scores are self.dtype already
            del sorter, scores
            indptr = np.zeros(n_vocab + 1, dtype=np.int64)
            np.cumsum(df, out=indptr[1:])
            return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}

    return VectorisedBM25


def _passage_terms(flat, lengths, n_vocab: int, int_dtype) -> tuple:
    """Each (passage, term) pair once, passage-major then term, with its count: ``np.unique`` of the passage-major
    keys ``passage * n_vocab + term``, taken a block of passages at a time.  Blocks split between passages, so
    each block's pairs follow the previous block's and the result is the whole corpus's ``np.unique``.  The outputs
    are made at their largest size (one pair per token) and cut: pages never written are never resident."""
    import numpy as np

    n_docs, n_tokens = len(lengths), int(lengths.sum())
    starts = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    docs, terms, counts = (np.empty(n_tokens, dtype=d) for d in (int_dtype, int_dtype, np.int64))
    filled = first = 0
    while first < n_docs:
        # the passages whose tokens fit in a block (at least one, however long)
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + BLOCK, side="right")) - 1)
        keys = np.repeat(np.arange(first, last, dtype=np.int64), lengths[first:last]) * n_vocab
        keys += flat[starts[first] : starts[last]]
        pairs, tf = np.unique(keys, return_counts=True)
        end = filled + len(pairs)
        docs[filled:end], terms[filled:end], counts[filled:end] = pairs // n_vocab, pairs % n_vocab, tf
        filled, first = end, last
    return docs[:filled], terms[:filled], counts[:filled]


def _postings_ascending(scores: dict, n_docs: int, n_terms: int) -> None:
    """Keep the snapshot's promise that each term's passages are ascending (schemas/lexical.py): bm25s's default CSC
    builder sorts the pairs by term, then passage, so they are; should a version not, they are sorted here."""
    if postings_ascending(scores["indices"], scores["indptr"]):
        return
    import scipy.sparse as sp

    m = sp.csc_matrix((scores["data"], scores["indices"], scores["indptr"]), shape=(n_docs, n_terms))
    m.sort_indices()
    scores["data"], scores["indices"] = m.data, m.indices
