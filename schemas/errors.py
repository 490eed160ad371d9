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
