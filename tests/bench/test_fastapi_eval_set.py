"""The fourth judged corpus: FastAPI's docs questions (bench/eval/fastapi/) are well-formed, unique, apart from the
other sets, and every judged path is an English page of the pinned commit (bench/eval/fastapi/README.md); the same
questions ask the whole repository, with its translations (the fastapi-repo corpus)."""

from __future__ import annotations

import pytest

from bench import eval_set
from bench.retrieval_corpora import (
    FASTAPI,
    FASTAPI_COMMIT,
    FASTAPI_REPO,
    FASTAPI_WHOLE,
    FLASK,
    QUESTION_KINDS,
    REACT,
    fastapi_missing,
)
from tests.kits.judged_sets import assert_graded, assert_jsonl_files, assert_unique

WHY_NO_FASTAPI = fastapi_missing()
ENGLISH = "docs/en/docs/"


@pytest.fixture(scope="module")
def queries():
    return eval_set.load(FASTAPI.eval_dir)


def test_every_line_is_one_json_object_with_the_known_keys():
    assert_jsonl_files(
        FASTAPI.eval_dir, ["judged_fastapi_s.jsonl", "judged_fastapi_t.jsonl", "off_topic_fastapi.jsonl"], "fastapi-"
    )


def test_unique_graded_and_apart_from_the_other_sets(queries):
    assert_unique(queries)
    assert_graded(queries, QUESTION_KINDS, lambda p: p.startswith(ENGLISH) and p.endswith(".md") and ".." not in p)
    others = {
        q.id for d in (None, REACT.eval_dir, FLASK.eval_dir) for q in (eval_set.load(d) if d else eval_set.load())
    }
    assert not {q.id for q in queries} & others
    assert {q.split for q in queries} == set(eval_set.SPLITS)


def test_the_whole_repository_asks_the_same_questions_with_no_include():
    assert FASTAPI_WHOLE.eval_dir == FASTAPI.eval_dir
    assert "include" not in FASTAPI_WHOLE.sources_toml("repo", "main")  # the default a new user's source reads
    assert f'include = ["{ENGLISH}**/*.md"]' in FASTAPI.sources_toml("repo", "main")


@pytest.mark.skipif(WHY_NO_FASTAPI is not None, reason=WHY_NO_FASTAPI or "")
def test_every_judged_path_is_an_english_page_of_the_pinned_commit(queries):
    import git

    pages = set(git.Repo(FASTAPI_REPO).git.ls_tree("-r", "--name-only", FASTAPI_COMMIT, "docs").splitlines())
    assert len([p for p in pages if p.startswith(ENGLISH) and p.endswith(".md")]) == 155
    assert sorted({p for q in queries for p in q.relevant} - pages) == []
