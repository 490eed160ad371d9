"""The refresh writes the field index (issue 16) and a search reads it under the policy's weights: the demo corpus,
refreshed once through the real flow."""

from __future__ import annotations

import numpy as np

from trustindex.query.lexical_signals import lexical_signals
from trustindex.query.search_query import Words
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response
from trustindex.schemas.snapshot import BM25_FIELDS_DIR


def test_the_refresh_writes_a_field_index_over_every_passage(index):
    d = index.data
    assert (d.dir / BM25_FIELDS_DIR / "tokenizer.json").is_file()
    assert d.manifest.files.get(f"{BM25_FIELDS_DIR}/tokenizer.json")  # listed and checksummed like any file
    assert d.lexical_indexes.fields is not None and d.lexical_indexes.fields.n_docs == d.n


def test_field_weight_lifts_passages_whose_headings_name_the_query(index):
    d = index.data
    query = "witnesses"
    heads = [" ".join(h or []).lower() for h in d.chunks["heading_path"]]
    titled = np.array(["witness" in h for h in heads])
    assert titled.any() and not titled.all()
    off = lexical_signals(d, Words.of(query), Policy.default())
    on = lexical_signals(d, Words.of(query), Policy.from_dict({"relevance": {"field_weight": 1.0}}))
    gain = on.scores - off.scores
    # only passages whose fields hold the term gain, and every one of those whose heading names it does
    assert (gain[titled] > 0).all()
    assert np.all(gain >= 0)


def test_a_search_runs_with_every_ranking_signal_on(index):
    policy = Policy.from_dict(
        {"relevance": {"field_weight": 0.5, "identifier_weight": 0.3}, "fusion": {"page_weight": 0.3}}
    )
    index.reload_policy(policy)
    try:
        r = index.search("How do I call connectWallet?", k=5)
    finally:
        index.reload_policy(Policy.default())
    validate_response(r)
    assert r["hits"] and any("connectWallet" in h["text"] for h in r["hits"])
