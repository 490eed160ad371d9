"""What ``trustindex serve`` serves: the live snapshot of a data directory or of an export target, swapped
whole (``SnapshotHolder``).

Both transports share it: ``trustindex serve`` polls in the background (``run``); the stdio MCP server looks on
every call (``poll_on_get``). The poll asks the source for its ``CURRENT``; a new one is fetched (an export
target's snapshot is downloaded into a local cache directory), verified file by file against its manifest's
sha256, opened and warmed off the request path, and only then swapped in by one assignment. A snapshot that
fails anywhere on that way is never served: the old one keeps answering, the log and ``/metrics`` say why, and
the same ``CURRENT`` is not tried again for ``RETRY_SECONDS``. Cached snapshots other than the served one are
removed after a grace period, or sooner beyond the cache's caps (serve/pull.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trustindex.schemas.errors import SnapshotError, TrustIndexError, one_line
from trustindex.schemas.signing import SignatureError, TrustedKey, load_trusted_keys
from trustindex.schemas.snapshot import CURRENT, read_current, snapshot_dir
from trustindex.serve.listing import PassageMap
from trustindex.serve.policy_file import PolicyFile
from trustindex.serve.pull import ExportSource

if TYPE_CHECKING:
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

log = logging.getLogger("trustindex.serve")

RETRY_SECONDS = 60.0
QUERY_CACHE = 1024  # query vectors a server keeps (query/state.py QueryVectors): ~1.5 MiB at 384 dimensions


class SnapshotSource(Protocol):
    label: str

    def current(self) -> str | None: ...  # CURRENT's content, None when there is none

    def fetch(self, snapshot_id: str) -> Path: ...  # a verified local directory of that snapshot

    def cleanup(self, keep: set[str]) -> None: ...


class DataDirSource:
    """A local data directory (``--data``): its snapshots are read in place."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.label = str(self.data_dir)

    def current(self) -> str | None:
        return read_current(self.data_dir)

    def fetch(self, snapshot_id: str) -> Path:
        return snapshot_dir(self.data_dir, snapshot_id, str(self.data_dir / CURRENT))  # Index.open verifies it

    def cleanup(self, keep: set[str]) -> None:  # the data directory belongs to the build
        return


@dataclass(frozen=True)
class SourceSpec:
    """What ``serve`` serves, as plain values (each worker of ``serve --workers N`` builds its own holder from
    it): a data directory (``data``) or an export target (``uri``, downloaded into ``cache``)."""

    data: str | None = None
    uri: str | None = None
    cache: str = "serve-cache"
    endpoint: str | None = None
    grace_seconds: float = 600.0
    policy: str | None = None
    query_cache: int = QUERY_CACHE
    trusted_keys: tuple[str, ...] = ()  # public key files: serve only snapshots one of them signed
    keep_retired: int = 2
    cache_max_bytes: int = 0  # 0: no cap on the retired snapshots' bytes (only their count and grace period)

    def check(self) -> list[TrustedKey]:
        """The pinned keys, loaded: a key file that cannot be read is one error before the server starts."""
        if self.keep_retired < 0 or self.cache_max_bytes < 0:
            raise TrustIndexError("--keep-retired and --cache-max-bytes must be 0 or more")
        return load_trusted_keys(self.trusted_keys)

    def holder(self) -> SnapshotHolder:
        trusted = self.check()
        source: SnapshotSource = (
            ExportSource(
                self.uri,
                Path(self.cache),
                endpoint=self.endpoint,
                grace_seconds=self.grace_seconds,
                trusted=trusted,
                keep_retired=self.keep_retired,
                max_bytes=self.cache_max_bytes,
            )
            if self.uri
            else DataDirSource(Path(self.data or "data"))
        )
        return SnapshotHolder(source, self.policy, query_cache=self.query_cache, trusted_keys=trusted)


class LoadEvents(Protocol):
    def loaded(self, snapshot_id: str) -> None: ...

    def failed(self, stage: str) -> None: ...


@dataclass(frozen=True)
class Served:
    index: Index
    passages: PassageMap
    loaded_at: float


