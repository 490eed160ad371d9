"""The serving tier's Prometheus metrics (prometheus_client), one registry per server so tests can run many."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily

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

    def watch_query_vectors(self, served_state: Callable[[], Any]) -> None:
        """Report the served state's query-vector lookups (query/state.py ``QueryVectors``), hits and misses, as
        counters labelled with the snapshot (a swap starts new series: the vectors belong to its encoder)."""

        class Lookups:
            def collect(self):
                family = CounterMetricFamily(
                    "trustindex_query_vector_lookups",
                    "query vectors looked up in the served snapshot's cache, by result",
                    labels=["snapshot_id", "result"],
                )
                state = served_state()
                if state is not None:
                    qv = state.query_vectors
                    family.add_metric([state.snapshot_id, "hit"], qv.hits)
                    family.add_metric([state.snapshot_id, "miss"], qv.misses)
                yield family

        self.registry.register(Lookups())

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
