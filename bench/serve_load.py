"""bench/bench_serve.py's load generator and server process: the client loop (threads, one keep-alive httpx
client each, bounded by time and request count), the latency summary, and ``trustindex serve`` in its own
process."""

from __future__ import annotations

import os
import re
import shutil
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
        "mean_ms": round(float(a.mean()), 2) if a.size else None,
        **pct,
    }


SNAPSHOT_ID = re.compile(rb'"snapshot_id":\s*"([0-9a-f]+)"')


def twin(data: Path, of: str, compression: str, link: bool = False) -> str:
    """Another valid snapshot of the same passages in ``data``: chunks.parquet rewritten with other compression
    (other bytes, so another id), its manifest updated the way a build writes one.  ``link``: the other files are
    hard links of the original's (only for a twin nobody edits; chunks.parquet and the manifest are new files)."""
    import pyarrow.parquet as pq

    from trustindex.schemas.snapshot import MANIFEST, SNAPSHOTS_DIR, file_sha256, read_manifest, snapshot_id_from_files

    src, work = data / SNAPSHOTS_DIR / of, data / SNAPSHOTS_DIR / f"twin-{compression}"
    shutil.copytree(src, work, copy_function=os.link if link else shutil.copy2)
    (work / "chunks.parquet").unlink()
    pq.write_table(pq.read_table(src / "chunks.parquet"), work / "chunks.parquet", compression=compression)
    m = read_manifest(src)
    m.files["chunks.parquet"] = {
        **m.files["chunks.parquet"],
        "size": (work / "chunks.parquet").stat().st_size,
        "sha256": file_sha256(work / "chunks.parquet"),
    }
    m.snapshot_id, m.parent = snapshot_id_from_files(m.files), m.snapshot_id
    (work / MANIFEST).unlink()
    (work / MANIFEST).write_text(m.to_json(), encoding="utf-8")
    work.rename(data / SNAPSHOTS_DIR / m.snapshot_id)
    return m.snapshot_id


def live_snapshot_series(url: str, timeout: float = 10) -> list[str]:
    """The server's /metrics lines of the snapshot each process serves (one per worker under --workers)."""
    import httpx

    lines = httpx.get(f"{url}/metrics", timeout=timeout).text.splitlines()
    return [x for x in lines if x.startswith("trustindex_snapshot_info{") and x.endswith(" 1.0")]


def served_by_all(url: str, snapshot_id: str) -> bool:
    """Every worker's series names ``snapshot_id`` as the one it serves."""
    import httpx

    try:
        live = live_snapshot_series(url, timeout=5)
    except httpx.HTTPError:
        return False
    return bool(live) and all(f'"{snapshot_id}"' in x for x in live)


class SnapshotSwapper:
    """A data directory holding two snapshots of the same passages (the measured one, hard links, and its
    ``twin``: same rows, other bytes, another id), and a thread that moves CURRENT to the twin and back while a load
    level runs, as a publish and a rollback do: the server must swap twice without failing a request, and the
    latency it shows is that of the same passages throughout.  Each move waits for the server to show it (every
    worker serving the snapshot) up to ``settle_s``: a loaded machine can take longer to verify and warm a
    snapshot than a level lasts, and a level that ended before the twin answered would have measured no swap."""

    settle_s = 30.0  # the longest a move waits for the server to serve the snapshot it names

    def __init__(self, work: Path, served: Path):
        from trustindex.schemas.snapshot import SNAPSHOTS_DIR, resolve_current
        from trustindex.warehouse.snapshots import set_current

        live = resolve_current(served)
        self.data = work
        shutil.rmtree(work, ignore_errors=True)
        (work / SNAPSHOTS_DIR).mkdir(parents=True)
        shutil.copytree(live, work / SNAPSHOTS_DIR / live.name, copy_function=os.link)
        self.ids = (live.name, twin(work, live.name, "gzip", link=True))
        self.twin_seen_after_s: float | None = None
        self.finished = threading.Event()  # both moves made and the second one served (or settle_s passed)
        set_current(work, live.name)

    def during(self, duration_s: float, url: str) -> threading.Thread:
        """Start the two moves of CURRENT: to the twin at a quarter of ``duration_s``, back once every worker of the
        server at ``url`` serves the twin (its /metrics) and at least half of the level has passed; ``finished`` is
        set once every worker serves the first snapshot again.  Each wait is bounded by ``settle_s``."""
        from trustindex.warehouse.snapshots import rollback

        self.finished.clear()  # one swapper serves several levels (a level per worker count in bench_serve)

        def served(snapshot_id: str, not_before: float) -> None:
            moved = time.monotonic()
            while time.monotonic() - moved < self.settle_s and (
                time.monotonic() < not_before or not served_by_all(url, snapshot_id)
            ):
                time.sleep(0.2)

        def moves() -> None:
            start = time.monotonic()
            time.sleep(duration_s / 4)
            rollback(self.data, self.ids[1])  # verifies the snapshot, then replaces CURRENT atomically
            served(self.ids[1], start + duration_s / 2)
            self.twin_seen_after_s = round(time.monotonic() - start, 2)
            rollback(self.data, self.ids[0])
            served(self.ids[0], 0.0)
            self.finished.set()

        t = threading.Thread(target=moves, daemon=True, name="snapshot-swap")
        t.start()
        return t


