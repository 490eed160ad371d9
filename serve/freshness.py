"""Freshness of what a replica serves (issue 40): no rollback to an older signed export, no frozen target served as
if it were current.

- ``HighWater``: the newest signed snapshot a replica has verified from a target (its signature's sequence),
  persisted in the replica's cache directory (``freshness.json``, one entry per target), so a restart keeps it.  A
  snapshot whose signature is older is refused (``RollbackError``); workers sharing the cache share the mark (a
  file lock around each read-modify-write, the larger sequence wins).
- ``check_unexpired``: a snapshot whose signature has already expired is never swapped in (``ExpiredError``).
- ``staleness``: past a signed ``expires_at`` (``export --valid-for``), or older than ``--max-snapshot-age`` (from
  the signature's ``signed_at``, or the manifest's ``created_at`` for an unsigned snapshot), the snapshot being
  served is still served but the replica is not ready (``/readyz`` 503) and every response carries the warning.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trustindex.schemas.signing import SignatureError, SignedManifest, parse_time

log = logging.getLogger("trustindex.serve")

STATE_FILE = "freshness.json"


@dataclass(frozen=True)
class FreshnessRules:
    """How a replica judges freshness: where it keeps its high-water marks (its cache directory; None: in memory
    only) and ``--max-snapshot-age`` in seconds (0: none)."""

    state_dir: Path | None = None
    max_age: float = 0.0


class RollbackError(SignatureError):
    """A signed snapshot older than the newest this replica has verified from the same target."""


class ExpiredError(SignatureError):
    """A signed snapshot whose signature had expired before this replica would swap it in."""


def check_unexpired(snapshot_id: str, signed: SignedManifest | None) -> None:
    """ExpiredError when ``signed`` is past its expiry: a replica never swaps in an expired export (the one it
    serves may expire while served: then it answers with a warning and is not ready)."""
    fresh = signed.freshness if signed is not None else None
    if fresh is not None and fresh.expired():
        raise ExpiredError(
            f"snapshot {snapshot_id}'s signature expired at {fresh.expires_at}: refused (export it again to renew)"
        )


@dataclass(frozen=True)
class Mark:
    sequence: int
    snapshot_id: str
    signed_at: str | None = None


class HighWater:
    """The newest signed snapshot verified from ``target``, kept in ``cache_dir/freshness.json``."""

    def __init__(self, cache_dir: Path | None, target: str):
        self.path = Path(cache_dir) / STATE_FILE if cache_dir is not None else None
        self.target = target
        self._mark: Mark | None = None  # what this process has seen, should the file be unwritable

    def mark(self) -> Mark | None:
        stored = self._read().get(self.target)
        from_file = Mark(**stored) if isinstance(stored, dict) else None
        marks = [m for m in (from_file, self._mark) if m is not None]
        return max(marks, key=lambda m: m.sequence) if marks else None

    def check(self, snapshot_id: str, signed: SignedManifest | None) -> None:
        """RollbackError when ``signed`` is older than the mark (or as old, for another snapshot)."""
        mark = self.mark()
        if signed is None or mark is None:
            return
        older = signed.sequence < mark.sequence or (
            signed.sequence == mark.sequence and snapshot_id != mark.snapshot_id
        )
        if older:
            raise RollbackError(
                f"snapshot {snapshot_id} is signed with sequence {signed.sequence}, older than snapshot "
                f"{mark.snapshot_id} (sequence {mark.sequence}) this replica has verified from {self.target}: a "
                f"rollback, refused"
            )

    def raise_to(self, snapshot_id: str, signed: SignedManifest | None) -> None:
        """Record ``signed`` as the newest verified, when it is newer than the mark."""
        if signed is None:
            return
        new = Mark(signed.sequence, snapshot_id, signed.freshness.signed_at if signed.freshness else None)
        if self._mark is None or new.sequence > self._mark.sequence:
            self._mark = new
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                state = self._read()
                old = state.get(self.target)
                if isinstance(old, dict) and int(old.get("sequence", -1)) >= new.sequence:
                    return
                state[self.target] = new.__dict__
                tmp = self.path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
                tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(tmp, self.path)
        except OSError as e:  # a read-only cache: the mark holds for this process only, and the log says so
            log.warning("cannot record the freshness mark in %s (%s); it holds until a restart", self.path, e)

    def _read(self) -> dict:
        if self.path is None:
            return {}
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("%s: unreadable (%s); the freshness mark of this process stands", self.path, e)
            return {}
        return state if isinstance(state, dict) else {}


def staleness(
    snapshot_id: str, created_at: str, signed: SignedManifest | None, max_age: float, now: datetime | None = None
) -> str | None:
    """Why the served snapshot is not current any more (past its signed expiry, or older than ``max_age`` seconds
    when ``max_age`` is set), or None."""
    now = now or datetime.now(UTC)
    fresh = signed.freshness if signed is not None else None
    if fresh is not None and fresh.expired(now):
        return (
            f"snapshot {snapshot_id} expired at {fresh.expires_at} (its signature's expiry): the export target has not "
            f"been re-signed since; answers may be out of date"
        )
    if max_age > 0:
        since, what = (fresh.signed_at, "signed") if fresh is not None else (created_at, "built")
        try:
            age = (now - parse_time(since)).total_seconds()
        except (TypeError, ValueError):
            return f"snapshot {snapshot_id} has no readable {what} time; --max-snapshot-age cannot be checked"
        if age > max_age:
            return (
                f"snapshot {snapshot_id} was {what} {age / 3600:.1f} h ago, more than --max-snapshot-age "
                f"({max_age / 3600:.1f} h); answers may be out of date"
            )
    return None
