"""Bare mirrors and blob reading: the only place that talks to git.

Nothing from a crawled repository runs: mirrors are bare (no checkout, so no
smudge filters), cloned with an empty template (no hooks), never recurse into
submodules, and git runs with system/global configuration disabled.  Files
are read as blobs from the object database at a commit; symbolic links and
submodules are listed, never followed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import git

from trustindex.schemas.errors import TrustIndexError

SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "GIT_LFS_SKIP_SMUDGE": "1",
    # Configuration passed through the environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n,
    # and what a parent git process exports for ``git -c``) is as global as
    # ~/.gitconfig: a ``core.fsmonitor`` or ``uploadpack.packObjectsHook`` there
    # would run.  Only SAFE_OPTS, given on each command line, applies.
    "GIT_CONFIG_COUNT": "0",
    "GIT_CONFIG_PARAMETERS": "",
    # A partial mirror (a source's blob_limit) names its origin as a promisor: reading a blob it left out
    # would download it on the spot, inside a read that must not touch the network.  Reads fail instead.
    "GIT_NO_LAZY_FETCH": "1",
}
SAFE_OPTS = [
    "-c",
    "core.hooksPath=" + os.devnull,
    "-c",
    "core.fsmonitor=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "uploadpack.allowFilter=false",
]


# A source's bare mirror as the rest of the pipeline holds it; only crawl/ calls git on it.
Mirror = git.Repo


class SourceError(TrustIndexError):
    """A source cannot be fetched or its ref resolved; that source fails alone."""


class BlobReadError(TrustIndexError):
    """One blob cannot be read from the mirror (missing or corrupt); the file that names it fails alone."""


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: int  # git file mode: 0o100644, 0o100755, 0o120000 (symlink), 0o160000 (submodule)
    sha: str
    size: int
    # Why this entry's name is not a file a checkout could hold ("" when it is):
    # non_utf8_path (``path`` is then an escaped rendering, ``caf\xe9.md``),
    # unsafe_path (a ``.git``, ``..`` or ``.`` component) or duplicate_path (the
    # tree lists the name twice).  Git's fsck rejects all three; transfer does
    # not, so a crawled mirror can hold them.  They are reported, never read.
    invalid: str = ""
    # The blob is not in the mirror (a partial clone left it out, or the copy is damaged); ``size`` is then 0.
    missing: bool = False

    @property
    def is_symlink(self) -> bool:
        return self.mode == 0o120000

    @property
    def is_submodule(self) -> bool:
        return self.mode == 0o160000


def _git(cwd: str | None = None) -> git.Git:
    g = git.Git(cwd)
    g.update_environment(**SAFE_ENV)
    return g


def mirror_path(data_dir: Path, source_name: str) -> Path:
    return Path(data_dir) / "mirrors" / f"{source_name}.git"


def ensure_mirror(url: str, dest: Path, blob_limit: int | None = None, follow_head: bool = False) -> git.Repo:
    """Clone a bare mirror, or fetch into the existing one (force-pushes included).

    ``blob_limit``: clone partially, leaving out every blob of that many bytes or more
    (``--filter=blob:limit``); later fetches keep the filter the clone recorded.  The server
    must allow filters, or git clones everything.  ``follow_head`` (a source whose ref is "HEAD", its default
    branch): when the branch the mirror's HEAD names is gone after a fetch (a default branch renamed), HEAD is
    pointed where the remote's now points.  Only then: asking costs a second contact with the remote on every run."""
    partial = [f"--filter=blob:limit={blob_limit}"] if blob_limit is not None else []
    # A repository on this machine lends its objects (git alternates) instead of being copied: the data directory
    # held a second copy of every such mirror (336 MB of 638 MB for 50 sources, issue 29).  A partial clone needs
    # git's transport (a filter is ignored by a local clone), so it is still copied.
    how = ["--shared"] if blob_limit is None and is_local_repository(url) else ["--no-local"]
    dest = Path(dest)
    try:
        if (dest / "HEAD").is_file():
            g = _git(str(dest))
            g.execute(["git", *SAFE_OPTS, "remote", "set-url", "origin", url])
            g.execute(
                [
                    "git",
                    *SAFE_OPTS,
                    "fetch",
                    "--prune",
                    "--no-recurse-submodules",
                    "--tags",
                    "--force",
                    "origin",
                    "+refs/heads/*:refs/heads/*",
                    "+refs/tags/*:refs/tags/*",
                ]
            )
            if (
                follow_head
                and g.execute(["git", "rev-parse", "--verify", "--quiet", "HEAD"], with_exceptions=False) == ""
            ):
                _follow_remote_head(g)  # the branch HEAD named is gone (renamed, deleted): ask the remote
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
            try:
                template = tmp / "template"
                template.mkdir()
                _git().execute(
                    [
                        "git",
                        *SAFE_OPTS,
                        "clone",
                        "--mirror",
                        *how,
                        f"--template={template}",
                        "--no-recurse-submodules",
                        *partial,
                        url,
                        str(tmp / "repo"),
                    ]
                )
                os.replace(tmp / "repo", dest)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except git.GitCommandError as e:
        raise SourceError(f"cannot fetch {url}: {git_error_detail(e)}") from None
    return open_mirror(dest)


