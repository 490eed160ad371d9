"""Unpublished pages (query/unpublished.py): a passage of a file the docs site does not serve (a file or folder
name starting with ``_``, Docusaurus's default exclude) yields its place in the order to a served page, and only
its order key changes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from trustindex.query.unpublished import unpublished_key, unpublished_path, unpublished_rows
from trustindex.schemas.policy import Policy


class Snapshot:
    """The two things the rule reads of a SnapshotData: the documents table and each passage's document row."""

    def __init__(self, doc_paths: list[str], chunk_doc_row: list[int]):
        self.docs = type("Docs", (), {"table": pa.table({"path": doc_paths})})()
        self.chunk_doc_row = np.asarray(chunk_doc_row, dtype=np.int64)


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
    data = Snapshot(DOCS, [0, 0, 1, 2, 3, 4, -1])
    mask = unpublished_rows(data)
    assert mask.tolist() == [False, False, True, True, True, False, False]
    assert unpublished_rows(data) is mask  # worked out once a snapshot
    assert not mask.flags.writeable


def test_the_multiplier_scales_only_unpublished_keys_and_can_reorder_them():
    data = Snapshot(DOCS, [0, 1, 2, 4])
    rows = np.array([0, 1, 2, 3])
    key = np.array([0.70, 0.72, 0.50, 0.40])
    out = unpublished_key(key, rows, data, 0.94)
    assert np.allclose(out, [0.70, 0.72 * 0.94, 0.50 * 0.94, 0.40])
    assert np.argsort(-out).tolist()[:2] == [0, 1]  # the served page now ranks first
    assert np.argsort(-key).tolist()[:2] == [1, 0]  # the input is left as it was
    assert unpublished_key(key, rows, data, 1.0) is key  # 1 leaves the order untouched
    assert unpublished_key(np.zeros(0), np.zeros(0, dtype=np.int64), data, 0.94).size == 0


def test_the_default_policy_scales_unpublished_pages_and_an_operator_can_turn_it_off():
    assert Policy.from_dict({})["fusion"]["unpublished_multiplier"] == 0.94
    assert Policy.from_dict({"fusion": {"unpublished_multiplier": 1.0}})["fusion"]["unpublished_multiplier"] == 1.0
