"""bench/bench_serve.py's load generator and server process: the client loop (threads, one keep-alive httpx
client each, bounded by time and request count), the latency summary, and ``trustindex serve`` in its own
process."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import bench_env


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``trustindex serve --workers N`` on a free loopback port, ready once /readyz answers 200 and /metrics shows
    every worker serving the snapshot."""

    def __init__(self, data: Path, log: Path, workers: int = 1, ready_timeout_s: float = 600):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.ready_timeout_s = ready_timeout_s
        self.workers = workers
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
            "--workers",
            str(workers),
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
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200 and self.serving() >= self.workers:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.ready_s = time.perf_counter() - t0
        return self

    def serving(self) -> int:
        """How many processes serve a snapshot (one series per worker under --workers; 1 without)."""
        import httpx

        lines = httpx.get(f"{self.url}/metrics", timeout=10).text.splitlines()
        return sum(1 for line in lines if line.startswith("trustindex_snapshot_info{") and line.endswith(" 1.0"))

    def peak_rss_mib(self) -> float | None:
        """The server's peak resident memory (VmHWM), read while it still runs: its processes' summed."""
        total = 0
        for pid in [self.proc.pid, *children(self.proc.pid)]:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
            except OSError:
                pass
        return round(total / 1024, 1) if total else None

    def __exit__(self, *exc) -> None:
        stop_process(self.proc)
        self.log.close()


def stop_process(proc: subprocess.Popen, grace_s: float = 30) -> None:
    """SIGTERM, then SIGKILL after ``grace_s`` seconds; waits for the exit either way (nothing left running)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def vector_lookups(url: str) -> dict[str, int]:
    """The server's query-vector cache lookups so far, by result (its /metrics)."""
    import httpx

    out = {"hit": 0, "miss": 0}
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("trustindex_query_vector_lookups_total{"):
            result = line.split('result="', 1)[1].split('"', 1)[0]
            out[result] = out.get(result, 0) + int(float(line.rsplit(" ", 1)[1]))
    return out


def children(pid: int) -> list[int]:
    """``pid``'s child processes (Linux /proc; none elsewhere)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            pass
    return out
