"""Serving load: ``trustindex serve`` over HTTP on loopback at 1, 4 and 16 clients, against in-process search.

    PYTHONPATH=. .venv/bin/python bench/bench_serve.py [--sizes 20000 [100000]] [--duration 15] [--max-requests 5000]

Snapshot: synthetic (bench/synthetic.py) of 20,000 passages by default, with the real ONNX
int8 query encoder, so every request embeds its query with the real model.

Server: ``python -m trustindex.cli.main serve --data DIR --port P`` in its own process (the
clients never share its GIL), ready once ``/readyz`` answers (it has opened, verified and
warmed the snapshot by then).  Clients: threads in this process, each with its own
keep-alive ``httpx.Client``, posting ``{"query": q, "k": 10}`` to ``/v1/search`` over the
30 questions of bench/bench_query.py in turn; each level runs for ``--duration`` seconds or
``--max-requests`` requests, whichever ends first, after one untimed request per client.
Errors are non-200 answers and transport failures; latency percentiles are over the
successful requests.

Reference, same run: the same questions through the Python API (``Index.open(...).warm()``,
then ``Index.search(q, k=10)``) in a fresh process at 1 client, bounded the same way;
overhead = HTTP p50 at 1 client / in-process p50.  On a 2-core machine the clients take CPU
from the server, so the 16-client figures include the load generator's own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import WORK, bench_env, figure, print_figures, save, setup_env  # noqa: E402

LEVELS = (1, 4, 16)
GOAL_QPS = 200.0
GOAL_P99_MS = 50.0
GOAL_OVERHEAD = 1.3


@dataclass(frozen=True)
class LoadBounds:
    duration_s: float = 15.0
    max_requests: int = 5000


def latency_summary(seconds: list[float], errors: int, wall_s: float) -> dict:
    """queries/s over every answered request (errors included), percentiles over the successful ones."""
    a = np.asarray(seconds, dtype=float) * 1000
    pct = {f"p{p}_ms": round(float(np.percentile(a, p)), 2) if a.size else None for p in (50, 95, 99)}
    done = int(a.size) + errors
    return {
        "requests": done,
        "ok": int(a.size),
        "errors": errors,
        "wall_s": round(wall_s, 3),
        "qps": round(done / wall_s, 1) if wall_s > 0 else 0.0,
        **pct,
    }


def http_load(url: str, queries: list[str], clients: int, bounds: LoadBounds) -> dict:
    """``clients`` threads posting searches until the time or request bound; their latencies and errors."""
    import httpx

    lock = threading.Lock()
    state = {"next": 0}
    times: list[float] = []
    failures: dict[str, int] = {}
    deadline = [0.0]
    t0 = [0.0]

    def begin() -> None:  # runs once every client holds an open connection
        t0[0] = time.perf_counter()
        deadline[0] = t0[0] + bounds.duration_s

    start = threading.Barrier(clients + 1, action=begin)

    def take() -> int | None:
        with lock:
            n = state["next"]
            if n >= bounds.max_requests or time.perf_counter() >= deadline[0]:
                return None
            state["next"] = n + 1
            return n

    def client() -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            try:  # untimed: opens the connection
                c.post("/v1/search", json={"query": queries[0], "k": 10})
            except httpx.HTTPError:
                pass  # the timed loop counts what fails
            start.wait()
            mine: list[float] = []
            while (n := take()) is not None:
                t0 = time.perf_counter()
                try:
                    r = c.post("/v1/search", json={"query": queries[n % len(queries)], "k": 10})
                    why = None if r.status_code == 200 else f"HTTP {r.status_code}"
                except httpx.HTTPError as e:
                    why = type(e).__name__
                took = time.perf_counter() - t0
                if why is None:
                    mine.append(took)
                else:
                    with lock:
                        failures[why] = failures.get(why, 0) + 1
            with lock:
                times.extend(mine)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    for t in threads:
        t.join(timeout=bounds.duration_s + 120)
    wall = time.perf_counter() - t0[0]
    out = latency_summary(times, sum(failures.values()), wall)
    out["clients"] = clients
    out["failures"] = failures
    return out


# -- the in-process reference (its own process) ----------------------------------------------------
def inprocess_worker(data: str, bounds: LoadBounds) -> dict:
    from bench.bench_query import QUESTIONS
    from trustindex.query.index import Index

    index = Index.open(data_dir=data).warm()
    index.search(QUESTIONS[0], k=10)
    times: list[float] = []
    end = time.perf_counter() + bounds.duration_s
    t_all = time.perf_counter()
    while len(times) < bounds.max_requests and time.perf_counter() < end:
        q = QUESTIONS[len(times) % len(QUESTIONS)]
        t0 = time.perf_counter()
        index.search(q, k=10)
        times.append(time.perf_counter() - t0)
    return latency_summary(times, 0, time.perf_counter() - t_all)


def measure_inprocess(data: Path, bounds: LoadBounds) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--inprocess-worker",
        str(data),
        "--duration",
        str(bounds.duration_s),
        "--max-requests",
        str(bounds.max_requests),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=bench_env(), timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"in-process worker failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# -- the server process ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``trustindex serve`` on a free loopback port, ready once /readyz answers 200."""

    def __init__(self, data: Path, log: Path, ready_timeout_s: float = 600):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.ready_timeout_s = ready_timeout_s
        self.cmd = [
            sys.executable,
            "-m",
            "trustindex.cli.main",
            "serve",
            "--data",
            str(data),
            "--port",
            str(self.port),
            "--poll",
            "3600",  # the snapshot does not change during the run
        ]

    def __enter__(self) -> ServerProcess:
        import httpx

        self.log = self.log_path.open("w")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, env=bench_env())
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited ({self.proc.returncode}):\n{self.log_path.read_text()[-3000:]}")
            if time.perf_counter() - t0 > self.ready_timeout_s:
                self.__exit__()
                raise RuntimeError(f"server not ready after {self.ready_timeout_s} s; log {self.log_path}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.ready_s = time.perf_counter() - t0
        return self

    def peak_rss_mib(self) -> float | None:
        """The server's peak resident memory (VmHWM), read while it still runs."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return None

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def level_figures(k: int, c: int, r: dict, ref: dict) -> list[dict]:
    at = f"@ {k}k, {c} client{'s' if c > 1 else ''}"
    qps_goal = dict(goal=f"≥ {GOAL_QPS:.0f}", met=r["qps"] >= GOAL_QPS) if c == 16 else {}
    p99_goal = dict(goal=f"≤ {GOAL_P99_MS:.0f} ms", met=(r["p99_ms"] or 1e9) <= GOAL_P99_MS) if c == 16 else {}
    qps_ref = dict(reference="in-process, 1 client", reference_value=ref["qps"], ratio=r["qps"] / ref["qps"])
    p50_ref = {}
    if c == 1 and r["p50_ms"]:
        p50_ref = dict(
            reference="in-process p50",
            reference_value=ref["p50_ms"],
            ratio=r["p50_ms"] / ref["p50_ms"],
            goal=f"overhead ≤ {GOAL_OVERHEAD}×",
            met=r["p50_ms"] / ref["p50_ms"] <= GOAL_OVERHEAD,
        )
    return [
        figure(f"HTTP queries/s {at}", r["qps"], "q/s", **(qps_ref if c == 1 else {}), **qps_goal),
        figure(f"HTTP p50 {at}", r["p50_ms"] or float("nan"), "ms", **p50_ref),
        figure(f"HTTP p95 {at}", r["p95_ms"] or float("nan"), "ms"),
        figure(f"HTTP p99 {at}", r["p99_ms"] or float("nan"), "ms", **p99_goal),
        figure(f"HTTP errors {at}", r["errors"], "requests", goal="0", met=r["errors"] == 0),
    ]


def run(sizes: list[int], levels: list[int], bounds: LoadBounds) -> dict:
    from bench import synthetic
    from bench.bench_query import QUESTIONS

    figures, results, builds = [], {}, {}
    load_before = round(os.getloadavg()[0], 2)
    for n in sizes:
        k = n // 1000
        data, info = synthetic.build(n, ann=False)
        builds[str(n)] = info
        ref = measure_inprocess(data, bounds)
        print(f"  {n} in-process, 1 client: {ref}", flush=True)
        per_level = {}
        with ServerProcess(data, WORK / f"serve-{n}.log") as server:
            print(f"  {n} server ready in {server.ready_s:.1f} s", flush=True)
            for c in levels:
                r = http_load(server.url, QUESTIONS, c, bounds)
                r["load_average_1m"] = round(os.getloadavg()[0], 2)
                per_level[str(c)] = r
                print(f"  {n} HTTP, {c} clients: {r}", flush=True)
            rss = server.peak_rss_mib()
        results[str(n)] = {
            "inprocess": ref,
            "http": per_level,
            "server_ready_s": round(server.ready_s, 2),
            "server_peak_rss_mib": rss,
        }
        figures.append(figure(f"in-process search queries/s @ {k}k, 1 client", ref["qps"], "q/s"))
        figures.append(figure(f"in-process search p50 @ {k}k, 1 client", ref["p50_ms"], "ms"))
        figures.append(figure(f"in-process search p99 @ {k}k, 1 client", ref["p99_ms"], "ms"))
        for c in levels:
            figures += level_figures(k, c, per_level[str(c)], ref)
        if rss is not None:
            figures.append(figure(f"server peak RSS @ {k}k", rss, "MiB"))
    return {
        "figures": figures,
        "results": results,
        "builds": builds,
        "load_average_1m_before": load_before,
        "method": f"bench/bench_serve.py: synthetic snapshots (bench/synthetic.py) of "
        f"{', '.join(str(s) for s in sizes)} passages with the real ONNX int8 query encoder; `trustindex serve "
        f"--data` in its own process on loopback, clients = threads in the bench process, one keep-alive httpx "
        f"client each, POST /v1/search k 10 over the {len(QUESTIONS)} questions of bench_query.py in turn; "
        f"levels {', '.join(map(str, levels))} clients, each {bounds.duration_s:g} s or "
        f"{bounds.max_requests} requests, whichever first; q/s counts every answer, percentiles the successful "
        f"ones. Reference: Index.open().warm() then Index.search(k=10), the same questions at 1 client in a "
        f"fresh process, bounded the same way, before the server starts; overhead = HTTP p50 / in-process p50 at "
        f"1 client. Clients and server share the machine's cores, so the multi-client figures include the load "
        f"generator's cost; the 1-minute load average is recorded per level.",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000], help="snapshot sizes (100000 is opt-in)")
    ap.add_argument("--levels", type=int, nargs="+", default=list(LEVELS), help="concurrent clients per level")
    ap.add_argument("--duration", type=float, default=LoadBounds.duration_s, help="seconds per level")
    ap.add_argument("--max-requests", type=int, default=LoadBounds.max_requests, help="requests per level at most")
    ap.add_argument("--inprocess-worker", metavar="DATA_DIR", help=argparse.SUPPRESS)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    bounds = LoadBounds(a.duration, a.max_requests)
    if a.inprocess_worker:
        print(json.dumps(inprocess_worker(a.inprocess_worker, bounds)))
        return 0
    print(f"  load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    r = run(sorted(a.sizes), sorted(a.levels), bounds)
    print_figures("serve", r["figures"])
    print(f"  load average (1 min) at end: {os.getloadavg()[0]:.2f}", flush=True)
    if not a.no_save:
        save("serve", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
