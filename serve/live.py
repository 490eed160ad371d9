"""What ``trustindex serve`` serves: the live snapshot of a data directory or of an export target, swapped
whole (``SnapshotHolder``).

Both transports share it: ``trustindex serve`` polls in the background (``run``); the stdio MCP server looks on
every call (``poll_on_get``). The poll asks the source for its ``CURRENT``; a new one is fetched (an export
target's snapshot is downloaded into a local cache directory), verified file by file against its manifest's
sha256, opened and warmed off the request path, and only then swapped in by one assignment. A snapshot that
fails anywhere on that way is never served: the old one keeps answering, the log and ``/metrics`` say why, and
the same ``CURRENT`` is not tried again for ``RETRY_SECONDS``. Cached snapshots other than the served one are
removed after a grace period, or sooner beyond the cache's caps (serve/pull.py).

With pinned keys a snapshot must also be fresh (serve/freshness.py): one whose signature is older than the newest
this replica has verified from the source is refused (stage ``rollback``) and the newer one keeps answering, even
after a restart (the mark is in the cache directory, and the snapshot it names is served from the cache when the
source names an older one).  A snapshot whose signature has already expired is never swapped in (stage
``expired``).  A newer signature of the served snapshot (a re-export that renews its expiry) is taken without a
reload.  Past a signed expiry or ``max_snapshot_age``, the snapshot being served is still served with a warning on
every answer, and ``ready()`` is False.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trustindex.schemas.errors import SnapshotError, TrustIndexError, one_line
from trustindex.schemas.signing import (
    SignatureError,
    SignedManifest,
    TrustedKey,
    load_trusted_keys,
    verify_snapshot_signature,
)
from trustindex.schemas.snapshot import CURRENT, SIGNATURE, SNAPSHOTS_DIR, read_current, snapshot_dir
from trustindex.serve.freshness import (
    ExpiredError,
    FreshnessRules,
    HighWater,
    RollbackError,
    check_unexpired,
    staleness,
)
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
    key: str  # the source's identity for its freshness mark (an absolute path or s3://bucket/prefix)

    def current(self) -> str | None: ...  # CURRENT's content, None when there is none

    def fetch(self, snapshot_id: str) -> Path: ...  # a verified local directory of that snapshot

    def cached(self, snapshot_id: str) -> Path | None: ...  # that directory, if it is here already

    def renew_signature(self, snapshot_id: str) -> None: ...  # take a newer signature of a fetched snapshot

    def cleanup(self, keep: set[str]) -> None: ...


class DataDirSource:
    """A local data directory (``--data``): its snapshots are read in place."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.label = str(self.data_dir)
        self.key = self.data_dir.resolve().as_posix()

    def current(self) -> str | None:
        return read_current(self.data_dir)

    def fetch(self, snapshot_id: str) -> Path:
        return snapshot_dir(self.data_dir, snapshot_id, str(self.data_dir / CURRENT))  # Index.open verifies it

    def cached(self, snapshot_id: str) -> Path | None:
        path = self.data_dir / SNAPSHOTS_DIR / snapshot_id
        return path if path.is_dir() else None

    def renew_signature(self, snapshot_id: str) -> None:  # read in place: the holder reads the signature itself
        return

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
    max_snapshot_age: float = 0.0  # seconds; 0: none (serve/freshness.py)

    def check(self) -> list[TrustedKey]:
        """The pinned keys, loaded: a key file that cannot be read is one error before the server starts."""
        if self.keep_retired < 0 or self.cache_max_bytes < 0 or self.max_snapshot_age < 0:
            raise TrustIndexError("--keep-retired, --cache-max-bytes and --max-snapshot-age must be 0 or more")
        return load_trusted_keys(self.trusted_keys)

    def holder(self, poll_on_get: bool = False) -> SnapshotHolder:
        """The holder of what this spec names (``poll_on_get``: look at the source on every ``get``, for a server
        without a poll thread)."""
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
        rules = FreshnessRules(Path(self.cache) if trusted else None, self.max_snapshot_age)
        holder = SnapshotHolder(
            source,
            self.policy,
            query_cache=self.query_cache,
            poll_on_get=poll_on_get,
            trusted_keys=trusted,
            freshness=rules,
        )
        if isinstance(source, ExportSource):  # an older export is refused from its manifest, before any download
            source.admit = holder.admit
        return holder


class LoadEvents(Protocol):
    def loaded(self, snapshot_id: str) -> None: ...

    def failed(self, stage: str) -> None: ...


