"""Passage → page aggregation: a passage's place in the order counts the other strong passages of its page.

A page that answers a question usually matches it in several passages (its introduction, the steps, the
example); a page that mentions the topic once has one.  Each candidate's order key is its own key plus
``fusion.page_weight`` × the keys of the next best ``fusion.page_passages`` candidates of the same document
(CombSUM over a page's top passages, Fox & Shaw 1994, with the page's best passage at full weight).  Only the
order changes: every hit keeps its own confidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable


def with_page_support(
    cands: list[dict], chunk_doc: list[str], key: Callable[[dict], float], weight: float, passages: int
) -> Callable[[dict], float]:
    if weight <= 0 or passages <= 0:
        return key
    by_doc: dict[str, list[float]] = defaultdict(list)
    for c in cands:
        by_doc[chunk_doc[c["i"]]].append(key(c))
    support: dict[str, list[float]] = {doc: sorted(v, reverse=True) for doc, v in by_doc.items()}

    def supported(c: dict) -> float:
        own = key(c)
        others = support[chunk_doc[c["i"]]]
        # the page's best passages other than this one (this one counted once, at full weight)
        rest = others[: passages + 1]
        if own in rest:
            rest = list(rest)
            rest.remove(own)
        return own + weight * sum(rest[:passages])

    return supported


def with_page_vector(key: Callable[[dict], float], page_relevance: dict[int, float], weight: float):
    """The order key plus ``weight`` x the relevance of the candidate's whole page (its mean passage vector's
    cosine with the query, query/relevance.py dense_relevance): a page about the question as a whole gains over a
    page with one passage that happens to match."""
    if weight <= 0:
        return key
    return lambda c: key(c) + weight * page_relevance[c["i"]]
