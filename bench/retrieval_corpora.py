"""The judged corpora that bench/bench_retrieval.py measures (``--corpus``): where each one's pages come from, how
its snapshot is built by a real ``trustindex refresh``, and where its judged questions are.

- ``midnight-docs``: ``../shared/corpus/midnight-docs`` (a folder), committed as one git commit; the questions of
  ``bench/eval/`` (every ranking weight was tuned on its dev half);
- ``midnight-repo``: the same pages as the real midnight-docs repository publishes them (its config and history),
  the same questions; read like ``react``'s, from ``$TRUSTINDEX_REAL_MIRRORS/midnightntwrk+midnight-docs/repo``;
- ``react``: React's documentation, the repository reactjs/react.dev at a pinned commit, read from a complete bare
  copy at ``$TRUSTINDEX_REAL_MIRRORS/reactjs+react.dev/repo`` (default ``../repos`` beside the checkout; get it with
  the search tool's ``fetch`` and ``../shared/tools/repair_mirrors.sh``); the questions of ``bench/eval/react/``,
  judged before any system ranked them (issue 43 item 5; README there).  Nothing of it is committed here.

Each snapshot is built once under the bench work folder and reused by later runs built with the same extractor
and index format (``built_with``); one built by other versions is refreshed first.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import CORPUS, ROOT, WORK, bench_env

EVAL_DIR = ROOT / "bench" / "eval"
BUILT_WITH = ".built-with.json"  # beside a work folder's data: the versions its snapshot was built with
# Complete bare repositories, one per <owner>+<name>/repo (bench_real_repos.py's --mirrors layout).
MIRRORS = Path(os.environ.get("TRUSTINDEX_REAL_MIRRORS", ROOT.parent / "repos"))

# The React docs at the commit the questions were judged against (bench/eval/react/README.md): the GitHub commit,
# the commit of the repaired local copy (repair_mirrors.sh drops commit signatures, so its ids differ) and the tree
# both hold.  The bench indexes the local commit; the test checks the judged paths against the tree.
REACT_REPO = MIRRORS / "reactjs+react.dev" / "repo"
REACT_UPSTREAM_COMMIT = "12d692da47e77cdc558b928fcfbaf4e71c6d0cec"
REACT_COMMIT = "98070a8805eb49e81abb92cec61d22c98c218aae"
REACT_TREE = "38f4e1bb44b0eea8ea8cf29deb6f4c1234c72d4b"
REACT_INCLUDE = "src/content/**/*.md"
REACT_SITE = "https://react.dev"
# The kinds of question of bench/eval/react/ and bench/eval/flask/ (the Midnight set names its own in
# tests/calibration/test_eval_set.py).
QUESTION_KINDS = ("how-to", "troubleshooting", "api-lookup", "concept", "comparison")

_SOURCE = """\
[[source]]
name = "{name}"
url = "{url}"
ref = "{ref}"
publisher = "{publisher}"
{include}exclude = []
{extra}"""
_IDENTITY = """\
[[publisher]]
id = "{publisher}"
name = "{publisher_name}"
tier = "foundation"
"""


@dataclass(frozen=True)
class Corpus:
    """One judged corpus: its single source, its questions and how to get its repository."""

    name: str  # the --corpus value and the results.json key's suffix
    title: str  # how the reports name it
    about: str  # one sentence for the reports: what was indexed, at which commit
    source: str  # the source name in its sources.toml (hits of other sources are named source:path)
    publisher: str
    publisher_name: str
    eval_dir: Path  # judged_*.jsonl and off_topic_*.jsonl, the format of bench/eval (bench/eval_set.py)
    work: Path  # the snapshot and the per-query rows live here
    missing: Callable[[], str | None]  # why the corpus cannot be built here, or None
    repository: Callable[[Path], tuple[str, str]]  # (url, ref) of a git repository holding the corpus
    include: str = "**/*.md"  # "": no include, the default a new user's source reads (schemas/config.py)
    extra_include: str = "**/*.mdx"
    site_url: str = ""
    heading: str = ""  # its bench section's title (default: "Retrieval quality on another corpus: <title>")
    also_asks: tuple[Path, ...] = ()  # other corpora's question folders asked again of this one's pages

    def sources_toml(self, url: str, ref: str) -> str:
        globs = [g for g in (self.include, self.extra_include) if g]
        include = "include = [" + ", ".join(f'"{g}"' for g in globs) + "]\n" if globs else ""
        extra = f'site_url = "{self.site_url}"\n' if self.site_url else ""
        return _SOURCE.format(
            name=self.source, url=url, ref=ref, publisher=self.publisher, include=include, extra=extra
        )

    def questions(self) -> list:
        """Its judged questions (bench/eval_set.py ``load``): its own folder's, then those it also asks."""
        from bench import eval_set

        return [q for d in (self.eval_dir, *self.also_asks) for q in eval_set.load(d)]

    def identities_toml(self) -> str:
        return _IDENTITY.format(publisher=self.publisher, publisher_name=self.publisher_name)