@dataclass(frozen=True)
class Served:
    index: Index
    passages: PassageMap
    loaded_at: float
    signed: SignedManifest | None = None  # its verified signature (renewed in place by a newer one)
    signature_bytes: bytes | None = None


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
        freshness: FreshnessRules | None = None,
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
        self.rules = freshness or FreshnessRules()
        self.high_water = HighWater(self.rules.state_dir, getattr(source, "key", source.label))
        self.served: Served | None = None
        self.current: str | None = None
        self.warning: str | None = None  # why the source's CURRENT is not what is served (a failed load, a rollback)
        self._failed: tuple[str | None, float] | None = None
        self._refused_signatures: set[bytes] = set()  # older signatures of the served snapshot, counted once
        self._policy_file = PolicyFile(self.policy_path)
        self._poll_lock = threading.Lock()  # one poll at a time; searches never take it
        self.poll_on_get = poll_on_get

    def get(self) -> tuple[Index, PassageMap, str | None]:
        if self.poll_on_get:
            self.poll()
        served, warning = self.served, self.notice()
        if served is None:
            raise SnapshotError(warning or f"{self.source.label}: no snapshot loaded yet")
        return served.index, served.passages, warning

    def stale(self) -> str | None:
        """Why the served snapshot is no longer current (past its signed expiry, older than the maximum age)."""
        served = self.served
        if served is None:
            return None
        m = served.index.data.manifest
        return staleness(m.snapshot_id, m.created_at, served.signed, self.rules.max_age)

    def notice(self) -> str | None:
        """What every answer says beside itself: staleness, then why the source's CURRENT is not served."""
        return "; ".join(w for w in (self.stale(), self.warning) if w) or None

    def ready(self) -> bool:
        return self.served is not None and self.stale() is None

    def poll(self) -> bool:
        """Look at the source once; True when a new snapshot was swapped in."""
        with self._poll_lock:
            try:
                cur = self.source.current()
            except Exception as e:  # an unreachable target: keep serving
                return self._fail(None, "current", e)
            if cur is not None and cur == self.current:
                self.warning, self._failed = None, None
                self._renew_signature(cur)
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
            return self._load(cur)

    def _load(self, cur: str) -> bool:
        try:
            path = self.source.fetch(cur)
        except Exception as e:
            return self._fail(cur, _stage(e, "download"), e)
        try:
            signed = self._signed(path, cur)
            index = self._open(path, self._policy())
            served = Served(index, PassageMap(index.data), time.time(), signed, _signature_bytes(path))
        except Exception as e:
            return self._fail(cur, _stage(e, "verify"), e)
        self._swap(cur, served)
        return True

    def _swap(self, cur: str, served: Served) -> None:
        self.served, self.current, self.warning, self._failed = served, cur, None, None
        self.high_water.raise_to(cur, served.signed)
        log.info("serving snapshot %s from %s", served.index.snapshot_id, self.source.label)
        if self.events:
            self.events.loaded(served.index.snapshot_id)
        self._cleanup()

    def admit(self, snapshot_id: str, signed: SignedManifest) -> None:
        """A new snapshot's signature may be swapped in: not older than the mark, not expired (ExportSource runs it
        on the target's manifest, before any download)."""
        self.high_water.check(snapshot_id, signed)
        check_unexpired(snapshot_id, signed)

    def _signed(self, path: Path, snapshot_id: str, new: bool = True) -> SignedManifest | None:
        """The snapshot's verified signature, admitted (only checked against the mark when it is not ``new``: the
        marked snapshot, served again from the cache, may have expired since); None without pinned keys."""
        if not self.trusted_keys:
            return None
        signed = verify_snapshot_signature(path, self.trusted_keys)
        if new:
            self.admit(snapshot_id, signed)
        else:
            self.high_water.check(snapshot_id, signed)
        return signed

    def _renew_signature(self, cur: str) -> None:
        """A re-export of the served snapshot signs it anew (a later expiry): take the newer signature; an older one
        is refused and counted once."""
        served = self.served
        if not self.trusted_keys or served is None:
            return
        raw = None
        try:
            self.source.renew_signature(cur)
            path = served.index.data.dir
            raw = _signature_bytes(path)
            if raw == served.signature_bytes or raw in self._refused_signatures:
                return
            signed = verify_snapshot_signature(path, self.trusted_keys)
            self.high_water.check(cur, signed)
        except (OSError, SignatureError) as e:
            if raw is not None:
                self._refused_signatures.add(raw)
            log.warning("%s: a new signature of the served snapshot %s was refused (%s)", self.source.label, cur, e)
            if self.events:
                self.events.failed("rollback" if isinstance(e, RollbackError) else "signature")
            return
        self.served = replace(served, signed=signed, signature_bytes=raw)
        self.high_water.raise_to(cur, signed)
        log.info("snapshot %s re-signed: sequence %d, expires %s", cur, signed.sequence, _expiry(signed))

    def _serve_mark(self) -> None:
        """Nothing served yet and the source names an older snapshot (a restart after a rollback): serve the newest
        verified one from the cache, if it is still there."""
        mark = self.high_water.mark()
        path = self.source.cached(mark.snapshot_id) if mark is not None else None
        if mark is None or path is None:
            return
        try:
            signed = self._signed(path, mark.snapshot_id, new=False)
            index = self._open(path, self._policy())
        except Exception as e:
            log.warning("the newest verified snapshot %s cannot be served from the cache (%s)", mark.snapshot_id, e)
            return
        self._swap(mark.snapshot_id, Served(index, PassageMap(index.data), time.time(), signed, _signature_bytes(path)))

    def _cleanup(self) -> None:
        try:
            self.source.cleanup({self.current} if self.current else set())
        except OSError as e:
            log.warning("cache cleanup failed: %s", e)

    def _fail(self, cur: str | None, stage: str, e: BaseException) -> bool:
        if stage in ("rollback", "expired") and self.served is None:  # a restart: what was served before, if cached
            self._serve_mark()
        self._failed = (cur, time.monotonic())
        msg = one_line(e)
        if self.served is None:  # nothing served yet: the reason alone
            self.warning = msg
        else:
            what = "was refused" if stage in ("rollback", "expired") else f"failed to {stage}"
            self.warning = f"{CURRENT} names {cur!r}, which {what} ({msg}); still serving snapshot {self.current}"
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


def _stage(e: BaseException, otherwise: str) -> str:
    if isinstance(e, RollbackError):
        return "rollback"
    if isinstance(e, ExpiredError):
        return "expired"
    return "signature" if isinstance(e, SignatureError) else otherwise


def _signature_bytes(path: Path) -> bytes | None:
    sig = path / SIGNATURE
    return sig.read_bytes() if sig.is_file() and not sig.is_symlink() else None


def _expiry(signed: SignedManifest) -> str:
    return (signed.freshness.expires_at if signed.freshness else None) or "never"
