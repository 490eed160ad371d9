"""The judged corpora that bench/bench_retrieval.py measures (``--corpus``): where each one's pages come from, how
its snapshot is built by a real ``trustindex refresh``, and where its judged questions are.

- ``midnight-docs``: ``../shared/corpus/midnight-docs`` (a folder), committed as one git commit; the questions of
  ``bench/eval/`` (every ranking weight was tuned on its dev half);
- ``midnight-repo``: the same pages as the real midnight-docs repository publishes them (its config and history),
  the same questions; read like ``react``'s, from ``$TRUSTINDEX_REAL_MIRRORS/midnightntwrk+midnight-docs/repo``;
- ``react``: React's documentation, the repository reactjs/react.dev at a pinned commit, read from a complete bare
  copy at ``$TRUSTINDEX_REAL_MIRRORS/reactjs+react.dev/repo`` (default ``../repos`` beside the checkout; get it with
  the search tool's ``fetch`` and ``../shared/tools/repair_mirrors.sh``); the questions of ``bench/eval/react/``,
  judged before any system ranked them (issue 43 item 5; README there).  Nothing of it is committed here;
- ``flask``, ``flask-repo``, ``fastapi``, ``fastapi-repo``, ``vue``, ``pydantic``: the same way, each a public
  project's repository at a pinned commit (Sphinx, MkDocs, VitePress and MkDocs sites), the questions of
  ``bench/eval/<project>/``, written and judged before any system ranked them.

How a corpus is built: bench/corpus_build.py.

Each snapshot is built once under the bench work folder and reused by later runs built with the same extractor
and index format and from the same source configuration (``built_with``); one built otherwise is refreshed first.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from bench.common import CORPUS, WORK, setup_env
from bench.corpus_build import (  # noqa: F401  (re-exported: the benches and tests read them from here)
    EVAL_DIR,
    MIRRORS,
    QUESTION_KINDS,
    Corpus,
    PinnedRepository,
    at_pinned_commit,
    build_snapshot,
    built_with,
    folder_as_commit,
    pinned_missing,
    whole_repository,
)

# The React docs at the commit the questions were judged against (bench/eval/react/README.md): the GitHub commit,
# the commit of the repaired local copy (repair_mirrors.sh drops commit signatures, so its ids differ) and the tree
# both hold.  The bench indexes the local commit; the test checks the judged paths against the tree.
REACT_REPO = MIRRORS / "reactjs+react.dev" / "repo"
REACT_UPSTREAM_COMMIT = "12d692da47e77cdc558b928fcfbaf4e71c6d0cec"
REACT_COMMIT = "98070a8805eb49e81abb92cec61d22c98c218aae"
REACT_TREE = "38f4e1bb44b0eea8ea8cf29deb6f4c1234c72d4b"
REACT_INCLUDE = "src/content/**/*.md"
REACT_SITE = "https://react.dev"


def react_missing() -> str | None:
    """Why the React docs cannot be read here (no bare copy, or one without the pinned tree), else None."""
    return pinned_missing(REACT_REPO, "the React docs repository", REACT_TREE, REACT_TREE, "react")


MIDNIGHT = Corpus(
    name="midnight-docs",
    title="Midnight",
    about="every Markdown/MDX file of ../shared/corpus/midnight-docs, the questions of bench/eval/.",
    source="midnight-docs",
    publisher="midnight-foundation",
    publisher_name="Midnight Foundation",
    eval_dir=EVAL_DIR,
    work=WORK / "retrieval",
    missing=lambda: None if CORPUS.is_dir() else f"the real docs corpus is not at {CORPUS}",
    repository=folder_as_commit(CORPUS),
)
REACT = Corpus(
    name="react",
    title="React",
    about=f"React's documentation, {REACT_INCLUDE} of reactjs/react.dev at {REACT_UPSTREAM_COMMIT[:12]} (tree "
    f"{REACT_TREE[:12]}; site_url {REACT_SITE}), the questions of bench/eval/react/ (judged before any ranking).",
    source="react.dev",
    publisher="react",
    publisher_name="React (react.dev)",
    eval_dir=EVAL_DIR / "react",
    work=WORK / "retrieval-react",
    missing=react_missing,
    repository=at_pinned_commit(REACT_REPO, REACT_COMMIT),
    include=REACT_INCLUDE,
    extra_include="",
    site_url=REACT_SITE,
)
# A third corpus in another page format (Sphinx, reStructuredText): Flask's documentation, every docs/**/*.rst of
# pallets/flask at a pinned commit, read from a bare copy at $TRUSTINDEX_REAL_MIRRORS/pallets+flask/repo (the search
# tool's snapshot lacks an old large blob, so its history is not whole: the pages are archived from the pinned tree
# and committed once, like the Midnight folder); the questions of bench/eval/flask/ (judged before any ranking).
FLASK_REPO = MIRRORS / "pallets+flask" / "repo"
FLASK_COMMIT = "2ac89889f4cc330eabd50f295dcef02828522c69"
FLASK_TREE = "44eba24f6f4e42a94760fe4c6968e71c209f504c"
FLASK_INCLUDE = "docs/**/*.rst"
FLASK_SITE = "https://flask.palletsprojects.com/en/stable"  # its docs/ as Read the Docs publishes them


def flask_missing() -> str | None:
    """Why the Flask docs cannot be read here, else None."""
    return pinned_missing(FLASK_REPO, "the Flask repository", FLASK_COMMIT, FLASK_TREE, "flask")


def _flask_repository(work: Path) -> tuple[str, str]:
    """The pinned commit's docs/ folder, archived (blobs read, nothing checked out) and committed once."""
    pages = work / "pages"
    if pages.exists():
        shutil.rmtree(pages)
    pages.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(FLASK_REPO), "archive", "--format=tar", FLASK_COMMIT, "docs"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(pages, filter="data")
    return folder_as_commit(pages, author="Flask docs corpus")(work)


