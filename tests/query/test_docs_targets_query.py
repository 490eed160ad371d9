"""Legacy docs pages lose by default; docs versions are selected by name, label or ``latest`` (demo corpus:
current docs labelled v1, versioned_docs/version-0.1.0 labelled "v0 (Legacy)")."""

from __future__ import annotations

import numpy as np

from trustindex.query.trust import combine, reference_day
from trustindex.query.trust_prior import TrustPrior

QUERY = "How do I install the Compact compiler?"
LEGACY = "versioned_docs/version-0.1.0/getting-started/installation.md"
CURRENT = "docs/getting-started/installation.md"


def _rank(r: dict, path: str) -> int | None:
    return next((h["rank_position"] for h in r["hits"] if h["provenance"]["path"] == path), None)


def test_legacy_page_loses_with_its_reason_and_successor(index):
    r = index.search(QUERY, k=50)
    assert _rank(r, CURRENT) is not None and _rank(r, LEGACY) is not None
    assert _rank(r, CURRENT) < _rank(r, LEGACY)
    [legacy] = [h for h in r["hits"] if h["provenance"]["path"] == LEGACY][:1]
    dep = legacy["factors"]["deprecation"]
    assert dep["status"] == "legacy_docs_version"
    assert dep["multiplier"] == index.policy.deprecation.legacy_docs_multiplier < 1.0
    assert dep["evidence"]["superseded_by"] == CURRENT
    assert dep["evidence"]["markers"][0]["reason"].startswith("v0 (Legacy): unmaintained docs version; current is v1")


def test_current_label_and_latest_name_the_same_version(index):
    runs = {name: index.search(QUERY, k=10, targets={"docs": name}) for name in ("current", "v1", "latest", "V1")}
    for name, r in runs.items():
        [t] = r["targets"]
        assert (t["requested"], t["resolved"]) == (name, "current")
        assert t["resolution"] == ("name" if name == "current" else "alias of docs version 'current'")
        assert not r["abstained"]
    ids = {name: [h["chunk_id"] for h in r["hits"]] for name, r in runs.items()}
    assert ids["v1"] == ids["current"] == ids["latest"] == ids["V1"]
    assert all(not h["provenance"]["path"].startswith("versioned_docs/") for h in runs["v1"]["hits"])


def test_legacy_version_targeted_ranks_normally(index):
    r = index.search(QUERY, k=10, targets={"docs": "v0 (Legacy)"}, strict=True)
    [t] = r["targets"]
    assert (t["resolved"], t["resolution"]) == ("0.1.0", "alias of docs version '0.1.0'")
    assert r["hits"] and all(h["provenance"]["path"].startswith("versioned_docs/version-0.1.0/") for h in r["hits"])
    dep = r["hits"][0]["factors"]["deprecation"]
    assert dep["status"] == "legacy_docs_version_targeted" and dep["multiplier"] == 1.0


def test_unknown_docs_name_is_reported_unresolved(index):
    r = index.search(QUERY, k=5, targets={"docs": "v7"}, strict=True)
    [t] = r["targets"]
    assert t["resolved"] is None and t["resolution"].startswith("unresolved")
    assert r["abstained"] and r["abstention_reason"] == "version_unavailable"
    assert "current" in t["constraints_seen"] and "0.1.0" in t["constraints_seen"]


def test_docs_targeted_prior_equals_its_explained_factors(index):
    today = reference_day()
    prior = TrustPrior(index.data, index.policy, today)
    assert prior.legacy.any() and not prior.legacy.all()
    expected = np.array([combine(index._factors(i, today, docs_targeted=True)) for i in range(index.data.n)])
    np.testing.assert_array_equal(np.clip(prior.for_targets(True), 0, 1), expected)
    assert (prior.for_targets(True)[prior.legacy] > prior.base[prior.legacy]).all()
