"""The second judged corpus (issue 43 item 5): React's docs questions of bench/eval/react/ are well-formed, unique,
split by id into halves that each hold every kind, and every judged path is a page of the pinned commit
(bench/eval/react/README.md says how they were judged)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench import eval_set
from bench.retrieval_corpora import (
    QUESTION_KINDS,
    REACT,
    REACT_COMMIT,
    REACT_INCLUDE,
    REACT_REPO,
    REACT_TREE,
    react_missing,
)
from tests.kits.judged_sets import assert_graded, assert_jsonl_files, assert_unique
from tests.kits.realdata import needs_real_docs
from trustindex.calibration.judged import IN_DOMAIN, SPLITS

WHY_NO_REACT = react_missing()
needs_react_docs = pytest.mark.skipif(WHY_NO_REACT is not None, reason=WHY_NO_REACT or "")
PAGES = REACT_INCLUDE.split("**")[0]  # src/content/: every judged file is a Markdown page under it


@pytest.fixture(scope="module")
def queries():
    return eval_set.load(REACT.eval_dir)


def test_every_line_is_one_json_object_with_the_known_keys():
    names = ["judged_react.jsonl", "judged_react_s.jsonl", "judged_react_t.jsonl", "off_topic_react.jsonl"]
    assert_jsonl_files(REACT.eval_dir, names, "react-")


def test_ids_and_texts_are_unique_and_apart_from_the_midnight_set(queries):
    assert_unique(queries)
    midnight = eval_set.load()
    assert not {q.id for q in queries} & {q.id for q in midnight}
    assert not any(p.startswith(PAGES) for q in midnight for p in q.relevant)  # the Midnight loaders never read these


def test_in_domain_questions_grade_pages_and_off_topic_ones_none(queries):
    assert_graded(queries, QUESTION_KINDS, lambda p: p.startswith(PAGES) and p.endswith(".md") and ".." not in p)


def test_each_half_holds_every_kind_and_the_off_topic_groups(queries):
    in_domain = [q for q in queries if q.group == IN_DOMAIN]
    assert len(in_domain) >= 40
    for split in SPLITS:
        kinds = Counter(q.kind for q in queries if q.split == split)
        assert sum(kinds[k] for k in QUESTION_KINDS) >= 30, (split, kinds)
        assert all(kinds[k] >= 3 for k in QUESTION_KINDS), (split, kinds)
        assert kinds["off-topic"] + kinds["near-domain"] >= 5, (split, kinds)


@needs_real_docs
@needs_react_docs
def test_every_judged_path_is_a_page_of_the_pinned_commit(queries):
    import git

    repo = git.Repo(REACT_REPO)
    assert repo.commit(REACT_COMMIT).tree.hexsha == REACT_TREE
    pages = set(repo.git.ls_tree("-r", "--name-only", REACT_TREE, PAGES).splitlines())
    assert len(pages) == 223  # what bench/eval/react/README.md counts
    missing = sorted({p for q in queries for p in q.relevant} - pages)
    assert missing == []
