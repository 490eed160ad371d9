"""The fifth judged corpus: Vue's docs questions (bench/eval/vue/) are well-formed, unique, apart from the other
sets, and every judged path is a page of the pinned commit (bench/eval/vue/README.md)."""

from __future__ import annotations

import pytest

from bench import eval_set
from bench.retrieval_corpora import CORPORA, QUESTION_KINDS, VUE, VUE_COMMIT, VUE_REPO, vue_missing
from tests.kits.judged_sets import assert_graded, assert_jsonl_files, assert_unique

WHY_NO_VUE = vue_missing()


@pytest.fixture(scope="module")
def queries():
    return eval_set.load(VUE.eval_dir)


def test_every_line_is_one_json_object_with_the_known_keys():
    assert_jsonl_files(VUE.eval_dir, ["judged_vue_s.jsonl", "off_topic_vue.jsonl"], "vue-")


def test_unique_graded_and_apart_from_the_other_sets(queries):
    assert_unique(queries)
    assert_graded(queries, QUESTION_KINDS, lambda p: p.startswith("src/") and p.endswith(".md") and ".." not in p)
    others = {q.id for c in CORPORA.values() if c is not VUE for q in eval_set.load(c.eval_dir)}
    assert not {q.id for q in queries} & others
    assert {q.split for q in queries} == set(eval_set.SPLITS)
    assert "include" not in VUE.sources_toml("repo", "main")  # the whole repository, as a new user indexes it


@pytest.mark.skipif(WHY_NO_VUE is not None, reason=WHY_NO_VUE or "")
def test_every_judged_path_is_a_page_of_the_pinned_commit(queries):
    import git

    pages = set(git.Repo(VUE_REPO).git.ls_tree("-r", "--name-only", VUE_COMMIT, "src").splitlines())
    assert len([p for p in pages if p.endswith(".md")]) == 119
    assert sorted({p for q in queries for p in q.relevant} - pages) == []
