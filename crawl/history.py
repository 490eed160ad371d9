"""One ``git log`` pass per source: per-file dates and the commits behind them.

``git log --raw`` lists, for every commit, the files it touched with their old
and new blob ids, so the last modification of every file and the evidence of
every commit (author, committer, trailers, merges) come from one process, not
one per file (per-file ``git log -1`` takes ~9 s for 2,000 files here).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime

import git

from trustindex.crawl.git import SAFE_OPTS, decode_path

# The fields of one commit, in order; %B (the message) is last before the --raw block.
_FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%at", "%cn", "%ce", "%cI", "%ct", "%B")
# A date git cannot print (a hostile "author E <e> abc +0000" header) sorts as the oldest.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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


def _parse_raw(block: bytes) -> dict[str, tuple[str | None, str | None]]:
    changes: dict[str, tuple[str | None, str | None]] = {}
    parts = block.split(b"\0")
    i = 0
    while i < len(parts):
        head = parts[i].strip(b"\n").decode("ascii", "replace")
        if not head.startswith(":"):
            i += 1
            continue
        fields = head[1:].split()
        old, new, status = fields[2], fields[3], fields[4]
        zero = "0" * len(old)
        if status.startswith(("R", "C")):
            src, dst = decode_path(parts[i + 1])[0], decode_path(parts[i + 2])[0]
            changes[src] = (old, None)
            changes[dst] = (None if old == zero else old, new)
            i += 3
        else:
            changes[decode_path(parts[i + 1])[0]] = (None if old == zero else old, None if new == zero else new)
            i += 2
    return changes


def read_log(repo: git.Repo, commit: str) -> list[CommitInfo]:
    """All commits reachable from ``commit``, newest first, with their file changes."""
    # Bytes, not GitPython's surrogate-escaped text: names and messages are whatever
    # the repository's authors wrote (a commit can claim UTF-8 and hold Latin-1), and
    # a lone surrogate in one author name made the source's Arrow tables unwritable.
    # Text fields decode with U+FFFD replacement; paths as crawl.git.list_tree names them.
    # The separators carry a per-call random nonce: a message or name may contain
    # any fixed separator byte (\x1e, \x1f), which used to drop the commit, or
    # forge a whole record with another author and dates, but it cannot guess this.
    nonce = secrets.token_hex(16)
    rec_sep, field_sep = f"\x1e{nonce}\x1e", f"\x1f{nonce}\x1f"
    fmt = rec_sep + field_sep.join(_FIELDS) + field_sep
    out = repo.git.execute(
        [
            "git",
            *SAFE_OPTS,
            "log",
            "--raw",
            "-z",
            "--no-abbrev",
            "--no-renames",
            "--no-color",
            "--date-order",
            f"--format={fmt}",
            commit,
        ],
        stdout_as_string=False,
        strip_newline_in_stdout=False,
    )
    commits = []
    for raw in out.split(rec_sep.encode()):
        if not raw.strip(b"\0\n"):
            continue
        parts = raw.split(field_sep.encode())
        if len(parts) != len(_FIELDS) + 1:
            continue
        f = [x.decode("utf-8", "replace") for x in parts[:-1]]
        commit_date = _when(f[8], f[9])
        author_date = _when(f[4], f[5]) or commit_date or EPOCH
        commits.append(
            CommitInfo(
                sha=f[0],
                parents=f[1].split(),
                author_name=f[2],
                author_email=f[3],
                author_date=author_date,
                committer_name=f[6],
                committer_email=f[7],
                commit_date=commit_date or author_date,
                message=f[10],
                changes=_parse_raw(parts[-1]),
            )
        )
    return commits


def _when(iso: str, epoch: str) -> datetime | None:
    """A commit date from ``%aI``, else from the epoch seconds in UTC; None when git printed neither.

    A crawled commit's date header is arbitrary text: an offset of +99:59 or a
    year past 9999 made ``fromisoformat`` raise and failed the whole source.
    """
    try:
        return datetime.fromisoformat(iso)
    except ValueError:
        pass
    try:
        return datetime.fromtimestamp(int(epoch), UTC)
    except (ValueError, OverflowError, OSError):
        return None


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
