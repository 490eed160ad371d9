"""Issue 29 item 5: text answers that read well at 50 sources.

The header names the sources the hits come from (and counts the rest), version states print as text, and a
verification line names each person once with a count.  The inputs are response fragments shaped as the
contract (schemas/response.schema.json) gives them, generated here for 50 sources.
"""

from __future__ import annotations

from trustindex.query.render import chain_text, explain_hit, sources_text, states_text
from trustindex.serve.assistant_text import header


def _sources(n: int) -> list[dict]:
    return [
        {"source": f"repo-{i:02d}", "commit": f"{i:02d}" + "a" * 38, "commit_date": f"2026-0{1 + i % 9}-01T00:00:00Z"}
        for i in range(n)
    ]


def _response(cited: list[str], n: int = 50) -> dict:
    return {
        "sources": _sources(n),
        "hits": [{"provenance": {"source": s}} for s in cited],
        "abstained": False,
        "abstention_reason": None,
        "match_tier": "strong",
        "answer_confidence": None,
        "best_cosine": 0.71,
        "snapshot_id": "s1",
        "built_at": "2026-12-01T00:00:00Z",
        "targets": [],
    }


def test_the_header_names_the_cited_sources_and_counts_the_rest():
    r = _response(["repo-07", "repo-03", "repo-07"])
    text = sources_text(r)
    assert text == (
        "repo-03 @ 03aaaaaaaaaa (2026-04-01), repo-07 @ 07aaaaaaaaaa (2026-08-01) (+ 48 other sources in the snapshot)"
    )
    assert "repo-11" not in header(r) and "48 other sources" in header(r)
    assert len(header(r)) < 300  # was ~3,000 characters at 50 sources
    every = _response([f"repo-{i:02d}" for i in range(3)], n=3)
    assert "other source" not in sources_text(every) and sources_text(every).count(" @ ") == 3
    assert sources_text(_response([], n=2)) == "2 other sources in the snapshot"
    assert sources_text(_response(["repo-00"], n=2)).endswith("(+ 1 other source in the snapshot)")


def test_version_states_print_as_text():
    assert states_text({"docs": ["current"], "ledger": [">=1.0", "<2"]}) == "docs: current; ledger: >=1.0, <2"


def _link(verifier: str, method: str = "merge", cls: str = "authenticated", tier: str = "foundation") -> dict:
    return {"verifier": verifier, "method": method, "evidence_class": cls, "tier": tier, "stale": False}


def test_a_verification_line_names_each_person_once_with_a_count():
    chain = (
        [_link("Ada")] * 4 + [_link("Bob", "trailer", "claimed", "community")] + [_link("Ada", "ledger", "operator")]
    )
    text = chain_text(chain)
    assert text == (
        "authenticated merge (foundation) ×4 and operator ledger (foundation) by Ada; "
        "claimed trailer (community) by Bob"
    )
    assert text.count("Ada") == 1
    many = chain_text([_link(f"P{i}") for i in range(7)])
    assert many.endswith("; 3 more people") and "P4" not in many


def test_the_explained_hit_uses_both():
    f = {
        "attribution": {"multiplier": 1.0, "evidence": {"publisher": "mf", "tier": "foundation", "origin": "source"}},
        "verification": {"multiplier": 1.2, "status": "verified", "evidence": {"chain": [_link("Ada")] * 3}},
        "freshness": {
            "multiplier": 1.0,
            "evidence": {"last_substantive_change": "2026-01-01", "age_days": 3, "last_modified": "2026-01-01"},
        },
        "deprecation": {"multiplier": 1.0, "status": "not_deprecated"},
        "version_match": {"multiplier": 1.0, "status": "no_target", "evidence": {"constraints": {"docs": ["current"]}}},
    }
    h = {
        "factors": f,
        "confidence": 0.5,
        "trust_score": 1.0,
        "relevance_score": 0.5,
        "also_in": [],
        "text": "t",
        "channels": {"dense": {"rank": 1, "score": 0.5}, "lexical": {"rank": 1, "score": 3.0}},
        "ranking_score": 0.5,
        "ranking_terms": {  # score contract 4: what orders the hit (query/score.py), no page terms here
            "trust_weight": 1,
            "relevance_weight": 1,
            "ranking_relevance": 0.5,
            "passage": {"dense": {"weight": 0.7, "value": 0.5}, "lexical": {"weight": 0.3, "value": 0.5}},
        },
    }
    lines = explain_hit(h)
    assert "verification ×1.20 [verified]: authenticated merge (foundation) ×3 by Ada" in lines
    assert "version ×1.00: no target given; states docs: current" in lines
    assert not any("{" in line for line in lines)
