"""Who asked what, and which passages they got: ``serve --audit-log FILE`` (docs/serving.md, Audit log).

One JSON line per answered request of the API (``/v1/*``) and per MCP tool call, and one per refused credential:

    {"time": "2026-12-03T10:15:02.118Z", "who": "team-a-ci", "via": "token", "route": "/v1/search",
     "status": 200, "ms": 7.9, "snapshot_id": "…", "query": "…", "targets": {…}, "chunk_ids": ["…", …]}

``who`` is a token's name or a JWT's subject, never a secret; under ``--audit-hash-queries`` the query texts (and
``also`` phrasings) are written as ``query_sha256`` instead.  Requests never wait for the disk: a line goes into a
bounded queue (``--audit-queue``) that one thread (the standard library's ``QueueListener``) writes to the file
through ``RotatingFileHandler`` (rotated at ``--audit-max-bytes``, ``--audit-backups`` old files kept).  A full
queue drops the line, counts it (``trustindex_audit_lines_total{result="dropped"}``) and, once the queue takes
lines again, writes one ``{"event": "audit_lines_dropped", "lines": N}`` line, so the file itself shows the gap.
With ``--workers N`` each worker writes its own file (``FILE`` with ``.<n>`` before the suffix).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import logging.handlers
import os
import queue
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from trustindex.serve.access import Identity

DEFAULT_MAX_BYTES = 64 << 20
DEFAULT_BACKUPS = 5
DEFAULT_QUEUE = 10_000
WORKER_NUMBER_ENV = "TRUSTINDEX_SERVE_WORKER"  # set by serve/workers.py in each worker: which file it writes


@dataclass(frozen=True)
class AuditSpec:
    """``serve --audit-*`` as plain values (each worker opens its own file)."""

    path: str | None = None
    hash_queries: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    backups: int = DEFAULT_BACKUPS
    queue_size: int = DEFAULT_QUEUE

    def for_worker(self, n: int | None) -> Path | None:
        if not self.path:
            return None
        p = Path(self.path)
        return p if n is None else p.with_name(f"{p.stem}.{n}{p.suffix}")


class _JsonLines(logging.Formatter):
    """A record's ``msg`` (a dict) as one JSON line; the time it was asked, not written, in UTC."""

    def format(self, record: logging.LogRecord) -> str:
        entry = record.msg if isinstance(record.msg, dict) else {"message": str(record.msg)}
        when = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return orjson.dumps({"time": when, **entry}).decode()


class _Counted(logging.handlers.RotatingFileHandler):
    def __init__(self, path: Path, spec: AuditSpec, counted):
        path.parent.mkdir(parents=True, exist_ok=True)
        super().__init__(path, maxBytes=spec.max_bytes, backupCount=spec.backups, encoding="utf-8")
        self.setFormatter(_JsonLines())
        self.counted = counted

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        self.counted("written")


class _Listener(logging.handlers.QueueListener):
    """The standard library's writer thread, whose stop waits for room in a full queue (its own put_nowait would
    fail there): the thread is draining it."""

    def __init__(self, q: queue.Queue, handler: logging.Handler):
        super().__init__(q, handler)
        self.waiting_queue = q

    def enqueue_sentinel(self) -> None:
        self.waiting_queue.put(None)  # None: QueueListener's sentinel


class AuditLog:
    """The writer: ``write(entry)`` from any thread or the event loop, never blocking; ``close()`` drains."""

    def __init__(self, spec: AuditSpec, worker: int | None = None, counted=lambda result, n=1: None):
        path = spec.for_worker(worker)
        assert path is not None, "AuditLog needs spec.path"
        self.spec, self.path, self.counted = spec, path, counted
        self.queue: queue.Queue = queue.Queue(max(1, spec.queue_size))
        self._dropped = 0
        self._lock = threading.Lock()
        self.listener = _Listener(self.queue, _Counted(path, spec, counted))
        self.listener.start()

    def write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if self._dropped and self._put({"event": "audit_lines_dropped", "lines": self._dropped}):
                self._dropped = 0
            if not self._put(entry):
                self._dropped += 1
                self.counted("dropped")

    def _put(self, entry: dict) -> bool:
        try:
            self.queue.put_nowait(logging.makeLogRecord({"msg": entry, "created": time.time()}))
            return True
        except queue.Full:
            return False

    def close(self) -> None:
        self.listener.stop()  # writes what is queued, then stops the thread
        for h in self.listener.handlers:
            h.close()