def build_snapshot(corpus: Corpus) -> Path:
    """The corpus indexed by a real ``trustindex refresh`` into ``corpus.work/data`` (built once, then reused).

    Two test workers may ask at once (tests/query/test_score_explained.py, tests/query/test_response_identity.py):
    a file lock lets one build while the other waits, then reuses the snapshot."""
    corpus.work.mkdir(parents=True, exist_ok=True)
    with open(corpus.work / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = corpus.work / "data"
        stamp = corpus.work / BUILT_WITH
        if (data / "CURRENT").is_file() and stamp.is_file() and stamp.read_text() == built_with():
            return data
        # none yet, or built by code that extracted or stored differently (a work folder outlives checkouts: CI
        # clones to the same path, so an old run's snapshot would otherwise be read by new code): the refresh
        # below re-extracts what changed, reuses the cached embeddings and publishes a new snapshot
        stamp.unlink(missing_ok=True)
        url, ref = corpus.repository(corpus.work)
        (corpus.work / "sources.toml").write_text(corpus.sources_toml(url, ref))
        (corpus.work / "identities.toml").write_text(corpus.identities_toml())
        cli = Path(sys.executable).parent / "trustindex"
        cmd = [str(cli)] if cli.is_file() else [sys.executable, "-m", "trustindex.cli.main"]
        env = bench_env()
        env.setdefault("PREFECT_HOME", str(corpus.work / ".prefect"))
        print(f"building the {corpus.name} snapshot under {data} (a full refresh: minutes)", flush=True)
        sources = str(corpus.work / "sources.toml")
        subprocess.run(
            [*cmd, "refresh", "--sources", sources, "--data", str(data), "--quiet", "--wait", "1800"],
            env=env,
            check=True,
        )
        stamp.write_text(built_with())
        return data


def built_with() -> str:
    """What a reused snapshot must have been built with: the versions that change what extraction and the build
    write (each is bumped with such a change)."""
    from trustindex.ingest.keys import EXTRACTOR_VERSION
    from trustindex.schemas.snapshot import INDEX_FORMAT
    from trustindex.schemas.tables import SCHEMA_VERSION
    from trustindex.warehouse.copies import COPY_DETECTION

    versions = {"extractor": EXTRACTOR_VERSION, "index_format": INDEX_FORMAT, "schema": SCHEMA_VERSION}
    return json.dumps({**versions, "copies": COPY_DETECTION}, sort_keys=True)


def folder_as_commit(folder: Path, author: str = "Midnight docs corpus") -> Callable[[Path], tuple[str, str]]:
    """A folder of pages committed once into ``work/repo`` (fixed author and date: every build commits alike)."""

    def repository(work: Path) -> tuple[str, str]:
        import git

        repo_dir = work / "repo"
        if repo_dir.exists():
            shutil.rmtree(repo_dir)
        shutil.copytree(folder, repo_dir, ignore=shutil.ignore_patterns(".git"))
        repo = git.Repo.init(repo_dir, initial_branch="main")
        repo.git.add(A=True)
        midnight = author == "Midnight docs corpus"  # its commit stays the one every Midnight snapshot was built from
        actor = git.Actor(author, "docs@midnight.example" if midnight else "docs@corpus.example")
        when = datetime(2026, 1, 1, tzinfo=UTC)
        message = "real midnight-docs corpus" if midnight else f"{author}: the pinned pages"
        repo.index.commit(message, author=actor, committer=actor, author_date=when, commit_date=when)
        return "repo", "main"

    return repository


def react_missing() -> str | None:
    """Why the React docs cannot be read here (no bare copy, or one without the pinned tree), else None."""
    return pinned_missing(REACT_REPO, "the React docs repository", REACT_TREE, REACT_TREE, "react")


def pinned_missing(repo: Path, what: str, rev: str, tree: str, eval_name: str) -> str | None:
    """Why ``repo`` cannot give a judged corpus its pinned pages (no bare copy there, or ``rev``, a commit or the
    tree itself, missing or not holding ``tree``), else None."""
    if not (repo / "HEAD").is_file():
        return f"{what} is not at {repo} (set TRUSTINDEX_REAL_MIRRORS)"
    probe = subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", "--verify", "-q", f"{rev}^{{tree}}"],
        capture_output=True,
        text=True,
    )
    if probe.stdout.strip() != tree:
        pinned = "tree" if rev == tree else "commit"
        return f"{repo} lacks the pinned {pinned} {rev} ({Path('bench/eval') / eval_name / 'README.md'})"
    return None


