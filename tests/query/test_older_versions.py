"""A site that keeps many released versions (Docusaurus versioned_docs, newest first in versions.json) keeps a
near-copy of one page in each: the deprecation factor doubts a legacy page once more for every older version
newer than its own, so the copies rank newest first and the oldest sink, and a hit says how many it counted
(issue 43: the legacy doubt eased to 0.9, so the copies must not stand level)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.kits.gitutil import RepoBuilder, refresh_one_source
from trustindex.query.explain import check
from trustindex.query.trust_factors.deprecation import deprecation_factor
from trustindex.schemas.docs_versions import LEGACY_MARKER, folder_version_key
from trustindex.schemas.policy import Policy

CONFIG = """module.exports = {
  presets: [['classic', { docs: { path: 'docs', routeBasePath: 'docs' }, blog: false }]],
};
"""
VERSIONS = '["3.0", "2.1", "1.4", "0.9"]'  # newest first; lastVersion defaults to 3.0, so 2.1, 1.4 and 0.9 are legacy
PAGE = """# Caching results

## Cache a query result

Wrap the query in `cached(query, ttl)` to keep its result for ttl seconds; a cached result is served from memory
until it expires, then the query runs again. Release {v} keeps the cache per process.
"""
QUERY = "how do I cache a query result for some seconds with cached and a ttl"


@pytest.fixture(scope="module")
def site(tmp_path_factory, prefect_harness) -> Path:
    root = tmp_path_factory.mktemp("versions")
    files = {"docusaurus.config.js": CONFIG, "versions.json": VERSIONS, "docs/caching.md": PAGE.format(v="4.0")}
    files |= {f"versioned_docs/version-{v}/caching.md": PAGE.format(v=v) for v in ("3.0", "2.1", "1.4", "0.9")}
    RepoBuilder(root / "docs").commit(files, "the docs and their versions", when=datetime(2026, 6, 1, tzinfo=UTC))
    return refresh_one_source(root, "docs", "docs", ("**/*.md",))


def test_folders_sort_by_their_versions_numbers_within_their_plugin():
    folders = ["versioned_docs/version-1.10", "versioned_docs/version-1.9", "versioned_docs/version-next",
               "versioned_docs/version-10.0"]  # fmt: skip
    assert sorted(folders, key=folder_version_key, reverse=True) == [
        "versioned_docs/version-10.0",
        "versioned_docs/version-1.10",
        "versioned_docs/version-1.9",
        "versioned_docs/version-next",
    ]
    assert folder_version_key("main_versioned_docs/version-0.0.0")[0] == "main_versioned_docs"


def test_the_doubt_compounds_once_per_newer_older_version_and_a_docs_target_lifts_it():
    policy = Policy.default()
    legacy = [{"scope": "document", "reason": "0.9: unmaintained docs version", "marker": LEGACY_MARKER}]
    base = policy.deprecation.legacy_docs_multiplier
    one = deprecation_factor(legacy, policy, folder="versioned_docs/version-0.9")
    three = deprecation_factor(legacy, policy, folder="versioned_docs/version-0.9", newer_versions=2)
    assert one.multiplier == pytest.approx(base) and one.evidence.newer_older_versions is None
    assert three.multiplier == pytest.approx(base**3) and three.evidence.newer_older_versions == 2
    targeted = deprecation_factor(legacy, policy, docs_targeted=True, folder="versioned_docs/version-0.9",
                                  newer_versions=2)  # fmt: skip
    assert targeted.multiplier == 1.0
    folder_only = deprecation_factor([], policy, folder="versioned_docs/version-0.9", newer_versions=1)
    assert folder_only.multiplier == pytest.approx(policy.deprecation.version_folder_multiplier**2)


def test_copies_rank_newest_first_and_say_how_many_versions_are_newer(site):
    from trustindex.query.index import Index

    index = Index.open(data_dir=site)
    r = index.search(QUERY, k=10)
    assert not check(r, index.policy)
    order = [h["provenance"]["path"] for h in r["hits"]]
    served = {"docs/caching.md", "versioned_docs/version-3.0/caching.md"}  # the next docs and the latest release
    legacy = [f"versioned_docs/version-{v}/caching.md" for v in ("2.1", "1.4", "0.9")]
    assert set(order[:2]) == served and order[2:5] == legacy
    dep = {h["provenance"]["path"]: h["factors"]["deprecation"] for h in r["hits"]}
    base = index.policy.deprecation.legacy_docs_multiplier
    for n, v in enumerate(("2.1", "1.4", "0.9")):
        d = dep[f"versioned_docs/version-{v}/caching.md"]
        assert d["status"] == "legacy_docs_version"
        assert d["multiplier"] == pytest.approx(base ** (1 + n), abs=1e-6)
        assert d["evidence"].get("newer_older_versions") == (n or None)
    assert dep["versioned_docs/version-3.0/caching.md"]["multiplier"] == 1.0  # the latest release: not legacy


def test_a_docs_target_naming_an_old_version_lifts_the_compounded_doubt(site):
    from trustindex.query.index import Index

    r = Index.open(data_dir=site).search(QUERY, k=5, targets={"docs": "0.9"})
    assert r["hits"][0]["provenance"]["path"] == "versioned_docs/version-0.9/caching.md"
    assert r["hits"][0]["factors"]["deprecation"]["multiplier"] == 1.0