def _follow_remote_head(g: git.Git) -> None:
    """Point HEAD at the branch the remote's HEAD names now (a default branch can be renamed)."""
    out = g.execute(["git", *SAFE_OPTS, "ls-remote", "--symref", "origin", "HEAD"])
    for line in out.splitlines():
        target, _, name = line.removeprefix("ref: ").partition("\t")
        if line.startswith("ref: ") and name == "HEAD" and target.startswith("refs/heads/"):
            g.execute(["git", *SAFE_OPTS, "symbolic-ref", "HEAD", target])
            return


def is_local_repository(url: str) -> bool:
    """A git repository by path on this machine (a bare one or a work tree's), not a URL."""
    if "://" in url or url.startswith("git@"):
        return False
    p = Path(url)
    return (p / "HEAD").is_file() and (p / "objects").is_dir() or (p / ".git" / "HEAD").is_file()


def borrowed_objects(dest: Path) -> list[str]:
    """The object directories a mirror reads through git alternates (none for a copy)."""
    alt = Path(dest) / "objects" / "info" / "alternates"
    return [ln.strip() for ln in alt.read_text().splitlines() if ln.strip()] if alt.is_file() else []


def open_mirror(dest: Path) -> git.Repo:
    """The mirror as this run's fetch left it (a run fetches each source once, then only opens it)."""
    if not (Path(dest) / "HEAD").is_file():
        raise SourceError(f"{dest}: no mirror here (it is fetched before it is opened)")
    repo = git.Repo(str(dest))
    repo.git.update_environment(**SAFE_ENV)
    return repo


def commit_of(repo: git.Repo, rev: str) -> str | None:
    """The commit a revision (a SHA, a tag, a branch) names; None when the mirror has no such commit."""
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except git.GitCommandError:
        return None


def resolve_ref(repo: git.Repo, ref: str, url: str = "") -> str:
    for candidate in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}"):
        sha = commit_of(repo, candidate)
        if sha is not None:
            return sha
    if not repo.git.execute(["git", "for-each-ref", "--count=1"]).strip():
        # A clone of an empty repository succeeds with no refs at all.
        raise SourceError(f"{url or repo.git_dir}: the repository is empty (no commits, no refs)")
    raise SourceError(f"{url or repo.git_dir}: no such ref {ref!r}")


def git_error_detail(e: git.GitCommandError) -> str:
    """Git's own complaint, whole and on one line.

    The last stderr line alone was often a fragment ("and the repository
    exists.'" or a lone quote).  Control characters are dropped: a remote's
    ``remote:`` lines are text the crawled server chose, shown in reports.
    """
    text = (e.stderr or "").strip()
    if text.startswith("stderr: '"):
        text = text[len("stderr: '") :].removesuffix("'")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Cloning into")]
    detail = " ".join(lines) or str(e)
    return "".join(ch for ch in detail if ch.isprintable())[:500]


def decode_path(raw: bytes) -> tuple[str, bool]:
    """A path from git's output as text, and whether it was valid UTF-8.

    Git paths are bytes; a crawled repository can hold names that are not
    UTF-8.  ``surrogateescape`` would keep them exact but lone surrogates make
    every later Arrow/Parquet write fail (one file name failed the whole
    source), so undecodable bytes are escaped as ``\\xNN`` instead.
    """
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace"), False


def missing_objects(repo: git.Repo, commit: str) -> set[str]:
    """The objects of the commit's tree that the mirror lacks (``rev-list --missing=print`` never fetches)."""
    out = repo.git.execute(["git", *SAFE_OPTS, "rev-list", "--objects", "--no-walk", "--missing=print", commit])
    return {line[1:].strip() for line in out.splitlines() if line.startswith("?")}


