"""The compact rendering's one trust line names the verification's evidence class (issue 14 meets issue 18)."""

from trustindex.serve.assistant_text import trust_line


def _hit(best: dict | None, status: str = "verified") -> dict:
    return {
        "display_confidence": 0.42,
        "factors": {
            "attribution": {"evidence": {"tier": "community"}},
            "verification": {"status": status, "evidence": {"best": best} if best else {}},
            "freshness": {"evidence": {"last_substantive_change": "2026-03-04T00:00:00+00:00"}},
            "deprecation": {"status": "not_deprecated", "evidence": {}},
        },
    }


def test_authenticated_and_claimed_read_differently():
    signed = trust_line(_hit({"method": "merge", "evidence_class": "authenticated"}))
    claimed = trust_line(_hit({"method": "trailer", "evidence_class": "claimed"}))
    assert signed == "community · verified (authenticated merge) · updated 2026-03-04 · not deprecated · confidence 42%"
    assert "verified (claimed trailer)" in claimed


def test_a_link_without_a_class_still_names_its_method():
    assert "verified (ledger)" in trust_line(_hit({"method": "ledger"}))
    assert " · unverified · " in trust_line(_hit(None, status="unverified"))
