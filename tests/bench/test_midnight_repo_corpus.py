"""The real midnight-docs repository as a judged corpus (bench/retrieval_corpora.py MIDNIGHT_REPO): its pinned commit
holds byte for byte the pages of ../shared's corpus copy that bench/eval was judged on, so the same judged paths
name the same pages, and the cross-validation benches still tune over one copy of each question."""

from __future__ import annotations

import subprocess

import pytest

from bench import eval_set
from bench.retrieval_corpora import (
    CORPORA,
    CV_CORPORA,
    FASTAPI_WHOLE,
    FLASK_WHOLE,
    MIDNIGHT,
    MIDNIGHT_COMMIT,
    MIDNIGHT_REPO,
    MIDNIGHT_REPO_PATH,
    MIDNIGHT_TREE,
    PYDANTIC,
    midnight_repo_missing,
)
from tests.kits.realdata import REAL_DOCS, needs_real_docs

WHY_NO_REPO = midnight_repo_missing()
needs_midnight_repo = pytest.mark.skipif(WHY_NO_REPO is not None, reason=WHY_NO_REPO or "")


def test_it_asks_the_midnight_questions_and_is_left_out_of_cross_validation():
    assert MIDNIGHT_REPO.eval_dir == MIDNIGHT.eval_dir and MIDNIGHT_REPO.source == MIDNIGHT.source
    assert MIDNIGHT_REPO.work != MIDNIGHT.work
    assert MIDNIGHT_REPO.name in CORPORA and MIDNIGHT_REPO.name not in CV_CORPORA
    # the whole repositories ask the questions of others; Pydantic's are read as a check no weight was chosen on
    assert set(CV_CORPORA) == set(CORPORA) - {MIDNIGHT_REPO.name, FLASK_WHOLE.name, FASTAPI_WHOLE.name, PYDANTIC.name}


@needs_real_docs
@needs_midnight_repo
def test_the_pinned_commit_holds_the_corpus_copy_byte_for_byte():
    def blobs(*args: str, cwd=None) -> dict[str, str]:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout
        rows = (line.split("\t", 1) for line in out.splitlines())
        return {path: meta.split()[2] for meta, path in rows}

    git_dir = f"--git-dir={MIDNIGHT_REPO_PATH}"
    assert (
        subprocess.run(
            ["git", git_dir, "rev-parse", f"{MIDNIGHT_COMMIT}^{{tree}}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        == MIDNIGHT_TREE
    )
    pinned = {p: b for p, b in blobs(git_dir, "ls-tree", "-r", MIDNIGHT_TREE).items() if p.endswith((".md", ".mdx"))}
    copy = sorted(p.relative_to(REAL_DOCS).as_posix() for p in REAL_DOCS.rglob("*") if p.suffix in (".md", ".mdx"))
    hashed = subprocess.run(
        ["git", "hash-object", "--no-filters", "--stdin-paths"],
        input="\n".join(copy), cwd=REAL_DOCS, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert dict(zip(copy, hashed, strict=True)) == pinned
    judged = {p for q in eval_set.load() for p in q.relevant}
    assert judged and judged <= set(pinned)
