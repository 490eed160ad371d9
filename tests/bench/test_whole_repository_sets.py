"""The judged corpora of whole repositories at a pinned commit (bench/corpus_build.py ``whole_repository``): Vue's
docs (the fifth corpus, bench/eval/vue/) and Pydantic's (the sixth, bench/eval/pydantic/). Each set is well-formed,
unique and apart from the other sets, and every judged path is a file of its pinned commit (their READMEs)."""

from __future__ import annotations

import pytest

from bench import eval_set
from bench.retrieval_corpora import CORPORA, PYDANTIC, PYDANTIC_COMMIT, QUESTION_KINDS, VUE, VUE_COMMIT
from tests.kits.judged_sets import assert_graded, assert_jsonl_files, assert_unique

# corpus, its id prefix, where its judged pages are, the pinned commit, and how many Markdown files that folder holds
SETS = {
    "vue": (VUE, "vue-", "src/", VUE_COMMIT, 119),
    "pydantic": (PYDANTIC, "pyd-", "", PYDANTIC_COMMIT, 100),
}
# the judged sets of each: users' words (_s), and the held-back checks' short symptoms (_t, Vue only: Pydantic stays
# the set no weight was chosen on)
JUDGED = {"vue": ("s", "t"), "pydantic": ("s",)}


@pytest.fixture(params=sorted(SETS))
def judged(request):
    corpus, prefix, folder, commit, pages = SETS[request.param]
    return corpus, prefix, folder, commit, pages, eval_set.load(corpus.eval_dir)


def test_every_line_is_one_json_object_with_the_known_keys(judged):
    corpus, prefix = judged[:2]
    names = [f"judged_{corpus.name}_{s}.jsonl" for s in JUDGED[corpus.name]] + [f"off_topic_{corpus.name}.jsonl"]
    assert_jsonl_files(corpus.eval_dir, names, prefix)


def test_unique_graded_and_apart_from_the_other_sets(judged):
    corpus, _, folder, _, _, queries = judged
    assert_unique(queries)
    assert_graded(queries, QUESTION_KINDS, lambda p: p.startswith(folder) and p.endswith(".md") and ".." not in p)
    others = {q.id for c in CORPORA.values() if c is not corpus for q in eval_set.load(c.eval_dir)}
    assert not {q.id for q in queries} & others
    assert {q.split for q in queries} == set(eval_set.SPLITS)
    assert "include" not in corpus.sources_toml("repo", "main")  # the whole repository, as a new user indexes it


def test_every_judged_path_is_a_page_of_the_pinned_commit(judged):
    import git

    corpus, _, folder, commit, count, queries = judged
    why = corpus.missing()
    if why:
        pytest.skip(why)
    listed = git.Repo(corpus.repository(corpus.work)[0]).git.ls_tree("-r", "--name-only", commit, folder or ".")
    pages = set(listed.splitlines())
    assert len([p for p in pages if p.endswith(".md")]) == count
    assert sorted({p for q in queries for p in q.relevant} - pages) == []
