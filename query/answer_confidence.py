"""Answer confidence: P(the top hit's page is judged relevant), from signals the search already has.

The signals (vocabulary: schemas/answer_signals.py) are measured once per search from its own channels: the
dense ranking (best cosine; its margin over the next distinct page), the lexical scores (their saturated best;
whether they put the same page first), the top hits' text (how much of the query's IDF-weighted terms they
contain) and the snapshot's vocabulary (how much of the query's IDF weight no passage uses).  The probability is
a logistic regression over them with the policy's coefficients, then the policy's isotonic map when it has one
(both fitted by ``trustindex calibrate``, calibration/fit.py); the match tier follows the probability.  A policy
with no model keeps the cosine tiers and reports no probability.

Pure numpy on purpose: this runs on every query of the base install (no scikit-learn there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from trustindex.query.relevance import lexical_relevance
from trustindex.schemas.answer_signals import (
    BEST_COSINE,
    CHANNELS_AGREE,
    LEXICAL_STRENGTH,
    PAGE_MARGIN,
    TERM_COVERAGE,
    TOP_PAGE_LEXICAL_RR,
    UNCALIBRATED,
    UNKNOWN_TERM_SHARE,
)
from trustindex.schemas.policy import Policy

DUPLICATE_COSINE = 1e-5  # cosines this close are the same text embedded twice
COVERAGE_HITS = 3  # term coverage reads the top 3 hits: an answer often spans a page's neighbouring passages


@dataclass(frozen=True)
class ChannelOutcome:
    """What one search's channels and ranking found, for the user's own query (not its extra phrasings)."""

    dense_rows: np.ndarray  # the dense channel's candidates, best first
    dense_cosines: np.ndarray  # their raw cosines, descending
    lexical_rows: np.ndarray | None  # the lexical channel's candidates, best first (None: no known query term)
    lexical_scores: np.ndarray  # BM25 of every passage
    top_rows: list[int]  # the final ranking's first hits
    tokens: list[str]  # the query's lexical terms (query/search_query.py)


def measure(data, policy: Policy, out: ChannelOutcome) -> dict[str, float]:
    """Every signal of schemas/answer_signals.py for one search."""
    page = data.passages.chunk_doc
    best = float(out.dense_cosines[0]) if out.dense_cosines.size else 0.0
    margin = 0.0
    if out.dense_rows.size:
        first = page[int(out.dense_rows[0])]
        for i, c in zip(out.dense_rows.tolist(), out.dense_cosines.tolist(), strict=True):
            # an identical passage on another page (a versioned copy) is the same answer, not a competitor
            if page[i] != first and best - float(c) > DUPLICATE_COSINE:
                margin = best - float(c)
                break
        else:
            margin = best  # one page holds every candidate: nothing competes with it
    lex = out.lexical_rows if out.lexical_rows is not None and out.lexical_rows.size else None
    lex_first = page[int(lex[0])] if lex is not None else None
    agree = float(out.dense_rows.size > 0 and lex_first is not None and page[int(out.dense_rows[0])] == lex_first)
    best_bm25 = float(out.lexical_scores[int(lex[0])]) if lex is not None else 0.0
    top_page_rr = 0.0
    if lex is not None and out.top_rows:
        chunk_page = data.pages.chunk_page()
        on_top_page = np.flatnonzero(chunk_page[lex] == chunk_page[out.top_rows[0]])
        top_page_rr = 1.0 / (1 + int(on_top_page[0])) if on_top_page.size else 0.0
    weights = term_weights(data.lexical_indexes.text, out.tokens)
    return {
        BEST_COSINE: best,
        PAGE_MARGIN: margin,
        TERM_COVERAGE: term_coverage(weights, set().union(*data.passages.passage_terms(out.top_rows[:COVERAGE_HITS]))),
        CHANNELS_AGREE: agree,
        LEXICAL_STRENGTH: float(lexical_relevance(best_bm25, policy.relevance.bm25_half)),
        TOP_PAGE_LEXICAL_RR: top_page_rr,
        UNKNOWN_TERM_SHARE: unknown_term_share(weights),
    }


class TermWeight(NamedTuple):  # a tuple, not a dataclass: a search builds one per query term
    """One distinct query term: its BM25 (Lucene) idf in the snapshot, and whether any passage uses it."""

    term: str
    idf: float
    known: bool


def term_weights(lexical, tokens: list[str]) -> list[TermWeight]:
    """The query's distinct terms (``tokens``, in order) weighted by idf from the snapshot's document frequencies; a
    term the corpus never uses has the largest idf."""
    n = lexical.n_docs
    out = []
    for t in dict.fromkeys(tokens):
        col = lexical.vocab.get(t)
        df = lexical.df(col) if col is not None else 0
        out.append(TermWeight(t, math.log(1.0 + (n - df + 0.5) / (df + 0.5)), df > 0))
    return out


def term_coverage(weights: list[TermWeight], seen: set[str] | frozenset[str]) -> float:
    """Σ idf(term in ``seen``, the top hits' terms) / Σ idf(term) over the query's distinct terms.

    An unknown term is contained nowhere, so a query about something the library lacks scores low.
    """
    total = held = 0.0
    for term, idf, _known in weights:  # in query order, as the sums always were
        total += idf
        held += idf if term in seen else 0.0
    return held / total if total > 0 else 0.0


def unknown_term_share(weights: list[TermWeight]) -> float:
    """Σ idf(term no passage uses) / Σ idf(term) over the query's distinct terms; 0 when it has none.

    It reads the query against the snapshot's vocabulary, never the hits: a question asked in another tool's words
    is off the library's subject however close its nearest passage, while a question in the library's own words
    scores 0 even when no single passage answers it.  Unknown, not merely rare: rare terms are what identifier and
    error-message queries are made of.
    """
    total = unknown = 0.0
    for _term, idf, known in weights:
        total += idf
        unknown += 0.0 if known else idf
    return unknown / total if total > 0 else 0.0


# A fit on a few hundred judged queries cannot support a probability nearer certainty than this: a printed
# "1.00" would be a fake 100%, and "0.00" a claim that no answer could ever be right.
PROBABILITY_BOUNDS = (0.01, 0.99)


def probability(policy: Policy, signals: dict[str, float]) -> float | None:
    """answer_confidence under the policy's calibration, within PROBABILITY_BOUNDS; None when the policy has none."""
    m = policy.match
    if policy.calibration_status == UNCALIBRATED:
        return None
    z = m.intercept + sum(w * signals[f] for f, w in zip(m.features, m.weights, strict=True))
    p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
    if m.isotonic_x:
        p = float(np.interp(p, m.isotonic_x, m.isotonic_y))
    return min(max(p, PROBABILITY_BOUNDS[0]), PROBABILITY_BOUNDS[1])


def match_tier(policy: Policy, answer: float | None, best_cosine: float) -> tuple[str, float]:
    """The tier and its display ceiling: from the probability when calibrated, else from the best cosine."""
    m = policy.match
    if answer is None:
        value, high, mid = best_cosine, m.high_threshold, m.mid_threshold
    else:
        value, high, mid = answer, m.high_probability, m.mid_probability
    if value >= high:
        return "high", m.high_ceiling
    if value >= mid:
        return "mid", m.mid_ceiling
    return "low", m.low_ceiling
