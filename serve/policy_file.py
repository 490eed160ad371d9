"""The operator's policy.toml for a long-running server: loaded at start, reloaded into the index when edited.

policy.toml is read at query time (DESIGN.md): an edit changes scores without a restart, and the Index swaps its
state atomically, so a reload never mixes two policies in one response."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.policy import Policy

log = logging.getLogger(__name__)


class Reloadable(Protocol):
    def reload_policy(self, policy: Path) -> None: ...


class PolicyFile:
    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self._mtime: float | None = None

    def load(self) -> Policy:
        """The policy (the default without a file), remembering the file's mtime."""
        if self.path is None:
            return Policy.default()
        self._mtime = self.path.stat().st_mtime if self.path.is_file() else None
        return Policy.load(self.path)

    def reload_into(self, index: Reloadable | None) -> None:
        """Reload into ``index`` when the file changed since it was last read; a bad edit keeps the old policy."""
        if index is None or self.path is None or not self.path.is_file():
            return
        mtime = self.path.stat().st_mtime
        if mtime != self._mtime:
            self._mtime = mtime
            try:
                index.reload_policy(self.path)
            except TrustIndexError as e:
                log.warning("policy %s not reloaded: %s", self.path, e)
