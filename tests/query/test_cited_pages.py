"""The ``cited`` page term (issue 43, query/page_links.py): the pages the question's best passages link to on their
own site.  The loan rules on arrays (who may cite, trust, one loan per citing page, saturation), then on the demo
snapshot refreshed through the real flow: which links a passage cites, what a hit shows with the term weighted, the
order explained from the response alone, and nothing shown at the default weight of 0."""

from __future__ import annotations

import copy

import numpy as np
import pyarrow.parquet as pq
import pytest

from trustindex.query.explain import check, formula_lines
from trustindex.query.page_links import Cites, cited
from trustindex.schemas.links import PAGE
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response
from trustindex.schemas.snapshot import TABLE_FILES

PROOF = "docs/guides/proof-server.md"
INTRO = "docs/intro.md"
CITED_ON = Policy.from_dict({"fusion": {"cited_weight": 0.2, "cited_passages": 5, "cited_half": 0.5}})
QUERY = "the building blocks: Compact contracts, the proof server, the Wallet SDK and the DApp connector, Zswap"


def _cites(links: dict[int, list[int]], passages: int) -> Cites:
    starts = np.zeros(passages + 1, dtype=np.int64)
    pages: list[int] = []
    for row in range(passages):
        pages += links.get(row, [])
        starts[row + 1] = len(pages)
    return Cites(starts, np.array(pages, dtype=np.int64))


def test_a_page_the_best_passages_link_to_gains_their_best_loan_per_citing_page():
    # pool positions: 0, 1 on page 10 (both link page 20), 2 on page 11 (links page 20), 3 on page 20, 4 on page 21
    rows = np.arange(5)
    doc_rows = np.array([10, 10, 11, 20, 21])
    rel = np.array([0.8, 0.6, 0.4, 0.5, 0.3])
    trust = np.ones(5)
    cites = _cites({0: [20], 1: [20], 2: [20]}, 5)
    values, citers = cited(cites, rows, doc_rows, rel, trust, np.ones(5, bool), passages=5, half=0.5)
    s = 0.8 + 0.4  # page 10 lends its best passage's relevance once, page 11 its one
    assert values[3] == pytest.approx(s / (s + 0.5))
    assert citers[3] == [0, 2]  # best loan first
    assert values[[0, 1, 2, 4]].tolist() == [0.0] * 4 and citers[4] == []


def test_only_the_most_relevant_eligible_passages_cite_and_trust_caps_a_loan():
    rows = np.arange(4)
    doc_rows = np.array([10, 11, 12, 20])
    rel = np.array([0.9, 0.7, 0.6, 0.5])
    cites = _cites({0: [20], 1: [20], 2: [20]}, 4)
    flagged = np.array([False, True, True, True])  # the best passage's content risk was found: it may not lend
    trust = np.array([1.0, 0.5, 1.0, 1.0])
    values, citers = cited(cites, rows, doc_rows, rel, trust, flagged, passages=2, half=1.0)
    # eligible by relevance: 1 (0.7) and 2 (0.6), the two allowed; 1's trust is half the cited page's: loan x 0.5
    s = 0.7 * 0.5 + 0.6
    assert values[3] == pytest.approx(s / (s + 1.0)) and citers[3] == [2, 1]
    values, _ = cited(cites, rows, doc_rows, rel, trust, np.zeros(4, bool), passages=5, half=1.0)
    assert not values.any()  # nothing may lend: nothing is cited


def test_the_snapshot_cites_each_passage_s_links_to_other_pages_of_its_own_site(index):
    d = index.data
    links = pq.read_table(d.dir / TABLE_FILES["links"]).to_pylist()
    paths = d.docs.table.column("path").to_pylist()
    chunk_ids = d.passages.chunk_ids
    row_of = {c: i for i, c in enumerate(chunk_ids)}
    cites = d.page_links.cites
    expected = {
        (row_of[r["chunk_id"]], r["target_path"])
        for r in links
        if r["status"] == PAGE
        and r["chunk_id"] is not None
        and r["source"] == r["target_source"]
        and r["doc_id"] != r["target_doc_id"]
    }
    got = {(row, paths[p]) for row in range(len(chunk_ids)) for p in cites.of_row(row).tolist()}
    assert got == expected
    assert any(path == PROOF for _, path in got)
    # the partner SDK's link to the docs site's URL names the page, but cites nothing: another source lends no standing
    sdk = [r for r in links if r["source"] == "partner-sdk" and r["status"] == PAGE]
    assert sdk and all(not cites.of_row(row_of[r["chunk_id"]]).size for r in sdk)


def test_weighted_the_cited_page_shows_who_cited_it_and_the_order_is_explained(index):
    base = index.search(QUERY, k=10)
    assert all("cited" not in h["ranking_terms"]["page"] for h in base["hits"])  # weight 0: not shown
    index.reload_policy(CITED_ON)
    try:
        r = index.search(QUERY, k=10)
    finally:
        index.reload_policy(None)
    validate_response(r)
    assert check(r, CITED_ON) == []
    first = r["hits"][0]
    assert first["provenance"]["path"] == INTRO
    proof = next(h for h in r["hits"] if h["provenance"]["path"] == PROOF)
    term = proof["ranking_terms"]["page"]["cited"]
    assert term["weight"] == 0.2 and term["value"] > 0
    assert first["chunk_id"] in term["citers"]  # the intro's building blocks link to the proof server page
    assert proof["ranking_terms"]["page"]["normaliser"] == pytest.approx(1 + 0.3 + 0.1 + 0.075 + 0.2)
    assert "cited" in formula_lines(proof)[1]
    # the intro cites, it is not cited by itself
    assert first["ranking_terms"]["page"]["cited"]["citers"] == [] or all(
        c != first["chunk_id"] for c in first["ranking_terms"]["page"]["cited"]["citers"]
    )
    wrong = copy.deepcopy(r)
    wrong["hits"][0]["ranking_terms"]["page"]["cited"]["weight"] = 0.5
    assert any("cited weight" in p for p in check(wrong, CITED_ON))
    dropped = copy.deepcopy(r)
    del dropped["hits"][0]["ranking_terms"]["page"]["cited"]
    assert any("cited is not shown" in p for p in check(dropped, CITED_ON))


def test_the_default_policy_is_named_as_before_the_term():
    assert Policy.load(None).policy_id == Policy.from_dict({"fusion": {"cited_weight": 0.0}}).policy_id
    assert Policy.load(None).policy_id != CITED_ON.policy_id
