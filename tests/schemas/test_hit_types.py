"""A hit's parts typed to the edge (issue 39 item 1): the types of schemas/hit_parts.py and schemas/hit_factors.py
read every part of a real response and write it back key for key, in order, and the factor types are the registry's."""

from __future__ import annotations

import json

import pytest

from trustindex.query.response import SearchResponse
from trustindex.schemas.hit_factors import FACTOR_FIELDS, AttributionEvidence, Factors
from trustindex.schemas.hit_parts import Provenance, RankingTerms, TargetShown
from trustindex.schemas.trust_factors import FACTOR_NAMES

QUERIES = [
    ("How do I install the Compact compiler?", {}),
    ("How do I claim the community airdrop?", {}),
    ("Wallet API deprecated replacement", {"targets": ["docs=v1"]}),
    ("Wallet API deprecated replacement", {"targets": ["docs=v1"], "strict": True}),
    ("ledger version compatibility", {"targets": ["ledger=1.0"]}),
    ("compact language pragma", {"targets": ["compact=0.16"]}),
]


def test_the_factor_types_are_the_registrys_factors_in_its_order():
    assert FACTOR_FIELDS == FACTOR_NAMES


def _same(part: dict, typed) -> None:
    assert json.dumps(typed.to_json()) == json.dumps(part)


@pytest.mark.parametrize(("query", "options"), QUERIES)
def test_every_part_of_a_response_round_trips_through_its_type(index, query, options):
    r = index.search(query, k=10, **options)
    assert r["hits"]
    for h in r["hits"]:
        _same(h["factors"], Factors.from_json(h["factors"]))
        _same(h["provenance"], Provenance.from_json(h["provenance"]))
        _same(h["ranking_terms"], RankingTerms.from_json(h["ranking_terms"]))
        for p in h["also_in"]:
            _same(p, Provenance.from_json(p))
    for t in r["targets"]:
        _same(t, TargetShown.from_json(t))
    _same(r, SearchResponse.from_json(r))
    _same(r, index.respond(query, k=10, **options))


def test_a_key_the_type_does_not_declare_is_an_error_naming_the_type():
    with pytest.raises(ValueError, match="AttributionEvidence.*'colour'"):
        AttributionEvidence.from_json({"publisher": None, "tier": "unknown", "colour": "red"})


def test_a_null_kept_apart_from_a_missing_key():
    full = {
        "publisher": "p",
        "publisher_name": None,
        "tier": "official",
        "origin": "registry",
        "last_author": None,
        "last_author_publisher": None,
    }
    assert AttributionEvidence.from_json(full).to_json() == full
    unknown = {"publisher": None, "tier": "unknown"}
    assert AttributionEvidence.from_json(unknown).to_json() == unknown


def test_a_responses_json_is_its_own_though_the_parts_behind_it_are_shared(index):
    """The state keeps each passage's typed parts per day and shares them between responses: changing one
    response's JSON (lists and dicts included) changes no other response."""
    query = "How do I install the Compact compiler?"
    before = json.dumps(index.search(query, k=5))
    spoiled = index.search(query, k=5)
    for h in spoiled["hits"]:
        h["provenance"]["heading_path"].append("spoiled")
        h["ranking_terms"]["passage"]["dense"]["value"] = -1.0
        h["factors"]["version_match"]["evidence"].clear()
        h["factors"]["attribution"]["evidence"]["tier"] = "spoiled"
    assert json.dumps(index.search(query, k=5)) == before
