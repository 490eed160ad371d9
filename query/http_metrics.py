"""The serving tier's Prometheus metrics (prometheus_client), one registry per server so tests can run many."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


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
        self.snapshot = Gauge("trustindex_snapshot_info", "the served snapshot (value 1)", ["snapshot_id"], registry=r)
        self.swaps = Counter("trustindex_snapshot_swaps", "snapshots loaded and swapped in", registry=r)
        self.failures = Counter(
            "trustindex_snapshot_load_failures", "snapshots not served, by the stage that failed", ["stage"], registry=r
        )

    # query.serving.LoadEvents
    def loaded(self, snapshot_id: str) -> None:
        self.snapshot.clear()
        self.snapshot.labels(snapshot_id=snapshot_id).set(1)
        self.swaps.inc()

    def failed(self, stage: str) -> None:
        self.failures.labels(stage=stage).inc()

    def searched(self, response: dict) -> None:
        if response.get("abstained"):
            self.abstentions.labels(reason=str(response.get("abstention_reason"))).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
