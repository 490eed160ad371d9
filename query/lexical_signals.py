"""The lexical signals of one query: field-aware BM25 and exact identifiers.

- Field-aware scoring: a passage's BM25 over its text plus ``relevance.field_weight`` × its BM25 over its fields
  (page title, heading path, symbol, file name: ``warehouse.build.field_input``), so a page about a term beats a
  passage that mentions it (a simplification of BM25F, Robertson, Zaragoza & Taylor 2004, which sums per-field
  scores rather than per-field term frequencies).
- Identifiers: the query's CamelCase/snake_case names, dotted names and error codes
  (``schemas.lexical.identifier_tokens``) scored by their whole-word token alone (text + fields), so
  ``CallTxFailedError`` is not diluted into ``call``, ``tx``, ``failed`` and ``error``.  Its own ranking in the
  fusion and its own share of relevance; ``None`` when the query names no identifier the corpus knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from trustindex.schemas.policy import Policy

if TYPE_CHECKING:
    from trustindex.query.search_query import Words


@dataclass(frozen=True)
class LexicalSignals:
    scores: np.ndarray  # text BM25 + field_weight × field BM25, per passage
    nterms: int  # query terms the corpus knows (0: the lexical channel did not run)
    identifier: np.ndarray | None  # BM25 of the identifiers' own tokens, per passage


def lexical_signals(data, words: Words, policy: Policy) -> LexicalSignals:
    """The lexical channel of one wording (query/search_query.py ``Words``: its tokens and identifiers, read once)."""
    r = policy.relevance
    tokens = words.tokens
    scores, nterms = data.lexical.token_scores(tokens)
    fields = data.field_lexical if r.field_weight > 0 else None
    if fields is not None and nterms:
        scores = scores + np.float32(r.field_weight) * fields.token_scores(tokens)[0]
    identifier = None
    ids = words.identifiers if r.identifier_weight > 0 else []
    if ids:
        ident, known = data.lexical.token_scores(ids)
        if known:
            if fields is not None:
                ident = ident + np.float32(r.field_weight) * fields.token_scores(ids)[0]
            identifier = ident
    return LexicalSignals(scores, nterms, identifier)
