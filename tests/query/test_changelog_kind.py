"""A changelog (every release's changes in one file) names most features in passing, one terse line each: it yields
to the page about the feature, unless the question asks about versions or changes, where it is the answer (issue
43: Flask's CHANGES.rst stood in the top 5 of half the Flask questions once the whole repository was indexed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from tests.kits.gitutil import RepoBuilder, refresh_one_source
from trustindex.query.explain import check
from trustindex.query.trust import combine, reference_day
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.question_form import asks_about_changes

GUIDE = """# Sessions

## The session cookie's domain

Set `SESSION_COOKIE_DOMAIN` to the domain the session cookie is sent to. Leave it unset to send the session cookie
to the host that set it only; set it to the parent domain to share the session between its subdomains.
"""
CHANGELOG = """# Changes

## Version 2.3.0

- The session cookie domain no longer falls back to SERVER_NAME: set `SESSION_COOKIE_DOMAIN` explicitly.
- Add `SESSION_COOKIE_PARTITIONED`.

## Version 2.2.0

- Drop support for Python 3.7.
"""
HOW = "how do I share the session cookie between subdomains with SESSION_COOKIE_DOMAIN"
CHANGED = "what changed about SESSION_COOKIE_DOMAIN and SERVER_NAME in 2.3"


@pytest.fixture(scope="module")
def index(tmp_path_factory, prefect_harness):
    from trustindex.query.index import Index

    root: Path = tmp_path_factory.mktemp("changelog")
    files = {"docs/sessions.md": GUIDE, "CHANGES.md": CHANGELOG}
    RepoBuilder(root / "app").commit(files, "a guide and the changelog", when=datetime(2026, 6, 1, tzinfo=UTC))
    return Index.open(data_dir=refresh_one_source(root, "app", "app", ("**/*.md",)))


def _page_kind(r: dict, path: str) -> dict:
    return next(h["factors"]["page_kind"] for h in r["hits"] if h["provenance"]["path"] == path)


def test_the_wording_of_a_question_about_changes():
    assert asks_about_changes(CHANGED) and not asks_about_changes(HOW)
    assert asks_about_changes("since which version can I write async views")
    assert asks_about_changes("ImportError: cannot import name 'Markup' from 'flask'")  # what a removal raises
    assert not asks_about_changes("why does my component render twice in development")


def test_a_changelog_yields_to_the_guide_unless_the_question_asks_about_changes(index):
    how = index.search(HOW, k=5)
    assert [h["provenance"]["path"] for h in how["hits"]][:2] == ["docs/sessions.md", "CHANGES.md"]
    doubted = _page_kind(how, "CHANGES.md")
    assert doubted["status"] == "changelog" and doubted["multiplier"] == index.policy.page_kind.changelog < 1
    assert doubted["evidence"]["asked_about_changes"] is False
    assert "asked_about_changes" not in _page_kind(how, "docs/sessions.md")["evidence"]  # a changelog's only

    changed = index.search(CHANGED, k=5)
    assert changed["hits"][0]["provenance"]["path"] == "CHANGES.md"
    lifted = _page_kind(changed, "CHANGES.md")
    assert lifted["multiplier"] == index.policy.page_kind.release_notes  # weighs as release notes do
    assert lifted["evidence"]["asked_about_changes"] is True
    assert check(how, index.policy) == [] and check(changed, index.policy) == []


def test_the_lifted_prior_equals_its_explained_factors(index):
    today = reference_day()
    prior = TrustPrior(index.data, index.policy, today)
    for asked in (False, True):
        expected = [combine(index._factors(i, today, changes_asked=asked)) for i in range(index.data.n)]
        np.testing.assert_array_equal(np.clip(prior.for_targets(False, asked), 0, 1), expected)
    changelog = prior.for_targets(False, True) > prior.base
    assert changelog.any() and not changelog.all()
