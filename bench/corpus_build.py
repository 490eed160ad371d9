"""How a judged corpus is built: its single source (``Corpus``), its snapshot by a real ``trustindex refresh``
(``build_snapshot``, reused while built with the same versions: ``built_with``) and where its pages come from (a
folder committed once, or a bare copy of a public repository at a pinned commit).  The corpora themselves are
bench/retrieval_corpora.py's."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.common import ROOT, WORK, bench_env

EVAL_DIR = ROOT / "bench" / "eval"
BUILT_WITH = ".built-with.json"  # beside a work folder's data: the versions its snapshot was built with
# Complete bare repositories, one per <owner>+<name>/repo (bench_real_repos.py's --mirrors layout).
MIRRORS = Path(os.environ.get("TRUSTINDEX_REAL_MIRRORS", ROOT.parent / "repos"))
# The kinds of question of the judged sets in users' words (the Midnight set names its own in
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
        if (data / "CURRENT").is_file() and stamp.is_file() and stamp.read_text() == built_with(corpus):
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
        stamp.write_text(built_with(corpus))
        return data


def built_with(corpus: Corpus) -> str:
    """What a reused snapshot must have been built with: the versions that change what extraction and the build
    write (each is bumped with such a change), and the corpus's source as its sources.toml says it (a corpus given a
    site_url or another include is rebuilt)."""
    from trustindex.ingest.keys import EXTRACTOR_VERSION
    from trustindex.schemas.snapshot import INDEX_FORMAT
    from trustindex.schemas.tables import SCHEMA_VERSION
    from trustindex.warehouse.copies import COPY_DETECTION

    versions = {"extractor": EXTRACTOR_VERSION, "index_format": INDEX_FORMAT, "schema": SCHEMA_VERSION}
    source = corpus.sources_toml("", "")  # without the repository's place, which a folder corpus makes on build
    return json.dumps({**versions, "copies": COPY_DETECTION, "source": source}, sort_keys=True)


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


@dataclass(frozen=True)
class PinnedRepository:
    """A public repository as a judged corpus reads it: its GitHub name, the bare copy here, the pinned commit and
    the tree that commit holds (bench/eval/<name>/README.md), and how a missing copy names it."""

    github: str
    bare: Path
    commit: str
    tree: str
    what: str


def whole_repository(
    repo: PinnedRepository,
    name: str,
    title: str,
    generator: str,
    source: str,
    publisher: tuple[str, str],
    site_url: str,
) -> Corpus:
    """A corpus of a whole repository at its pinned commit, with no include (the default a new user's source
    reads), the questions of ``bench/eval/<name>/``; ``publisher``: its id and name."""
    return Corpus(
        name=name,
        title=title,
        about=f"the whole {repo.github} repository ({generator}) at {repo.commit[:12]} with no include (site_url "
        f"{site_url}), the questions of bench/eval/{name}/ (judged before any ranking).",
        source=source,
        publisher=publisher[0],
        publisher_name=publisher[1],
        eval_dir=EVAL_DIR / name,
        work=WORK / f"retrieval-{name}",
        missing=lambda: pinned_missing(repo.bare, repo.what, repo.commit, repo.tree, name),
        repository=at_pinned_commit(repo.bare, repo.commit),
        include="",
        extra_include="",
        site_url=site_url,
    )
