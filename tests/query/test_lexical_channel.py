"""The user's wording's lexical channel worked out in a worker thread beside its embedding (query/lexical_channel.py,
issue 41): the same arrays as in line, the same responses from many threads at once as one at a time, and the
feedback pass (which rewrites the lexical scores after the channel was worked out) still runs over it.  The demo
corpus, refreshed once through the real flow."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from trustindex.query import lexical_channel as beside_module
from trustindex.query.fusion import per_page_capped, top_ranking
from trustindex.query.lexical_channel import BESIDE_THREADS, beside, lexical_channel, reach
from trustindex.query.lexical_signals import lexical_signals
from trustindex.query.search_query import Query, Words
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response

QUERIES = [
    "How do I write a witness?",
    "pragma language_version",  # an identifier the demo corpus knows
    "deploy the contract to testnet",
    "zzzqqq unknownword",  # no known term: the lexical channel does not run
]
IDENTIFIER_POLICY = Policy.from_dict({"relevance": {"identifier_weight": 0.3, "field_weight": 0.5}})


@pytest.fixture(autouse=True)
def always_beside(monkeypatch):
    """The demo corpus is far below the size from which the channel goes to a worker thread: send it there anyway."""
    monkeypatch.setattr(beside_module, "BESIDE_FROM_ROWS", 0)


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


@pytest.mark.parametrize("policy", [Policy.default(), IDENTIFIER_POLICY], ids=["default", "identifiers"])
def test_the_channel_made_beside_the_embedding_is_the_one_made_in_line(index, policy):
    index.reload_policy(policy)
    try:
        st, d = index.state, index.data
        fz = policy.fusion
        for text in QUERIES:
            got = Query.make(st, text).lexical  # the worker thread's
            words = Words.of(text)
            signals = lexical_signals(d, words, policy)  # this thread's, in line
            assert np.array_equal(got.signals.scores, signals.scores) and got.signals.nterms == signals.nterms
            assert _same(got.signals.identifier, signals.identifier)
            ranking = top_ranking(signals.scores, reach(policy), positive_only=True) if signals.nterms else None
            assert _same(got.ranking, ranking)
            if ranking is not None:
                capped = per_page_capped(ranking, d.chunk_doc_row, fz.max_passages_per_page, fz.candidate_depth)
                assert _same(got.pooled, capped)
            assert (got.identifier_pooled is None) == (signals.identifier is None)
            if text.startswith("zzz"):
                assert got.ranking is None and got.pooled is None
        assert lexical_channel(st, Words.of(QUERIES[0])).ranking is not None
        if policy is IDENTIFIER_POLICY:  # the identifier channel ran for the identifier query
            assert lexical_channel(st, Words.of(QUERIES[1])).identifier_pooled is not None
    finally:
        index.reload_policy(Policy.default())


def test_concurrent_searches_answer_as_one_at_a_time(index):
    """More searches at once than the pool has threads: each response is the one a search alone gives."""
    alone = {q: json.dumps(index.search(q, k=5), sort_keys=True) for q in QUERIES}
    asked = QUERIES * (BESIDE_THREADS + 1)
    with ThreadPoolExecutor(BESIDE_THREADS * 2) as pool:
        together = list(pool.map(lambda q: json.dumps(index.search(q, k=5), sort_keys=True), asked))
    assert together == [alone[q] for q in asked]


def test_a_search_with_feedback_reads_the_channel_and_reshapes_it(index):
    """The feedback pass rewrites the lexical scores after the channel was worked out: the response follows them."""
    plain = index.search(QUERIES[2], k=10)
    index.reload_policy(Policy.from_dict({"feedback": {"passages": 3, "lexical_share": 0.5, "dense_share": 0.3}}))
    try:
        fed = index.search(QUERIES[2], k=10)
        validate_response(fed)
        assert fed["hits"] and fed["channels"]["lexical"]["ran"]
        assert fed == index.search(QUERIES[2], k=10)  # deterministic through the worker thread
        shown = [(h["chunk_id"], h["channels"]["lexical"]["score"]) for h in fed["hits"]]
        assert shown != [(h["chunk_id"], h["channels"]["lexical"]["score"]) for h in plain["hits"]]
    finally:
        index.reload_policy(Policy.default())


def test_a_channel_no_worker_has_started_is_worked_out_by_the_search_itself(index):
    """Every worker busy (as when no core is free): the search does not wait for one, it works the channel out."""
    st, words = index.state, Words.of(QUERIES[0])
    beside(st, words).result()  # the pool exists
    release = threading.Event()
    busy = [beside_module._executor.submit(release.wait, 60) for _ in range(BESIDE_THREADS)]
    try:
        pending = beside(st, words)
        got = pending.result()  # returns while every worker still waits
        assert not release.is_set() and pending._future.cancelled()
        assert np.array_equal(got.signals.scores, lexical_signals(index.data, words, st.policy).scores)
    finally:
        release.set()
        for f in busy:
            f.result()