class SnapshotHolder:
    """The served snapshot (``self.served``, replaced by one assignment) and the poll that replaces it.

    ``get()`` gives (index, passages, warning) to both transports; with ``poll_on_get`` it looks at the source
    first (the stdio MCP server, which has no poll thread)."""

    def __init__(
        self,
        source: SnapshotSource,
        policy: str | Path | None = None,
        events: LoadEvents | None = None,
        opener: Callable[[Path, Policy | None], Index] | None = None,
        query_cache: int = QUERY_CACHE,
        poll_on_get: bool = False,
        trusted_keys: list[TrustedKey] | None = None,
    ):
        from trustindex.query.index import Index

        self.source = source
        self.policy_path = Path(policy) if policy else None
        self.events = events
        # pinned keys: checked on the export target before the pull (serve/pull.py) and again on the local copy
        self.trusted_keys = trusted_keys or None
        self._open = opener or (
            lambda snap, pol: Index.open(
                snap, policy=pol, verify=True, warm=True, query_cache=query_cache, trusted_keys=self.trusted_keys
            )
        )
        self.served: Served | None = None
        self.current: str | None = None
        self.warning: str | None = None
        self._failed: tuple[str | None, float] | None = None
        self._policy_file = PolicyFile(self.policy_path)
        self._poll_lock = threading.Lock()  # one poll at a time; searches never take it
        self.poll_on_get = poll_on_get

    def get(self) -> tuple[Index, PassageMap, str | None]:
        if self.poll_on_get:
            self.poll()
        served, warning = self.served, self.warning
        if served is None:
            raise SnapshotError(warning or f"{self.source.label}: no snapshot loaded yet")
        return served.index, served.passages, warning

    def poll(self) -> bool:
        """Look at the source once; True when a new snapshot was swapped in."""
        with self._poll_lock:
            try:
                cur = self.source.current()
            except Exception as e:  # an unreachable target: keep serving
                return self._fail(None, "current", e)
            if cur is not None and cur == self.current:
                self.warning, self._failed = None, None
                self._maybe_reload_policy()
                self._cleanup()
                return False
            if self._failed and self._failed[0] == cur and time.monotonic() - self._failed[1] < RETRY_SECONDS:
                return False
            if cur is None:
                missing = (
                    f"{self.source.label}: no live snapshot ({CURRENT} is missing); run `trustindex refresh` first"
                )
                return self._fail(cur, "current", SnapshotError(missing))
            try:
                path = self.source.fetch(cur)
            except Exception as e:
                return self._fail(cur, "signature" if isinstance(e, SignatureError) else "download", e)
            try:
                index = self._open(path, self._policy())
                served = Served(index, PassageMap(index.data), time.time())
            except Exception as e:
                return self._fail(cur, "signature" if isinstance(e, SignatureError) else "verify", e)
            self.served, self.current, self.warning, self._failed = served, cur, None, None
            log.info("serving snapshot %s from %s", index.snapshot_id, self.source.label)
            if self.events:
                self.events.loaded(index.snapshot_id)
            self._cleanup()
            return True

    def _cleanup(self) -> None:
        try:
            self.source.cleanup({self.current} if self.current else set())
        except OSError as e:
            log.warning("cache cleanup failed: %s", e)

    def _fail(self, cur: str | None, stage: str, e: BaseException) -> bool:
        self._failed = (cur, time.monotonic())
        msg = one_line(e)
        if self.served is None:  # nothing served yet: the reason alone
            self.warning = msg
        else:
            self.warning = (
                f"{CURRENT} names {cur!r}, which failed to {stage} ({msg}); "
                f"still serving snapshot {self.served.index.snapshot_id}"
            )
        log.warning("%s", self.warning)
        if self.events:
            self.events.failed(stage)
        return False

    def _policy(self) -> Policy | None:
        return self._policy_file.load()

    def _maybe_reload_policy(self) -> None:
        self._policy_file.reload_into(self.served.index if self.served is not None else None)

    def run(self, interval: float, stop: threading.Event) -> None:
        while not stop.wait(interval):
            self.poll()
