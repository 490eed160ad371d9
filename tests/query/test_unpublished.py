"""Unpublished pages (query/unpublished.py): a passage of a file the docs site does not serve (a file or folder
name starting with ``_``, Docusaurus's default exclude) yields its place in the order to a served page, and only
its order key changes."""

from __future__ import annotations

import numpy as np

from trustindex.query.unpublished import unpublished_key, unpublished_mask, unpublished_path
from trustindex.schemas.policy import Policy

DOCS = [
    "docs/guides/install.mdx",  # served
    "docs/tutorials/_beginner/_index.mdx",  # hidden section
    "blog/_2026-01-21-draft.mdx",  # draft post
    "docs/concepts/_partial_example.mdx",  # partial
    "docs/my_notes/setup.md",  # an underscore inside a name is not a leading one
]


def test_a_leading_underscore_in_any_folder_or_file_name_marks_a_page_unpublished():
    assert [unpublished_path(p) for p in DOCS] == [False, True, True, True, False]
    assert unpublished_path("_drafts/page.md") and not unpublished_path("docs/page_.md")


def test_each_passage_reads_its_pages_mark_and_a_passage_without_a_document_is_served():
    mask = unpublished_mask(DOCS, np.array([0, 0, 1, 2, 3, 4, -1]))
    assert mask.tolist() == [False, False, True, True, True, False, False]
    assert not mask.flags.writeable


def test_a_snapshot_works_its_marks_out_once(index):
    data = index.state.data
    mask = data.unpublished_rows()
    assert data.unpublished_rows() is mask
    paths = data.docs.table.column("path").to_pylist()
    rows = data.chunk_doc_row
    assert mask.tolist() == [r >= 0 and unpublished_path(paths[r]) for r in rows.tolist()]


def test_the_multiplier_scales_only_unpublished_keys_and_can_reorder_them():
    marks = unpublished_mask(DOCS, np.array([0, 1, 2, 4]))
    rows = np.array([0, 1, 2, 3])
    key = np.array([0.70, 0.72, 0.50, 0.40])
    out = unpublished_key(key, rows, marks, 0.94)
    assert np.allclose(out, [0.70, 0.72 * 0.94, 0.50 * 0.94, 0.40])
    assert np.argsort(-out).tolist()[:2] == [0, 1]  # the served page now ranks first
    assert np.argsort(-key).tolist()[:2] == [1, 0]  # the input is left as it was
    assert unpublished_key(key, rows, marks, 1.0) is key  # 1 leaves the order untouched
    assert unpublished_key(np.zeros(0), np.zeros(0, dtype=np.int64), marks, 0.94).size == 0


def test_the_default_policy_scales_unpublished_pages_and_an_operator_can_turn_it_off():
    assert Policy.from_dict({}).fusion.unpublished_multiplier == 0.94
    assert Policy.from_dict({"fusion": {"unpublished_multiplier": 1.0}}).fusion.unpublished_multiplier == 1.0
