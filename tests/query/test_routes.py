"""Routed before unrouted (query/routes.py, issue 43 item 2a): a passage of a page the docs site does not serve ranks
below every served candidate, its ordering score × the lowest served one's, shown as ``ranking_terms.route``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from trustindex.query.routes import UNROUTED_CODE, route_codes, route_term
from trustindex.query.score import order, yield_unrouted
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.page_routes import INCLUDED, OFF_SITE, ROUTE_STATUSES, ROUTED, UNROUTED, unpublished_path
from trustindex.schemas.policy import Policy

DOCS = [
    "docs/guides/install.mdx",  # served
    "docs/tutorials/_beginner/_index.mdx",  # hidden section
    "blog/_2026-01-21-draft.mdx",  # draft post
    "docs/concepts/_partial_example.mdx",  # partial, rendered by a page
    "docs/my_notes/setup.md",  # an underscore inside a name is not a leading one
]


def _codes(docs: pa.Table, rows: list[int]) -> list[str]:
    return [ROUTE_STATUSES[c] for c in route_codes(docs, np.array(rows)).tolist()]


def test_a_leading_underscore_in_any_folder_or_file_name_is_the_rule_of_old_snapshots():
    assert [unpublished_path(p) for p in DOCS] == [False, True, True, True, False]
    assert unpublished_path("_drafts/page.md") and not unpublished_path("docs/page_.md")
    old = pa.table({"path": DOCS})  # written before documents had a route
    assert _codes(old, [0, 1, 2, 3, 4, -1]) == [OFF_SITE, UNROUTED, UNROUTED, UNROUTED, OFF_SITE, OFF_SITE]


def test_each_passage_reads_its_pages_stored_status_and_a_rendered_partial_is_included():
    docs = pa.table(
        {
            "path": DOCS,
            "route": [ROUTED, UNROUTED, UNROUTED, UNROUTED, OFF_SITE],
            "part_of": ["", "", "", "docs/concepts/page.mdx", ""],
        }
    )
    codes = route_codes(docs, np.array([0, 0, 1, 2, 3, 4, -1]))
    assert [ROUTE_STATUSES[c] for c in codes] == [ROUTED, ROUTED, UNROUTED, UNROUTED, INCLUDED, OFF_SITE, OFF_SITE]
    assert not codes.flags.writeable


def test_an_unrouted_candidate_yields_to_every_served_one_and_keeps_its_order_among_the_unrouted():
    score = np.array([0.40, 0.90, 0.75, 0.30, 0.05])
    unrouted = np.array([False, True, True, False, False])
    out, floor = yield_unrouted(score, unrouted, True)
    assert floor == 0.05  # the lowest served candidate's score
    assert np.allclose(out, [0.40, 0.90 * 0.05, 0.75 * 0.05, 0.30, 0.05])
    ranked = order(out, np.ones(5), np.arange(5), unrouted).tolist()
    assert ranked == [0, 3, 4, 1, 2]  # every served one first; the drafts in their own order below
    assert np.argsort(-score).tolist()[0] == 1  # the input is left as it was
    # nothing yields: the rule off, no unrouted candidate, or no served one
    for s, u, on in ((score, unrouted, False), (score, np.zeros(5, bool), True), (score, np.ones(5, bool), True)):
        kept, none = yield_unrouted(s, u, on)
        assert kept is s and none is None


def test_on_an_equal_shown_score_a_served_candidate_ranks_first():
    score = np.array([0.5, 0.5, 0.5])
    unrouted = np.array([True, False, True])
    assert order(score, np.array([0.9, 0.1, 0.5]), np.arange(3), unrouted).tolist() == [1, 0, 2]


def test_the_term_shows_the_status_and_the_floor_an_unrouted_page_took():
    assert route_term(UNROUTED_CODE, 0.125).to_json() == {"status": UNROUTED, "served_floor": 0.125}
    assert route_term(UNROUTED_CODE, None).to_json() == {"status": UNROUTED}
    assert route_term(ROUTE_STATUSES.index(INCLUDED), 0.125).to_json() == {"status": INCLUDED}


def test_the_default_policy_has_unrouted_pages_yield_and_an_operator_can_turn_it_off():
    assert Policy.from_dict({}).fusion.unrouted_yields is True
    assert Policy.from_dict({"fusion": {"unrouted_yields": False}}).fusion.unrouted_yields is False
    with pytest.raises(ConfigError, match=r"fusion\.unpublished_multiplier: unknown key"):
        Policy.from_dict({"fusion": {"unpublished_multiplier": 0.94}})


def test_a_snapshot_works_its_statuses_out_once(index):
    data = index.state.data
    codes = data.route_codes()
    assert data.route_codes() is codes
    rows = data.chunk_doc_row
    routes = data.docs.table.column("route").to_pylist()
    part_of = data.docs.table.column("part_of").to_pylist()
    for r, c in zip(rows.tolist(), codes.tolist(), strict=True):
        assert ROUTE_STATUSES[c] == (INCLUDED if part_of[r] else routes[r])
