"""A hit's parts typed to the edge (issue 39 item 1): the types of schemas/hit_parts.py and schemas/hit_factors.py
read every part of a real response and write it back key for key, in order, and the factor types are the registry's."""

from __future__ import annotations

import dataclasses
import json
import types
import typing

import pytest

from trustindex.query.response import SearchResponse
from trustindex.schemas.hit_factors import FACTOR_FIELDS, AttributionEvidence, Factors
from trustindex.schemas.hit_parts import Provenance, RankingTerms, TargetShown
from trustindex.schemas.response import response_schema
from trustindex.schemas.shape import Shape
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


def _shape_of(hint) -> tuple[type | None, tuple]:
    """The part type a field holds (itself, in an Optional, a tuple, a list or a dict's values), and its arguments."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, Shape):
        return hint, ()
    if isinstance(origin, type) and issubclass(origin, Shape):
        return origin, args
    inner = [a for a in args if a is not type(None)]
    if origin in (types.UnionType, typing.Union, tuple, list) and inner:
        return _shape_of(inner[0])
    if origin is dict and len(args) == 2:
        return _shape_of(args[1])
    return None, ()


def _disagreements(node: dict, cls: type, args: tuple, path: str) -> list[str]:
    """Where the JSON Schema's object properties and a type's fields differ, all the way down."""
    node = node.get("items", node)
    props = node.get("properties")
    extra = node.get("additionalProperties")
    if props is None and isinstance(extra, dict):
        props = extra.get("properties")
    if props is None:
        return []
    fields = [f.name for f in dataclasses.fields(cls) if f.name != "absent"]
    out = [] if set(props) == set(fields) else [f"{path} ({cls.__name__}): {sorted(props)} vs {sorted(fields)}"]
    hints = typing.get_type_hints(cls)
    given = dict(zip(getattr(cls, "__parameters__", ()), args, strict=False))
    for name in props:
        sub, sub_args = _shape_of(given.get(hints[name], hints[name])) if name in hints else (None, ())
        if sub is not None:
            out += _disagreements(props[name], sub, sub_args, f"{path}.{name}")
    return out


def test_the_json_schema_names_every_field_of_the_types_and_no_other():
    assert _disagreements(response_schema(), SearchResponse, (), "response") == []


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
