"""The lexical tokenizer: one definition for the BM25 index and its queries.

The build tokenizes the corpus with it and the query side tokenizes queries
with it; if the two ever differed, BM25 would silently miss terms, so it lives
with the contracts.  Lowercase word pieces (identifiers keep ``_``; camelCase
and dotted names also yield their parts), English stopwords dropped, Snowball
English stemming (PyStemmer, as bm25s uses).
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

TOKENIZER_ID = "trustindex-lexical-1"
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[.'][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have how i if in into is it its of on or
that the their then there these this to was were what when where which who will with you your can do does
not no so than too very we our they them he she his her""".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


# An identifier as a user types it: CamelCase with an inner capital (deployContract, CallTxFailedError),
# snake_case or SCREAMING_CASE (ERR_UNSUPPORTED_DIR_IMPORT), a dotted name (midnight.js), letters with digits
# (sha256, v8), or a bare number of 3+ digits (an error code such as 1010).
_IDENTIFIER = re.compile(r"[A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*|\w*_\w+|\w+(?:\.\w+)+|[A-Za-z]+\d\w*|\d{3,}")


def identifier_tokens(text: str) -> list[str]:
    """The whole-word tokens of the identifiers in ``text`` (each identifier's own token, not its parts)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        if _IDENTIFIER.fullmatch(word):
            tokens = _WORD_TOKENS.get(word)
            tokens = tokens if tokens is not None else _word_tokens(word)
            if tokens and tokens[0] not in out:
                out.append(tokens[0])
    return out


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text):
        tokens = _WORD_TOKENS.get(word)
        out.extend(tokens if tokens is not None else _word_tokens(word))
    return out


# A word's tokens depend on the word alone, and words repeat (Zipf): memoised, a corpus
# tokenizes ~4× faster, which is most of a BM25 rebuild (bench/bench_refresh.py).
_WORD_TOKENS: dict[str, tuple[str, ...]] = {}
_WORD_TOKENS_MAX = 500_000
_UPPER = re.compile(r"[A-Z]")


def _word_tokens(word: str) -> tuple[str, ...]:
    stem = _stemmer().stemWord
    parts = [word]
    if "." in word or "_" in word or _UPPER.search(word, 1):  # _WORD matches ASCII only
        parts += [p for p in re.split(r"[._']", word) if p]
        parts += [p for p in _CAMEL.findall(word) if p != word]
    out = []
    for p in dict.fromkeys(parts):
        low = p.lower()
        if low in STOPWORDS or len(low) > 64:
            continue
        out.append(stem(low))
    if len(_WORD_TOKENS) >= _WORD_TOKENS_MAX:
        _WORD_TOKENS.clear()  # bounded memory; a rare full refill costs less than an LRU's bookkeeping
    tokens = _WORD_TOKENS[word] = tuple(out)
    return tokens


def postings_ascending(indices, indptr, block: int = 1 << 22) -> bool:
    """Whether every term's passages (one column of a CSC matrix: ``indices[indptr[t]:indptr[t + 1]]``) are in
    ascending order, as the snapshot's BM25 files promise (the query side reads a page's share of a term by binary
    search, query/pages.py).  Blockwise, so the temporary memory stays bounded at any size."""
    import numpy as np

    column_starts = np.asarray(indptr, dtype=np.int64)
    for s in range(0, max(len(indices) - 1, 0), block):
        part = np.asarray(indices[s : s + block + 1], dtype=np.int64)
        drops = np.flatnonzero(part[1:] < part[:-1]) + s + 1  # a descent is only allowed where a term starts
        if drops.size and not np.isin(drops, column_starts).all():
            return False
    return True
