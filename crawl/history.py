"""One ``git log`` pass per source: per-file dates and the commits behind them.

``git log --raw`` lists, for every commit, the files it touched with their old
and new blob ids, so the last modification of every file and the evidence of
every commit (author, committer, trailers, merges) come from one process, not
one per file (per-file ``git log -1`` takes ~9 s for 2,000 files here).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import git

from crawl.git import SAFE_OPTS

_FMT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B%x1f"


@dataclass
class CommitInfo:
    sha: str
    parents: list[str]
    author_name: str
    author_email: str
    author_date: datetime
    committer_name: str
    committer_email: str
    commit_date: datetime
    message: str
    # path -> (old blob sha or None, new blob sha or None)
    changes: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def _parse_raw(block: str) -> dict[str, tuple[str | None, str | None]]:
    changes: dict[str, tuple[str | None, str | None]] = {}
    parts = block.split("\0")
    i = 0
    while i < len(parts):
        head = parts[i].strip("\n")
        if not head.startswith(":"):
            i += 1
            continue
        fields = head[1:].split()
        old, new, status = fields[2], fields[3], fields[4]
        zero = "0" * len(old)
        if status.startswith(("R", "C")):
            src, dst = parts[i + 1], parts[i + 2]
            changes[src] = (old, None)
            changes[dst] = (None if old == zero else old, new)
            i += 3
        else:
            changes[parts[i + 1]] = (None if old == zero else old, None if new == zero else new)
            i += 2
    return changes


def read_log(repo: git.Repo, commit: str) -> list[CommitInfo]:
    """All commits reachable from ``commit``, newest first, with their file changes."""
    out = repo.git.execute(["git", *SAFE_OPTS, "log", "--raw", "-z", "--no-abbrev", "--no-renames",
                            "--no-color", "--date-order", f"--format={_FMT}", commit])
    commits = []
    for rec in out.split("\x1e"):
        if not rec.strip("\0\n"):
            continue
        f = rec.split("\x1f")
        if len(f) < 10:
            continue
        commits.append(CommitInfo(
            sha=f[0], parents=f[1].split(), author_name=f[2], author_email=f[3],
            author_date=datetime.fromisoformat(f[4]), committer_name=f[5], committer_email=f[6],
            commit_date=datetime.fromisoformat(f[7]), message=f[8], changes=_parse_raw(f[9])))
    return commits


@dataclass
class FileHistory:
    last_modified: datetime
    last_commit: CommitInfo
    # commits that touched the file, newest first
    touches: list[CommitInfo] = field(default_factory=list)


def file_histories(commits: list[CommitInfo]) -> dict[str, FileHistory]:
    hist: dict[str, FileHistory] = {}
    for c in commits:
        for path, (_old, new) in c.changes.items():
            h = hist.get(path)
            if h is None:
                if new is None:
                    continue  # deleted in its newest touch: not in the tree
                h = hist[path] = FileHistory(c.author_date, c)
            h.touches.append(c)
    return hist
