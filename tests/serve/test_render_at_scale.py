"""Issue 29 item 5: text answers that read well at 50 sources.

The header names the sources the hits come from (and counts the rest), version states print as text, and a
verification line names each person once with a count.  The inputs are a demo response with its sources and
verification chains generated here for 50 sources (the renderers read the typed response, schemas/hit_parts.py).
"""

from __future__ import annotations

import copy

import pytest

from trustindex.query.render import chain_text, explain_hit, sources_text, states_text
from trustindex.query.response import SearchResponse
from trustindex.schemas.hit_factors import VerificationLink
from trustindex.serve.assistant_text import header


@pytest.fixture(scope="module")
def base(index) -> dict:
    return index.search("How do I install the Compact compiler?", k=1)


def _sources(n: int) -> list[dict]:
    return [
        {"source": f"repo-{i:02d}", "commit": f"{i:02d}" + "a" * 38, "commit_date": f"2026-0{1 + i % 9}-01T00:00:00Z"}
        for i in range(n)
    ]


def _response(base: dict, cited: list[str], n: int = 50) -> SearchResponse:
    r = copy.deepcopy(base)
    r["sources"] = _sources(n)
    r["hits"] = [copy.deepcopy(base["hits"][0]) for _ in cited]
    for h, s in zip(r["hits"], cited, strict=True):
        h["provenance"]["source"] = s
    return SearchResponse.from_json(r)


def test_the_header_names_the_cited_sources_and_counts_the_rest(base):
    r = _response(base, ["repo-07", "repo-03", "repo-07"])
    text = sources_text(r)
    assert text == (
        "repo-03 @ 03aaaaaaaaaa (2026-04-01), repo-07 @ 07aaaaaaaaaa (2026-08-01) (+ 48 other sources in the snapshot)"
    )
    assert "repo-11" not in header(r) and "48 other sources" in header(r)
    assert len(header(r)) < 300  # was ~3,000 characters at 50 sources
    every = _response(base, [f"repo-{i:02d}" for i in range(3)], n=3)
    assert "other source" not in sources_text(every) and sources_text(every).count(" @ ") == 3
    assert sources_text(_response(base, [], n=2)) == "2 other sources in the snapshot"
    assert sources_text(_response(base, ["repo-00"], n=2)).endswith("(+ 1 other source in the snapshot)")


def test_version_states_print_as_text():
    assert states_text({"docs": ["current"], "ledger": [">=1.0", "<2"]}) == "docs: current; ledger: >=1.0, <2"


def _link(verifier: str, method: str = "merge", cls: str = "authenticated", tier: str = "foundation") -> dict:
    return {
        **{"verifier": verifier, "publisher": None, "tier": tier, "method": method, "evidence_class": cls},
        **{"lends_tier": tier, "commit": None, "date": None, "stale": False, "detail": None},
    }


def _chain(links: list[dict]) -> tuple[VerificationLink, ...]:
    return tuple(VerificationLink.from_json(x) for x in links)


def test_a_verification_line_names_each_person_once_with_a_count():
    chain = (
        [_link("Ada")] * 4 + [_link("Bob", "trailer", "claimed", "community")] + [_link("Ada", "ledger", "operator")]
    )
    text = chain_text(_chain(chain))
    assert text == (
        "authenticated merge (foundation) ×4 and operator ledger (foundation) by Ada; "
        "claimed trailer (community) by Bob"
    )
    assert text.count("Ada") == 1
    many = chain_text(_chain([_link(f"P{i}") for i in range(7)]))
    assert many.endswith("; 3 more people") and "P4" not in many


def test_the_explained_hit_uses_both(base):
    h = copy.deepcopy(base["hits"][0])
    f = h["factors"]
    f["verification"] = {"multiplier": 1.2, "status": "verified", "evidence": {"chain": [_link("Ada")] * 3}}
    f["version_match"] = {"multiplier": 1.0, "status": "no_target", "evidence": {"constraints": {"docs": ["current"]}}}
    lines = explain_hit(h)
    assert "verification ×1.20 [verified]: authenticated merge (foundation) ×3 by Ada" in lines
    assert "version ×1.00: no target given; states docs: current" in lines
    assert not any("{" in line for line in lines)
