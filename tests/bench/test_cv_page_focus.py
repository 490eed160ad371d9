"""bench/cv_page_focus.py's cross-validation: folds by the query id alone, each fold scored by the row the other
folds rank best, the shipped row winning ties."""

from __future__ import annotations

import tomllib

import pytest

from bench.cv_page_focus import FOLDS, GRID, SHIPPED, cross_validated, fold
from trustindex.schemas.policy import Policy


def _table(better_by: float, ids: list[str]) -> dict:
    return {
        SHIPPED: {"a": {q: 0.5 for q in ids}},
        "other": {"a": {q: 0.5 + better_by for q in ids}},
    }


def test_folds_are_by_id_and_cover_every_fold():
    ids = [f"q{i}" for i in range(200)]
    assert {fold(q) for q in ids} == set(range(FOLDS))
    assert [fold(q) for q in ids] == [fold(q) for q in ids]


def test_a_row_better_everywhere_is_chosen_by_every_fold_and_a_tie_keeps_the_shipped_row():
    ids = [f"q{i}" for i in range(50)]
    means, chosen = cross_validated(_table(0.1, ids))
    assert chosen == ["other"] * FOLDS and means["a"] == pytest.approx(0.6)
    means, chosen = cross_validated(_table(0.0, ids))
    assert chosen == [SHIPPED] * FOLDS and means["a"] == pytest.approx(0.5)


def test_a_held_out_query_is_scored_by_the_row_the_other_folds_chose():
    ids = [f"q{i}" for i in range(100)]
    lucky = [q for q in ids if fold(q) == 0]
    table = _table(0.0, ids)
    for q in lucky:  # "other" is better only on fold 0's queries: fold 0 never sees that, the others do
        table["other"]["a"][q] = 1.0
    means, chosen = cross_validated(table)
    assert chosen[0] == SHIPPED and all(c == "other" for c in chosen[1:])
    assert means["a"] == pytest.approx(0.5)


def test_the_grid_starts_from_the_shipped_policy_and_names_only_the_focus_keys():
    assert GRID[SHIPPED] == ""
    for overlay in GRID.values():
        if overlay:
            given = tomllib.loads(overlay)
            assert set(given) == {"fusion"}
            assert set(given["fusion"]) <= {"page_focus_weight", "focus_share", "problem_section_weight"}
            Policy.from_dict(given)
