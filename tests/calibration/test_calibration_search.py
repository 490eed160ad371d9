"""Answer confidence in a real search (the demo snapshot): signals, calibration status, low_confidence abstention."""

from __future__ import annotations

import pytest

from trustindex.query.render import render_table
from trustindex.schemas.answer_signals import SIGNALS
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response
from trustindex.serve.assistant_text import render_compact

IN_DOMAIN = "How do I install the Compact compiler?"
# A calibration of its own, so that these tests do not depend on the shipped fit: P = sigmoid(best cosine) < 1.
COSINE_ONLY = {"calibration_id": "operator:test", "features": ["best_cosine"], "weights": [1.0], "intercept": 0.0}


@pytest.fixture
def under(index):
    """Search under another policy for one test, then put the built-in policy back."""
    yield index.reload_policy
    index.reload_policy(Policy.default())


def test_the_response_carries_the_shipped_calibration(index):
    r = index.search(IN_DOMAIN, k=3)
    validate_response(r)
    assert set(r["answer_signals"]) == set(SIGNALS)
    assert 0.0 <= r["answer_signals"]["term_coverage"] <= 1.0 and r["answer_signals"]["page_margin"] >= 0.0
    if Policy.default().match.features:
        assert r["calibration_status"] == "default" and r["calibration_id"] == index.policy.match.calibration_id
        assert 0.0 < r["answer_confidence"] < 1.0
        off = index.search("Michael Jackson albums", k=3)
        assert off["answer_confidence"] < r["answer_confidence"] and off["match_tier"] == "low"
        text = render_table(r, explain=True)
        assert f"answer confidence {r['answer_confidence']:.2f}" in text and r["calibration_id"] in text
        assert "the shipped calibration" in text


def test_low_confidence_abstains_but_keeps_its_hits_unless_strict(index, under):
    under(Policy.from_dict({"match": {**COSINE_ONLY, "min_answer_confidence": 1.0}}))  # no p reaches 1
    r = index.search(IN_DOMAIN, k=3)
    validate_response(r)
    assert r["abstained"] and r["abstention_reason"] == "low_confidence"
    assert r["hits"] and all(h["low_confidence"] is True for h in r["hits"])
    assert "ABSTAINED: low_confidence" in render_table(r)
    assert "[1] (low confidence)" in render_compact(r, max_tokens=None)
    strict = index.search(IN_DOMAIN, k=3, strict=True)
    validate_response(strict)
    assert strict["abstained"] and strict["abstention_reason"] == "low_confidence" and strict["hits"] == []


def test_above_the_minimum_nothing_is_marked(index, under):
    under(Policy.from_dict({"match": {**COSINE_ONLY, "min_answer_confidence": 0.0}}))
    r = index.search(IN_DOMAIN, k=3)
    assert r["abstention_reason"] != "low_confidence" and not any("low_confidence" in h for h in r["hits"])


def test_an_uncalibrated_policy_keeps_the_cosine_tiers(index, under):
    under(Policy.from_dict({"match": {"calibration_id": "", "features": [], "weights": []}}))
    r = index.search(IN_DOMAIN, k=3)
    validate_response(r)
    assert r["calibration_status"] == "uncalibrated" and r["answer_confidence"] is None
    m = index.policy.match
    expected = (
        "high" if r["best_cosine"] >= m.high_threshold else "mid" if r["best_cosine"] >= m.mid_threshold else "low"
    )
    assert r["match_tier"] == expected
    assert "uncalibrated" in render_table(r, explain=True)
