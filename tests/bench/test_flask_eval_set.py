"""The third judged corpus: Flask's docs questions (bench/eval/flask/) are well-formed, unique, apart from the other
sets, and every judged path is a reStructuredText page of the pinned commit (bench/eval/flask/README.md); the
questions about versions and changes asked of the whole repository (bench/eval/flask-repo/) judge its files."""

from __future__ import annotations

import pytest

from bench import eval_set
from bench.retrieval_corpora import (
    FLASK,
    FLASK_COMMIT,
    FLASK_REPO,
    FLASK_WHOLE,
    QUESTION_KINDS,
    REACT,
    flask_missing,
)
from tests.kits.judged_sets import assert_graded, assert_jsonl_files, assert_unique

WHY_NO_FLASK = flask_missing()


@pytest.fixture(scope="module")
def queries():
    return eval_set.load(FLASK.eval_dir)


def test_every_line_is_one_json_object_with_the_known_keys():
    assert_jsonl_files(
        FLASK.eval_dir,
        ["judged_flask.jsonl", "judged_flask_s.jsonl", "judged_flask_t.jsonl", "off_topic_flask.jsonl"],
        "flask-",
    )


def test_unique_graded_and_apart_from_the_other_sets(queries):
    assert_unique(queries)
    assert_graded(queries, QUESTION_KINDS, lambda p: p.startswith("docs/") and p.endswith(".rst") and ".." not in p)
    others = {q.id for q in eval_set.load()} | {q.id for q in eval_set.load(REACT.eval_dir)}
    assert not {q.id for q in queries} & others
    assert {q.split for q in queries} == set(eval_set.SPLITS)


@pytest.mark.skipif(WHY_NO_FLASK is not None, reason=WHY_NO_FLASK or "")
def test_every_judged_path_is_a_page_of_the_pinned_commit(queries):
    import git

    pages = set(git.Repo(FLASK_REPO).git.ls_tree("-r", "--name-only", FLASK_COMMIT, "docs").splitlines())
    assert len([p for p in pages if p.endswith(".rst")]) == 76
    assert sorted({p for q in queries for p in q.relevant} - pages) == []


def test_the_whole_repository_asks_the_docs_questions_and_its_own():
    own = eval_set.load(FLASK_WHOLE.eval_dir)
    assert_unique(FLASK_WHOLE.questions())
    assert_graded(own, ("version-scoped",), lambda p: p.endswith((".rst", ".md")) and ".." not in p)
    assert len(own) >= 14 and all(q.id.startswith("flask-v") for q in own)
    assert {q.id for q in FLASK_WHOLE.questions()} == {q.id for q in own} | {
        q.id for q in eval_set.load(FLASK.eval_dir)
    }
    assert "include" not in FLASK_WHOLE.sources_toml("repo", "main")  # the default a new user's source reads


@pytest.mark.skipif(WHY_NO_FLASK is not None, reason=WHY_NO_FLASK or "")
def test_every_version_question_judges_files_of_the_pinned_commit():
    import git

    files = set(git.Repo(FLASK_REPO).git.ls_tree("-r", "--name-only", FLASK_COMMIT).splitlines())
    judged = {p for q in eval_set.load(FLASK_WHOLE.eval_dir) for p in q.relevant}
    assert "CHANGES.rst" in judged and sorted(judged - files) == []
