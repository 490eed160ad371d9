"""Errors every layer shares: one line that names the file, key and problem."""

from __future__ import annotations


class TrustIndexError(Exception):
    """Base of every error the command line turns into one clear line."""


class ConfigError(TrustIndexError):
    def __init__(self, file: str, key: str | None, problem: str):
        self.file, self.key, self.problem = str(file), key, problem
        where = f"{self.file}: {key}: " if key else f"{self.file}: "
        super().__init__(where + problem)


class SnapshotError(TrustIndexError):
    """A snapshot is missing, corrupt or does not match its manifest."""


class QueryError(TrustIndexError):
    """A query, target or option the query module cannot accept."""


class EmbeddingModelError(TrustIndexError):
    """The embedding model's files are not installed here, or not where they should be."""


class EmbeddingModelMismatch(SnapshotError):
    """The model installed here is not the one that embedded a snapshot: its queries would not match its passages."""

    def __init__(self, snapshot_id: str, built_with: str, built_sha256: str, installed: str, installed_sha256: str):
        self.snapshot_id = snapshot_id
        self.built_with, self.built_sha256 = built_with, built_sha256
        self.installed, self.installed_sha256 = installed, installed_sha256
        super().__init__(
            f"snapshot {snapshot_id}: embedded with {built_with} (weights sha256 {built_sha256}), but the model "
            f"installed here is {installed} (weights sha256 {installed_sha256}); install the model that built "
            f"the snapshot or rebuild it with this one"
        )


def one_line(e: BaseException, unexpected: str = "") -> str:
    """``e`` as one line for a log, a warning or a client: its own message for a ``TrustIndexError`` (those are
    written to be read), else ``unexpected`` + the exception's type and message (a bug, named as one)."""
    msg = " ".join(str(e).split())
    if isinstance(e, TrustIndexError):
        return msg or type(e).__name__
    return f"{unexpected}{type(e).__name__}: {msg}" if msg else f"{unexpected}{type(e).__name__}"
