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
STOPWORDS = frozenset("""a an and are as at be but by for from has have how i if in into is it its of on or
that the their then there these this to was were what when where which who will with you your can do does
not no so than too very we our they them he she his her""".split())


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    stem = _stemmer().stemWord
    out: list[str] = []
    for m in _WORD.finditer(text):
        word = m.group(0)
        parts = [word]
        if "." in word or "_" in word or any(c.isupper() for c in word[1:]):
            parts += [p for p in re.split(r"[._']", word) if p]
            parts += [p for p in _CAMEL.findall(word) if p != word]
        for p in dict.fromkeys(parts):
            low = p.lower()
            if low in STOPWORDS or len(low) > 64:
                continue
            out.append(stem(low))
    return out