FLASK = Corpus(
    name="flask",
    title="Flask",
    about=f"Flask's documentation (Sphinx, reStructuredText), {FLASK_INCLUDE} of pallets/flask at {FLASK_COMMIT[:12]} "
    "(committed once), the questions of bench/eval/flask/ (judged before any ranking).",
    source="flask",
    publisher="pallets",
    publisher_name="Pallets (Flask)",
    eval_dir=EVAL_DIR / "flask",
    work=WORK / "retrieval-flask",
    missing=flask_missing,
    repository=_flask_repository,
    include=FLASK_INCLUDE,
    extra_include="",
)
# The same Midnight pages as they are published: the real midnight-docs repository at the commit the corpus copy
# was taken from (the copy's 2,426 pages are that commit's Markdown/MDX, byte for byte), with its Docusaurus config
# (routes, legacy docs versions, the blog) and its history (freshness), read from the bare copy at
# $TRUSTINDEX_REAL_MIRRORS/midnightntwrk+midnight-docs/repo.  The questions are bench/eval's, same paths and split:
# what a user who indexes the repository gets, where the corpus copy (no config, one commit) had hidden the legacy
# demotion from every tuning run (issue 43).
MIDNIGHT_REPO_PATH = MIRRORS / "midnightntwrk+midnight-docs" / "repo"
MIDNIGHT_UPSTREAM_COMMIT = "bbdd5ee38965a46f96782e889c4eb3e79903e542"
MIDNIGHT_COMMIT = "8e5b336d1238bcbecd3295cb75e2dbc298fffe66"
MIDNIGHT_TREE = "512a05941f3bbe3f89267db4aef89ba2b0ec4bbc"
MIDNIGHT_SITE = "https://docs.midnight.network"


def midnight_repo_missing() -> str | None:
    """Why the midnight-docs repository cannot be read here, else None."""
    return pinned_missing(MIDNIGHT_REPO_PATH, "the midnight-docs repository", MIDNIGHT_COMMIT, MIDNIGHT_TREE, ".")


def _midnight_repository(work: Path) -> tuple[str, str]:
    """The bare copy itself at the pinned commit; the corpus copy's embeddings seed its cache (same pages, same
    embedded texts, keyed by content hash), so its first build embeds only what the config changes."""
    cache, seed = work / "data" / "cache" / "embeddings", MIDNIGHT.work / "data" / "cache" / "embeddings"
    if not cache.exists() and seed.is_dir():
        shutil.copytree(seed, cache)
    return at_pinned_commit(MIDNIGHT_REPO_PATH, MIDNIGHT_COMMIT)(work)