def query_fields(text: object, also: object, hashed: bool) -> dict:
    """The query (and its ``also`` phrasings) as the log keeps them: the texts, or their sha256."""
    if not isinstance(text, str):
        return {}
    if not hashed:
        return {"query": text, **({"also": also} if also else {})}
    digest: dict[str, Any] = {"query_sha256": hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()}
    if isinstance(also, list) and also:
        digest["also_sha256"] = [hashlib.sha256(str(a).encode("utf-8", "replace")).hexdigest() for a in also]
    return digest


def search_fields(req: object, result: dict | None, hashed: bool) -> dict:
    """A search's line: what was asked, the snapshot that answered and the chunk ids it returned."""
    req = req if isinstance(req, dict) else {}
    out = query_fields(req.get("query"), req.get("also"), hashed)
    if req.get("targets"):
        out["targets"] = req["targets"]
    if result is not None and "hits" in result:
        out["snapshot_id"] = result.get("snapshot_id")
        out["chunk_ids"] = [h["chunk_id"] for h in result["hits"]]
        out["abstained"] = result.get("abstained")
    elif result is not None and "error" in result:
        out["error"] = result["error"]
    return out


def batch_fields(reqs: list, results: list[dict], hashed: bool) -> dict:
    lines = [search_fields(r, res, hashed) for r, res in zip(reqs, results, strict=False)]
    snapshot = next((x["snapshot_id"] for x in lines if x.get("snapshot_id")), None)
    return {"snapshot_id": snapshot, "requests": lines}


def passage_fields(chunk_id: str, result: dict | None) -> dict:
    out: dict[str, Any] = {"chunk_id": chunk_id}
    if result is not None:
        out["snapshot_id"] = result.get("snapshot_id")
        out["chunk_ids"] = [p["chunk_id"] for p in result.get("passages", [])]
    return out


class AccessEvents:
    """What the access layer reports: counted in ``/metrics`` by reason and, with an audit log, one line each."""

    def __init__(self, metrics, audit: AuditLog | None):
        self.metrics, self.audit = metrics, audit

    def auth_failed(self, reason: str, path: str) -> None:
        self.metrics.auth_failures.labels(reason=reason).inc()
        if self.audit is not None:
            self.audit.write({"who": None, "via": None, "route": path, "status": 401, "refused": reason})

    def scope_denied(self, reason: str, path: str, who: Identity | None = None, line: bool = True) -> None:
        """``line``: False for a denial inside an answered request (a passage outside the scope), whose own line
        says so."""
        self.metrics.scope_denials.labels(reason=reason).inc()
        if self.audit is not None and line:
            named = {"who": who.name, "via": who.via} if who else {"who": None, "via": None}
            self.audit.write({**named, "route": path, "status": 403, "refused": reason})

    def answered(self, who: Identity, route: str, status: int, seconds: float, fields: dict) -> None:
        if self.audit is not None:
            line = {"who": who.name, "via": who.via, "route": route, "status": status, "ms": round(seconds * 1000, 2)}
            self.audit.write({**line, **fields})


def worker_number() -> int | None:
    """This process's worker number under ``serve --workers N`` (serve/workers.py), None for one process."""
    n = os.environ.get(WORKER_NUMBER_ENV)
    return int(n) if n and n.isdigit() else None


def closing(background, audit: AuditLog | None):
    """``background`` (a context manager factory, or None) for the app's lifetime, and ``audit`` drained and
    closed when the app stops."""
    if audit is None:
        return background

    @contextlib.contextmanager
    def both():
        try:
            with background() if background else contextlib.nullcontext():
                yield
        finally:
            audit.close()

    return both
