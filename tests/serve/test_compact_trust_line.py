"""The compact rendering's one trust line names the verification's evidence class (issue 14 meets issue 18)."""

import copy

import pytest

from trustindex.serve.assistant_text import trust_line


@pytest.fixture(scope="module")
def base(index) -> dict:
    return index.search("How do I install the Compact compiler?", k=1)["hits"][0]


def _hit(base: dict, best: dict | None, status: str = "verified") -> dict:
    h = copy.deepcopy(base)
    f = h["factors"]
    h["display_confidence"] = 0.42
    f["attribution"] = {"multiplier": 1.0, "status": "attributed", "evidence": {"publisher": "p", "tier": "community"}}
    link = {"verifier": "v", "tier": "community", "lends_tier": "community", **(best or {}), "commit": None}
    evidence = {"best": link, "chain": []} if best else {"chain": []}
    f["verification"] = {"multiplier": 1.0, "status": status, "evidence": evidence}
    f["freshness"]["evidence"]["last_substantive_change"] = "2026-03-04T00:00:00+00:00"
    f["page_kind"] = {"multiplier": 1.0, "status": "reference", "evidence": {"page_kind": "reference", "reason": "r"}}
    f["deprecation"] = {"multiplier": 1.0, "status": "not_deprecated", "evidence": {}}
    return h


def test_authenticated_and_claimed_read_differently(base):
    signed = trust_line(_hit(base, {"method": "merge", "evidence_class": "authenticated"}))
    claimed = trust_line(_hit(base, {"method": "trailer", "evidence_class": "claimed"}))
    assert signed == "community · verified (authenticated merge) · updated 2026-03-04 · not deprecated · confidence 42%"
    assert "verified (claimed trailer)" in claimed


def test_a_link_without_a_class_still_names_its_method(base):
    assert "verified (ledger)" in trust_line(_hit(base, {"method": "ledger"}))
    assert " · unverified · " in trust_line(_hit(base, None, status="unverified"))
