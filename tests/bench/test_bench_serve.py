"""bench/serve_load.py (bench_serve.py's load generator): its client loop against a small real uvicorn server on
loopback (no timing asserted)."""

from __future__ import annotations

import itertools
import socket
import threading
import time

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.serve_load import LoadBounds, http_load, latency_summary

pytestmark = pytest.mark.serving_load


def test_latency_summary_counts_errors_in_throughput_not_in_percentiles():
    s = latency_summary([0.010, 0.020, 0.030, 0.040], errors=2, wall_s=2.0)
    assert (s["requests"], s["ok"], s["errors"], s["qps"]) == (6, 4, 2, 3.0)
    assert s["p50_ms"] == 25.0 and s["p50_ms"] <= s["p95_ms"] <= s["p99_ms"] <= 40.0
    assert latency_summary([], errors=3, wall_s=1.0)["p99_ms"] is None


def test_http_load_stops_at_the_request_bound_and_counts_refusals():
    import uvicorn

    seen = itertools.count(1)
    queries: list[str] = []

    async def search(request: Request):
        body = await request.json()
        n = next(seen)
        queries.append(body["query"])
        if n % 5 == 0:  # every 5th request (warm-up requests included) is refused
            return JSONResponse({"error": "busy"}, status_code=503)
        return JSONResponse({"hits": [], "k": body["k"]})

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=[Route("/v1/search", search, methods=["POST"])]), port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        r = http_load(f"http://127.0.0.1:{port}", ["a", "b", "c"], clients=3, bounds=LoadBounds(20.0, 60))
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    total = len(queries)  # 3 untimed warm-up requests, then the 60 timed ones
    assert total == 63 and r["requests"] == 60 and r["clients"] == 3
    assert r["errors"] == r["failures"]["HTTP 503"] == 12  # requests 5, 10, ..., 60 of 4..63
    assert r["ok"] == 60 - r["errors"] and r["p50_ms"] <= r["p99_ms"]
    assert {"a", "b", "c"} == set(queries)


def test_a_load_level_runs_across_two_snapshot_swaps_without_a_failed_request(refreshed, tmp_path):
    from bench.serve_load import ServerProcess, SnapshotSwapper
    from trustindex.schemas.snapshot import resolve_current

    swap = SnapshotSwapper(tmp_path / "swap", refreshed["data"])
    first, second = swap.ids
    assert first == resolve_current(refreshed["data"]).name != second
    # the original snapshot's files are shared, never rewritten: the data directory the fixture built still verifies
    from trustindex.schemas.snapshot import verify_snapshot

    verify_snapshot(resolve_current(refreshed["data"]))
    with ServerProcess(swap.data, tmp_path / "serve.log", poll_s=0.3) as server:
        r = http_load(server.url, ["counter", "wallet", "compact"], clients=4, bounds=LoadBounds(6.0, 30000), swap=swap)
    assert r["errors"] == 0, r["failures"]
    assert set(r["answered_by"]) == {first, second}, r["answered_by"]  # the twin answered, then the first again
    assert sum(r["answered_by"].values()) == r["ok"] and resolve_current(swap.data).name == first
