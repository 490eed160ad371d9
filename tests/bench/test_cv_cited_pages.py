"""bench/cv_cited_pages.py's grid: the shipped policy first, then overlays that name only the cited term's keys, each a
valid policy (the procedure is bench/cv_page_focus.py's, tested there)."""

from __future__ import annotations

import tomllib

from bench.cv_cited_pages import GRID
from bench.cv_page_focus import SHIPPED
from trustindex.schemas.policy import Policy


def test_the_grid_starts_from_the_shipped_policy_and_names_only_the_cited_keys():
    assert next(iter(GRID)) == SHIPPED and GRID[SHIPPED] == ""
    weights = set()
    for overlay in list(GRID.values())[1:]:
        given = tomllib.loads(overlay)
        assert set(given) == {"fusion"} and set(given["fusion"]) == {"cited_weight", "cited_passages", "cited_half"}
        weights.add(given["fusion"]["cited_weight"])
        assert Policy.from_dict(given).policy_id != Policy.load(None).policy_id  # a weighted term renames the policy
    assert min(weights) > 0
