"""unknown_term_share, the answer signal that reads the query against the snapshot's vocabulary (is it about this
library at all?), on small generated passages indexed by the build's own BM25 writer; and calibrations written
before the signal existed still serve the same probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trustindex.calibration.fit import fit
from trustindex.query.answer_confidence import probability, term_coverage, term_weights, unknown_term_share
from trustindex.query.lexical import LexicalIndex
from trustindex.schemas.answer_signals import (
    BEST_COSINE,
    SIGNALS,
    TERM_COVERAGE,
    UNKNOWN_TERM_SHARE,
)
from trustindex.schemas.lexical import tokenize
from trustindex.schemas.policy import Policy
from trustindex.warehouse.bm25 import build_bm25

# A toy library about shielded tokens: "ledger" is in every passage, "nullifier" in one.
PASSAGES = [
    "The ledger records every shielded token transfer.",
    "A shielded transfer spends a coin and publishes its nullifier on the ledger.",
    "Wallets scan the ledger for coins they can spend.",
    "Proof servers turn ledger transactions into zero-knowledge proofs.",
]


@pytest.fixture(scope="module")
def lexical(tmp_path_factory) -> LexicalIndex:
    d = tmp_path_factory.mktemp("vocabulary")
    build_bm25(PASSAGES, d)
    return LexicalIndex(d)


def share(lexical: LexicalIndex, query: str) -> float:
    return unknown_term_share(term_weights(lexical, tokenize(query)))


def test_a_query_in_the_library_s_words_has_no_unknown_share(lexical):
    assert share(lexical, "how do wallets spend shielded coins on the ledger") == 0.0
    # rare is not unknown: a term one passage uses (as identifiers and error codes are) counts as the library's
    assert share(lexical, "nullifier") == 0.0


def test_a_query_in_another_subject_s_words_is_all_unknown(lexical):
    assert share(lexical, "kubernetes pod eviction") == 1.0
    assert share(lexical, "") == 0.0  # no terms: nothing says the query is elsewhere


def test_the_share_weighs_each_distinct_term_by_its_idf(lexical):
    n = len(PASSAGES)

    def idf(df: int) -> float:
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    # "ledger" is in all 4 passages (idf small), "pizza" in none (idf largest): the unknown term dominates
    expected = idf(0) / (idf(0) + idf(4))
    assert share(lexical, "ledger pizza") == pytest.approx(expected)
    assert share(lexical, "ledger ledger pizza pizza") == pytest.approx(expected)  # each term once
    assert share(lexical, "nullifier pizza") == pytest.approx(idf(0) / (idf(0) + idf(1)))
    assert share(lexical, "nullifier pizza") < share(lexical, "ledger pizza") < 1.0


def test_term_coverage_reads_the_same_weights(lexical):
    weights = term_weights(lexical, tokenize("shielded nullifier pizza"))
    assert [w.known for w in weights] == [True, True, False]
    seen = set(tokenize(PASSAGES[1]))
    covered = sum(w.idf for w in weights if w.known)
    assert term_coverage(weights, seen) == pytest.approx(covered / sum(w.idf for w in weights))
    assert term_coverage(weights, set()) == 0.0 and term_coverage([], seen) == 0.0


def test_a_calibration_without_the_signal_ignores_it():
    # the shipped calibration and every operator's written before the signal: the same probability whatever its value
    old = Policy.from_dict(
        {
            "match": {
                "calibration_id": "operator:before",
                "features": [BEST_COSINE, TERM_COVERAGE],
                "weights": [10.0, 3.0],
                "intercept": -7.0,
            }
        }
    )
    base = {BEST_COSINE: 0.6, TERM_COVERAGE: 0.5}
    assert probability(old, base) == probability(old, base | {UNKNOWN_TERM_SHARE: 0.0})
    assert probability(old, base) == probability(old, base | {UNKNOWN_TERM_SHARE: 1.0})
    assert UNKNOWN_TERM_SHARE in SIGNALS and SIGNALS[UNKNOWN_TERM_SHARE]  # named and explained like the others


def test_a_fit_on_off_subject_queries_learns_that_unknown_words_lower_the_probability():
    # Generated judged queries: off-subject ones carry unknown words and sometimes a close passage (best cosine
    # overlaps), the library's own ones none; the fit gives the signal a negative weight, and a calibration that
    # names it loads and serves it.
    rng = np.random.default_rng(7)
    n = 600
    off = rng.uniform(size=n) < 0.3
    cosine = np.where(off, rng.uniform(0.2, 0.65, n), rng.uniform(0.35, 0.8, n))
    unknown = np.where(off, rng.uniform(0.2, 0.9, n), np.where(rng.uniform(size=n) < 0.1, rng.uniform(0, 0.3, n), 0))
    right = ~off & (rng.uniform(size=n) < 1 / (1 + np.exp(-(-6 + 12 * cosine))))
    features = (BEST_COSINE, UNKNOWN_TERM_SHARE)
    model = fit(np.column_stack([cosine, unknown]), right.astype(np.int64), features)
    assert model.weights[0] > 0 and model.weights[1] < 0
    policy = Policy.from_dict(
        {
            "match": {
                "calibration_id": "operator:vocabulary",
                "features": list(features),
                "weights": list(model.weights),
                "intercept": model.intercept,
            }
        }
    )
    in_words = probability(policy, {BEST_COSINE: 0.6, UNKNOWN_TERM_SHARE: 0.0})
    elsewhere = probability(policy, {BEST_COSINE: 0.6, UNKNOWN_TERM_SHARE: 0.6})
    assert in_words is not None and elsewhere is not None and elsewhere < in_words - 0.2
