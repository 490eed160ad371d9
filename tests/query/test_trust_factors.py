"""The factor registry (schemas/trust_factors.py) is the one list of trust factors: the modules, the response
contract, the policy and the text table follow it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from trustindex.query import trust_factors
from trustindex.query.render import render_table
from trustindex.schemas.hit_factors import FACTOR_FIELDS
from trustindex.schemas.policy_sections import Sections
from trustindex.schemas.trust_factors import FACTOR_NAMES, FACTORS, QUERY

ROOT = Path(__file__).resolve().parents[2]


def test_every_factor_has_one_module_a_policy_section_and_a_place_in_the_contract():
    assert len(FACTOR_NAMES) == len(set(FACTOR_NAMES)) == 7
    assert [m.__name__.rsplit(".", 1)[1] for m in trust_factors.MODULES] == list(FACTOR_NAMES)
    for m in trust_factors.MODULES:
        assert callable(m.explain) and callable(m.prior), m.__name__
    sections = {f.name for f in dataclasses.fields(Sections)}
    assert all(f.section in sections for f in FACTORS)
    schema = json.loads((ROOT / "schemas" / "response.schema.json").read_text())
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "factors" in node.get("properties", {}):
                found.append(node["properties"]["factors"]["required"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert found and all(r == list(FACTOR_NAMES) for r in found)


def test_only_a_query_factor_has_no_prior():
    # a query factor is worked out per candidate; every other factor is priced once per (policy, day)
    assert [f.name for f in FACTORS if f.depends_on == QUERY] == ["version_match"]
    assert trust_factors.version_match.prior(None) is None


def test_the_text_table_has_a_column_per_factor_in_registry_order(index):
    r = index.search("How do I install the Compact compiler?", k=1)
    for i, f in enumerate(FACTORS):  # each factor a multiplier of its own, to see which column shows which
        r["hits"][0]["factors"][f.name]["multiplier"] = 0.5 + i / 100
    header, row = render_table(r).splitlines()[-2:]
    n = len(FACTORS)
    assert header.split()[4 : 4 + n] == [f.column for f in FACTORS]
    assert row.split()[4 : 4 + n] == [f"{0.5 + i / 100:.2f}" for i in range(n)]


def test_the_search_page_takes_the_factors_from_the_response(index):
    """The page draws a hit's factors as the response lists them (serve/static/render.js keeps no list of its own,
    tests/serve/test_search_page.py compares its bars with the API's): the response lists them in the order of the
    factor types (schemas/hit_factors.py Factors), which is the registry's.  The page may name one factor where it
    reads that factor's evidence (a ``case`` of its evidence lines), never several on one line (a list)."""
    js = (ROOT / "serve" / "static" / "render.js").read_text()
    for line in js.splitlines():
        named = [n for n in FACTOR_NAMES if f'"{n}"' in line or f"{n}:" in line]
        assert line.lstrip().startswith("//") or len(named) < 2, f"serve/static/render.js lists factors: {line}"
    hit = index.search("How do I install the Compact compiler?", k=1)["hits"][0]
    assert list(hit["factors"]) == list(FACTOR_FIELDS) == list(FACTOR_NAMES)
