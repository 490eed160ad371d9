"""The whole judged set of issue 16 (every file of bench/eval/ that bench/eval_set.py loads): well-formed, unique,
split by id, every judged path a real corpus file (bench/eval/README.md says how the judgments were made)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.eval_set import EVAL_DIR, IN_DOMAIN_FILES, OFF_TOPIC_FILES, load
from tests.kits.judged_sets import assert_graded, assert_unique
from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.calibration.judged import IN_DOMAIN, OFF_TOPIC_KINDS, SPLITS

IN_DOMAIN_KINDS = {"how-to", "concept", "api-identifier", "error-message", "version-scoped", IN_DOMAIN}


@pytest.fixture(scope="module")
def queries():
    return load()


def _files(patterns):
    return [EVAL_DIR / patterns[0], *sorted(EVAL_DIR.glob(patterns[1]))]


def test_every_line_of_every_file_is_one_json_object_with_the_known_keys():
    for f in _files(IN_DOMAIN_FILES) + _files(OFF_TOPIC_FILES):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                obj = json.loads(line)
                assert set(obj) <= {"id", "query", "kind", "relevant"}, f"{f.name}:{n}"


def test_ids_and_query_texts_are_unique_across_files(queries):
    assert_unique(queries)


def test_in_domain_queries_grade_files_and_off_topic_ones_none(queries):
    assert_graded(queries, IN_DOMAIN_KINDS, lambda p: p == p.strip() and not p.startswith("/") and "\\" not in p)


def test_off_topic_files_hold_only_off_topic_queries():
    for f in _files(OFF_TOPIC_FILES):
        kinds = {json.loads(ln).get("kind") for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()}
        assert kinds <= set(OFF_TOPIC_KINDS), f.name


def test_both_splits_hold_every_group(queries):
    for split in SPLITS:
        groups = Counter(q.group for q in queries if q.split == split)
        assert groups[IN_DOMAIN] >= 30 and groups["off-topic"] >= 10 and groups["near-domain"] >= 10, (split, groups)


@needs_real_docs
def test_every_judged_path_exists_in_the_corpus(queries):
    missing = [(q.id, p) for q in queries for p in q.relevant if not (REAL_DOCS / p).is_file()]
    assert missing == []
