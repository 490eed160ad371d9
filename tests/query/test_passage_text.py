"""The query process reads passage text by row from a temporary copy (query/passage_text.py), never the whole
column into memory, and every search answers exactly as when the text was held in memory."""

from __future__ import annotations

import json
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trustindex.query.index import Index
from trustindex.query.passage_text import TEXT_COLUMN, PassageTexts
from trustindex.query.reader import SnapshotData
from trustindex.query.snapshot_passages import Passages
from trustindex.schemas.errors import SnapshotError

TEXTS = ["alpha", "", None, "βeta ünïcode ✓", "alpha", None, "gamma " * 500, "", "alpha", "delta"]


def _parquet(path, texts, row_group_size):
    pq.write_table(
        pa.table({"chunk_id": [str(i) for i in range(len(texts))], TEXT_COLUMN: texts}),
        path,
        row_group_size=row_group_size,
    )
    return path


@pytest.mark.parametrize("row_group_size", [3, 1000])
@pytest.mark.parametrize("spill", [True, False])
def test_rows_read_back_exactly(tmp_path, monkeypatch, row_group_size, spill):
    f = _parquet(tmp_path / "chunks.parquet", TEXTS, row_group_size)
    # no writable temporary directory: the decoded batches stay in memory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path if spill else tmp_path / "missing"))
    monkeypatch.setattr("trustindex.query.passage_text.READ_BATCH_ROWS", 4)  # batches that split row groups
    texts = PassageTexts(f, len(TEXTS))
    assert not texts.built
    rows = [9, 0, 3, 2, 6, 6, 7, 1]
    assert texts.take(rows) == [TEXTS[r] for r in rows]
    assert texts.built and texts.spilled is spill
    assert [texts[i] for i in range(len(TEXTS))] == TEXTS
    # the collapse key: equal exactly when the texts are equal (null only with null, "" only with "")
    for i, a in enumerate(TEXTS):
        for j, b in enumerate(TEXTS):
            assert (texts.key(i) == texts.key(j)) is (a == b), (i, j)
    # the digests the text groups are built from: the same equality, read in blocks smaller than the texts
    monkeypatch.setattr("trustindex.query.passage_text.DIGEST_BLOCK", 5)
    digests = texts.digests()
    assert len(digests) == len(TEXTS)
    for i, a in enumerate(TEXTS):
        for j, b in enumerate(TEXTS):
            assert (digests[i] == digests[j]) is (a == b), (i, j)
    if spill:  # the temporary copy is unlinked once mapped
        assert not list(tmp_path.glob("trustindex-text-*"))
    with pytest.raises(IndexError):
        texts.take([len(TEXTS)])


def test_row_count_mismatch_is_a_clear_error(tmp_path):
    f = _parquet(tmp_path / "chunks.parquet", TEXTS, 1000)
    with pytest.raises(SnapshotError, match="chunks.parquet: the text column has 10 rows, the chunks table 11"):
        PassageTexts(f, 11).build()


class EagerPassages(Passages):
    """The reader as it was: the whole text column in memory, identical passages grouped by their first row."""

    def __init__(self, chunks, passage_texts, chunk_doc_row):
        super().__init__(chunks, passage_texts, chunk_doc_row)
        self.all_text = pq.read_table(passage_texts.file, columns=[TEXT_COLUMN]).column(0).to_pylist()
        first: dict = {}
        self.groups = np.array([first.setdefault(t, i) for i, t in enumerate(self.all_text)], dtype=np.int64)

    def texts(self, rows):
        return [self.all_text[i] for i in rows]

    def text_groups(self):
        return self.groups


class EagerText(SnapshotData):
    passages_type = EagerPassages


QUERIES = [
    "How do I install the Compact compiler?",
    "counter contract circuit",
    "proof server docker",
    "what is a witness",
    "best lasagna recipe",
]


def test_search_answers_identical_to_text_in_memory(index):
    lazy = Index(SnapshotData(index.data.dir), index.policy)
    eager = Index(EagerText(index.data.dir), index.policy)
    assert TEXT_COLUMN not in lazy.data.chunks.table.column_names  # never read whole at open
    assert len(set(eager.data.passages.all_text)) < eager.data.n  # identical passages to collapse
    lazy.warm()
    collapsed = 0
    for q in QUERIES:
        for kw in ({"k": 10}, {"k": 3, "targets": ["compact-language=0.23"]}, {"k": 20, "strict": True}):
            a, b = lazy.search(q, **kw), eager.search(q, **kw)
            assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str), (q, kw)
            collapsed += sum(len(h["also_in"]) for h in a["hits"])
    assert collapsed  # the collapse of identical passages was exercised
    assert lazy.data.passages.passage_texts.spilled