def at_pinned_commit(repo: Path, commit: str) -> Callable[[Path], tuple[str, str]]:
    """A corpus's repository: the bare copy itself, at the pinned commit (the snapshot never follows the branch)."""
    return lambda work: (str(repo.resolve()), commit)


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
    "MDX and reStructuredText file) and its history, the questions of bench/eval/flask/ and bench/eval/flask-repo/.",
    source="flask",
    publisher="pallets",
    publisher_name="Pallets (Flask)",
    eval_dir=EVAL_DIR / "flask-repo",
    work=WORK / "retrieval-flask-repo",
    missing=flask_missing,
    repository=at_pinned_commit(FLASK_REPO, FLASK_COMMIT),
    include="",
    extra_include="",
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


def vue_missing() -> str | None:
    """Why the Vue docs repository cannot be read here, else None."""
    return pinned_missing(VUE_REPO, "the Vue docs repository", VUE_COMMIT, VUE_TREE, "vue")


VUE = Corpus(
    name="vue",
    title="Vue",
    about=f"the whole vuejs/docs repository (VitePress) at {VUE_COMMIT[:12]} with no include (site_url {VUE_SITE}), "
    "the questions of bench/eval/vue/ (judged before any ranking).",
    source="vue-docs",
    publisher="vuejs",
    publisher_name="Vue.js",
    eval_dir=EVAL_DIR / "vue",
    work=WORK / "retrieval-vue",
    missing=vue_missing,
    repository=at_pinned_commit(VUE_REPO, VUE_COMMIT),
    include="",
    extra_include="",
    site_url=VUE_SITE,
)
CORPORA = {c.name: c for c in (MIDNIGHT, REACT, FLASK, MIDNIGHT_REPO, FLASK_WHOLE, FASTAPI, FASTAPI_WHOLE, VUE)}
# The corpora cross-validation tunes over: one copy of each judged question (midnight-repo, flask-repo and
# fastapi-repo ask bench/eval's, bench/eval/flask's and bench/eval/fastapi's again).
CV_CORPORA = (MIDNIGHT.name, REACT.name, FLASK.name, FASTAPI.name, VUE.name)


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