MIDNIGHT_REPO = Corpus(
    name="midnight-repo",
    title="Midnight, the repository",
    about=f"the real midnight-docs repository at {MIDNIGHT_UPSTREAM_COMMIT[:12]} (the commit ../shared's corpus copy "
    f"was taken from) with its Docusaurus config and history (site_url {MIDNIGHT_SITE}), the questions of bench/eval/.",
    source="midnight-docs",
    publisher="midnight-foundation",
    publisher_name="Midnight Foundation",
    eval_dir=EVAL_DIR,
    work=WORK / "retrieval-midnight-repo",
    missing=midnight_repo_missing,
    repository=_midnight_repository,
    site_url=MIDNIGHT_SITE,
    heading="Retrieval quality on the real midnight-docs repository (issue 43)",
)
# Flask as a new user indexes it: the whole repository at the pinned commit with no include (every Markdown, MDX and
# reStructuredText file: the docs, CHANGES.rst, the READMEs), its real history, read from the bare copy; Flask's
# docs questions asked again, and questions about versions and changes (bench/eval/flask-repo/) that its changelog
# answers (issue 43: the changelog page kind's doubt, and its lift by a question about changes).
FLASK_WHOLE = Corpus(
    name="flask-repo",
    title="Flask, the whole repository",
    about=f"the whole pallets/flask repository at {FLASK_COMMIT[:12]} with no include (the default: every Markdown, "
    f"MDX and reStructuredText file) and its history (site_url {FLASK_SITE}: Sphinx, dirhtml as its "
    ".readthedocs.yaml says), the questions of bench/eval/flask/ and bench/eval/flask-repo/.",
    source="flask",
    publisher="pallets",
    publisher_name="Pallets (Flask)",
    eval_dir=EVAL_DIR / "flask-repo",
    work=WORK / "retrieval-flask-repo",
    missing=flask_missing,
    repository=at_pinned_commit(FLASK_REPO, FLASK_COMMIT),
    include="",
    extra_include="",
    site_url=FLASK_SITE,
    heading="Retrieval quality on Flask's whole repository, as a new user indexes it (issue 43)",
    also_asks=(EVAL_DIR / "flask",),
)
# A fourth project and a third page format (MkDocs): FastAPI's documentation, read from the bare copy at
# $TRUSTINDEX_REAL_MIRRORS/fastapi+fastapi/repo at a pinned commit.  Its docs/ holds the English pages and a
# translation of most of them in each of twelve languages (docs/<lang>/docs/): FASTAPI is the English pages alone,
# FASTAPI_WHOLE the whole repository with no include, as a new user indexes it; the same questions
# (bench/eval/fastapi/, judged before any ranking) ask both.
FASTAPI_REPO = MIRRORS / "fastapi+fastapi" / "repo"
FASTAPI_COMMIT = "c3f316b7e814667e8ee81e03a7330d00ee61e45c"
FASTAPI_TREE = "99e67ce7923ae58e408d9eb0afaf2ef039bfa85f"
FASTAPI_INCLUDE = "docs/en/docs/**/*.md"
FASTAPI_SITE = "https://fastapi.tiangolo.com"  # its docs/en/mkdocs.yml serves docs/en/docs/ at the site's root


def fastapi_missing() -> str | None:
    """Why the FastAPI repository cannot be read here, else None."""
    return pinned_missing(FASTAPI_REPO, "the FastAPI repository", FASTAPI_COMMIT, FASTAPI_TREE, "fastapi")