def list_tree(repo: git.Repo, commit: str) -> list[TreeEntry]:
    """Every entry at the commit (blobs, symlinks, submodules), with blob sizes.

    A blob the mirror lacks is listed with ``missing`` set: ``ls-tree --long`` prints its size
    as "BAD" in a damaged copy and stops altogether in a partial one, so sizes then come from
    the objects that are there."""
    missing = missing_objects(repo, commit)
    long = [] if missing else ["--long"]
    out = repo.git.execute(
        ["git", *SAFE_OPTS, "ls-tree", "-r", "-z", *long, "--full-tree", commit],
        stdout_as_string=False,
        strip_newline_in_stdout=False,
    )
    entries: dict[str, TreeEntry] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, typ, sha, *rest = meta.split(None, 3)
        sha_hex = sha.decode()
        size = int(rest[0]) if rest and rest[0].strip().isdigit() else 0
        if missing and typ == b"blob" and sha_hex not in missing:
            size = repo.odb.info(bytes.fromhex(sha_hex)).size
        name, ok = decode_path(path)
        if name in entries:  # one report row per path; neither of the two contents is trusted
            entries[name] = replace(entries[name], invalid="duplicate_path")
            continue
        invalid = "" if ok else "non_utf8_path"
        if not invalid and any(c in ("", ".", "..") or c.lower().rstrip(". ") == ".git" for c in name.split("/")):
            invalid = "unsafe_path"
        entries[name] = TreeEntry(name, int(mode, 8), sha_hex, size, invalid, sha_hex in missing)
    return list(entries.values())


def read_blob(repo: git.Repo, sha: str) -> bytes:
    """The blob's bytes straight from the object database (no filters, no checkout)."""
    try:
        return repo.odb.stream(bytes.fromhex(sha)).read()
    except Exception as e:
        # A missing promisor blob ends git's long-lived cat-file; a fresh one answers the next read.
        repo.git.clear_cache()
        raise BlobReadError(f"blob {sha} cannot be read from the mirror: {e}") from None


def tree_shas(repo: git.Repo, commit: str) -> dict[str, str]:
    """Each path at the commit and its object's SHA."""
    return {e.path: e.sha for e in list_tree(repo, commit)}


# 9999-12-31T23:59:59Z: the last second Python's datetime can hold.
MAX_COMMIT_TIME = 253402300799


def read_commit_time(repo: git.Repo, commit: str) -> int | None:
    """The committer time in epoch seconds; None when the header is unreadable.

    A crawled commit's date is arbitrary text: git prints nothing for
    ``committer E <e> abc +0000`` and any number for a huge one, and either
    made ``int``/``datetime.fromtimestamp`` raise and fail the whole source.
    """
    try:
        t = int(repo.git.show("-s", "--format=%ct", commit).strip())
    except ValueError:
        return None
    return t if 0 <= t <= MAX_COMMIT_TIME else None


def commit_time(repo: git.Repo, commit: str) -> int:
    """The committer time in epoch seconds; 0 (the oldest) when the header is unreadable."""
    t = read_commit_time(repo, commit)
    return 0 if t is None else t


def commit_date_iso(repo: git.Repo, commit: str) -> str:
    """The committer time as an ISO-8601 UTC timestamp ending in Z (a source row's ``commit_date``)."""
    return datetime.fromtimestamp(commit_time(repo, commit), UTC).isoformat().replace("+00:00", "Z")


def is_ancestor(repo: git.Repo, old: str, new: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", old, new)
        return True
    except git.GitCommandError:
        return False


def commits_between(repo: git.Repo, old: str, new: str) -> set[str]:
    """The commits reachable from ``new`` and not from ``old`` (``git rev-list old..new``)."""
    return set(repo.git.rev_list(f"{old}..{new}").split())


def commit_as_of(repo: git.Repo, ref: str, as_of_end: str, url: str = "") -> str:
    """The last commit of ``ref`` whose commit date is at or before ``as_of_end`` (ISO 8601 with offset)."""
    tip = resolve_ref(repo, ref, url)
    sha = repo.git.rev_list("-1", f"--before={as_of_end}", tip).strip()
    if not sha:
        raise SourceError(f"{url or repo.git_dir}: no commit of {ref!r} on or before {as_of_end}")
    return sha
