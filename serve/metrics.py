"""The serving tier's Prometheus metrics (prometheus_client), one registry per server so tests can run many.

With ``serve --workers N`` (N > 1) the workers share prometheus_client's multiprocess mode: the parent points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory before it starts them, every worker writes its counters and
histograms there, and ``/metrics``, whichever worker answers it, sums them over the workers.  The
snapshot gauge keeps one series per worker (a ``pid`` label), so a scrape shows which snapshot each serves; load
and swap counts are summed (a swap counts once per worker).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own name for it


def multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROCESS_ENV))


class ServeMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "trustindex_http_requests", "HTTP requests by route and status", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "trustindex_http_request_seconds",
            "HTTP request latency by route",
            ["route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=r,
        )
        self.abstentions = Counter(
            "trustindex_abstentions", "searches that abstained, by reason", ["reason"], registry=r
        )
        self.snapshot = Gauge(
            "trustindex_snapshot_info",
            "the served snapshot (value 1; per worker under --workers)",
            ["snapshot_id"],
            registry=r,
            multiprocess_mode="liveall",
        )
        self.swaps = Counter("trustindex_snapshot_swaps", "snapshots loaded and swapped in", registry=r)
        self.failures = Counter(
            "trustindex_snapshot_load_failures", "snapshots not served, by the stage that failed", ["stage"], registry=r
        )
        self.lookups = Counter(
            "trustindex_query_vector_lookups",
            "query vectors looked up in the served snapshot's cache, by result",
            ["snapshot_id", "result"],
            registry=r,
        )

        # the access layer (serve/access.py, serve/audit.py): refusals by reason, and the audit log's lines
        def by(name: str, what: str, label: str) -> Counter:
            return Counter(f"trustindex_{name}", what, [label], registry=r)

        self.auth_failures = by("auth_failures", "requests refused for their credentials, by reason", "reason")
        self.scope_denials = by("scope_denials", "requests refused by the caller's source scope, by reason", "reason")
        self.audit_lines = by("audit_lines", "audit log lines written, or dropped on a full queue", "result")
        self._served_state: Callable[[], Any] = lambda: None
        self._counted: tuple[Any, int, int] | None = None  # (QueryVectors, hits, misses) already counted
        self._lock = threading.Lock()
        self._snapshot_id: str | None = None

    def watch_query_vectors(self, served_state: Callable[[], Any]) -> None:
        """Count the served state's query-vector lookups (query/state.py ``QueryVectors``), hits and misses,
        labelled with the snapshot (a swap starts new series: the vectors belong to its encoder).  The cache
        counts them itself; they are copied into the counters after every search and before every scrape, so
        multiprocess mode can sum them over the workers."""
        self._served_state = served_state

    def count_lookups(self) -> None:
        state = self._served_state()
        if state is None:
            return
        qv = state.query_vectors
        with self._lock:
            hits, misses = qv.hits, qv.misses
            seen = self._counted if self._counted is not None and self._counted[0] is qv else (qv, 0, 0)
            if hits > seen[1]:
                self.lookups.labels(snapshot_id=state.snapshot_id, result="hit").inc(hits - seen[1])
            if misses > seen[2]:
                self.lookups.labels(snapshot_id=state.snapshot_id, result="miss").inc(misses - seen[2])
            self._counted = (qv, hits, misses)

    # serve.live.LoadEvents
    def loaded(self, snapshot_id: str) -> None:
        if multiprocess():  # series cannot be removed there: the old one reads 0
            if self._snapshot_id is not None:
                self.snapshot.labels(snapshot_id=self._snapshot_id).set(0)
        else:
            self.snapshot.clear()
        self.snapshot.labels(snapshot_id=snapshot_id).set(1)
        self._snapshot_id = snapshot_id
        self.swaps.inc()

    def audited(self, result: str, n: int = 1) -> None:
        self.audit_lines.labels(result=result).inc(n)

    def failed(self, stage: str) -> None:
        self.failures.labels(stage=stage).inc()

    def searched(self, response: dict) -> None:
        if response.get("abstained"):
            self.abstentions.labels(reason=str(response.get("abstention_reason"))).inc()
        self.count_lookups()

    def render(self) -> bytes:
        self.count_lookups()
        if not multiprocess():
            return generate_latest(self.registry)
        from prometheus_client import multiprocess as mp

        registry = CollectorRegistry()
        mp.MultiProcessCollector(registry)
        return generate_latest(registry)