FASTAPI = Corpus(
    name="fastapi",
    title="FastAPI",
    about=f"FastAPI's English documentation (MkDocs), {FASTAPI_INCLUDE} of fastapi/fastapi at "
    f"{FASTAPI_COMMIT[:12]} (site_url {FASTAPI_SITE}), the questions of bench/eval/fastapi/ (judged before any "
    "ranking).",
    source="fastapi",
    publisher="fastapi",
    publisher_name="FastAPI",
    eval_dir=EVAL_DIR / "fastapi",
    work=WORK / "retrieval-fastapi",
    missing=fastapi_missing,
    repository=at_pinned_commit(FASTAPI_REPO, FASTAPI_COMMIT),
    include=FASTAPI_INCLUDE,
    extra_include="",
    site_url=FASTAPI_SITE,
)
FASTAPI_WHOLE = Corpus(
    name="fastapi-repo",
    title="FastAPI, the whole repository",
    about=f"the whole fastapi/fastapi repository at {FASTAPI_COMMIT[:12]} with no include (its English pages, "
    "their translations into twelve languages, the READMEs and the agent skills), the questions of "
    "bench/eval/fastapi/.",
    source="fastapi",
    publisher="fastapi",
    publisher_name="FastAPI",
    eval_dir=EVAL_DIR / "fastapi",
    work=WORK / "retrieval-fastapi-repo",
    missing=fastapi_missing,
    repository=at_pinned_commit(FASTAPI_REPO, FASTAPI_COMMIT),
    include="",
    extra_include="",
    site_url=FASTAPI_SITE,
    heading="Retrieval quality on FastAPI's whole repository, as a new user indexes it (issue 43)",
)
# A fifth project and a fourth site generator (VitePress): Vue's documentation, the whole vuejs/docs repository with
# no include (its src/ pages, README and GitHub templates) at a pinned commit, read from the bare copy at
# $TRUSTINDEX_REAL_MIRRORS/vuejs+docs/repo; the questions of bench/eval/vue/ (judged before any ranking).
VUE_REPO = MIRRORS / "vuejs+docs" / "repo"
VUE_COMMIT = "01e098a967951ea92d09b100b8e7d82c7a3369a2"
VUE_TREE = "8b2e4fe798eff460eb53a4757014bb24758280b1"
VUE_SITE = "https://vuejs.org"  # its .vitepress/config.ts publishes src/ at the site's root
VUE = whole_repository(
    PinnedRepository("vuejs/docs", VUE_REPO, VUE_COMMIT, VUE_TREE, "the Vue docs repository"),
    name="vue",
    title="Vue",
    generator="VitePress",
    source="vue-docs",
    publisher=("vuejs", "Vue.js"),
    site_url=VUE_SITE,
)
vue_missing = VUE.missing
# A sixth project: Pydantic, a library whose docs (MkDocs, docs/) live in its code's repository, indexed whole with no
# include (its pages, changelog, READMEs and agent skill) at a pinned commit, read from the bare copy at
# $TRUSTINDEX_REAL_MIRRORS/pydantic+pydantic/repo; the questions of bench/eval/pydantic/ (judged before any ranking).
PYDANTIC_REPO = MIRRORS / "pydantic+pydantic" / "repo"
PYDANTIC_COMMIT = "2151025aa51263f3016502b00010b78e4481eaa1"
PYDANTIC_TREE = "7fdd10ea0c468ac4f472307cfdf04b45656045c9"
PYDANTIC = whole_repository(
    PinnedRepository("pydantic/pydantic", PYDANTIC_REPO, PYDANTIC_COMMIT, PYDANTIC_TREE, "the Pydantic repository"),
    name="pydantic",
    title="Pydantic",
    generator="MkDocs",
    source="pydantic",
    publisher=("pydantic", "Pydantic"),
    site_url="https://docs.pydantic.dev/latest",  # docs/ as published, the latest of its versions (mike)
)
pydantic_missing = PYDANTIC.missing
CORPORA = {
    c.name: c for c in (MIDNIGHT, REACT, FLASK, MIDNIGHT_REPO, FLASK_WHOLE, FASTAPI, FASTAPI_WHOLE, VUE, PYDANTIC)
}
# The corpora cross-validation tunes over: one copy of each judged question (midnight-repo, flask-repo and
# fastapi-repo ask bench/eval's, bench/eval/flask's and bench/eval/fastapi's again).
CV_CORPORA = (MIDNIGHT.name, REACT.name, FLASK.name, FASTAPI.name, VUE.name)


def judged_bench_args(description: str, argv=None) -> argparse.Namespace:
    """The command line of a bench over the judged corpora (``--data CORPUS=DIR ...`` for ``open_judged``,
    ``--no-save``), parsed, with the bench environment set up."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", nargs="*", default=[], metavar="CORPUS=DIR", help="existing data directories")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    return a


def open_judged(data: list[str], label: str) -> dict[str, tuple[Corpus, Any, list]]:
    """Each judged corpus by name (sorted) as (corpus, a warm ``Index``, its in-domain questions): the data directory
    a ``CORPUS=DIR`` of ``data`` names (a bench's ``--data``), else the snapshot ``build_snapshot`` builds.  A corpus
    that cannot be built here is skipped in one line that says why (``label``: the bench's name).  Call it after
    ``bench.common.setup_env``."""
    from trustindex.query.index import Index

    given = dict(x.split("=", 1) for x in data)
    opened = {}
    for name in sorted(CV_CORPORA):
        corpus = CORPORA[name]
        if name not in given and (why := corpus.missing()):
            print(f"{label}: corpus {name} skipped: {why}")
            continue
        path = Path(given[name]) if name in given else build_snapshot(corpus)
        questions = [q for q in corpus.questions() if q.in_domain]
        opened[name] = (corpus, Index.open(data_dir=path, warm=True), questions)
    return opened