def http_load(
    url: str, queries: list[str], clients: int, bounds: LoadBounds, swap: SnapshotSwapper | None = None
) -> dict:
    """``clients`` threads posting searches until the time or request bound; their latencies, errors, and the
    snapshots that answered (``swap``: CURRENT moves twice while they run, and the level lasts until the second
    move is served, at most the swapper's two bounded waits past its time bound)."""
    import httpx

    lock = threading.Lock()
    state = {"next": 0}
    times: list[float] = []
    failures: dict[str, int] = {}
    answered_by: dict[str, int] = {}
    deadline = [0.0]
    t0 = [0.0]

    def begin() -> None:  # runs once every client holds an open connection
        t0[0] = time.perf_counter()
        deadline[0] = t0[0] + bounds.duration_s
        if swap is not None:
            swap.during(bounds.duration_s, url)

    start = threading.Barrier(clients + 1, action=begin)

    def take() -> int | None:
        with lock:
            n = state["next"]
            over = time.perf_counter() >= deadline[0] and (swap is None or swap.finished.is_set())
            if n >= bounds.max_requests or over:
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
            seen: dict[str, int] = {}
            while (n := take()) is not None:
                t0 = time.perf_counter()
                try:
                    r = c.post("/v1/search", json={"query": queries[n % len(queries)], "k": 10})
                    why = None if r.status_code == 200 else f"HTTP {r.status_code}"
                    m = SNAPSHOT_ID.search(r.content) if why is None else None
                    if m:
                        seen[m[1].decode()] = seen.get(m[1].decode(), 0) + 1
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
                for sid, count in seen.items():
                    answered_by[sid] = answered_by.get(sid, 0) + count

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    for t in threads:
        t.join(timeout=bounds.duration_s + 120 + (2 * SnapshotSwapper.settle_s if swap else 0))
    wall = time.perf_counter() - t0[0]
    out = latency_summary(times, sum(failures.values()), wall)
    out["clients"] = clients
    out["failures"] = failures
    out["answered_by"] = answered_by
    if swap is not None:
        out["twin_served_by_all_after_s"] = swap.twin_seen_after_s
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``trustindex serve --workers N`` on a free loopback port, ready once /readyz answers 200 and /metrics shows
    every worker serving the snapshot."""

    def __init__(
        self,
        data: Path,
        log: Path,
        workers: int = 1,
        ready_timeout_s: float = 600,
        poll_s: float = 3600,
        extra: tuple[str, ...] = (),
        pythonpath: Path | None = None,
    ):
        """``extra``: more serve options; ``pythonpath``: run another tree's package (a base commit's, laid out as
        installed), from a folder that holds no other ``trustindex``."""
        self.pythonpath = pythonpath
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
            str(poll_s),  # 3600 by default: the snapshot does not change during the run
            "--workers",
            str(workers),
            *extra,  # more serve options (bench/bench_audit.py: --audit-log)
        ]

    def __enter__(self) -> ServerProcess:
        import httpx

        self.log = self.log_path.open("w")
        t0 = time.perf_counter()
        env, cwd = bench_env(), None
        if self.pythonpath is not None:
            env["PYTHONPATH"], cwd = str(self.pythonpath), str(self.pythonpath)
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
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
        return len(live_snapshot_series(self.url))

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
