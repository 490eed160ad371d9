"""``trustindex serve --workers 2`` as its own process on loopback: both workers answer, a swap exported to the
target reaches both, and stopping the parent (SIGTERM, or SIGKILL) leaves no worker behind."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from bench.serve_load import twin
from tests.kits.servekit import ServeProcess, export
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.snapshot import CURRENT, SNAPSHOTS_DIR, resolve_current
from trustindex.serve.http_app import WORKER_HEADER
from trustindex.serve.live import SourceSpec
from trustindex.serve.workers import ServeSetup, reuseport_socket

pytestmark = pytest.mark.serving_load

WORKERS = 2


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc)."""
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = {int(k) for k in (task / "children").read_text().split()}
        except OSError:
            continue
        for k in kids - out:
            out |= {k} | descendants(k)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Workers(ServeProcess):
    """``trustindex serve ARGS --workers 2`` on a free port, ready once /readyz answers."""

    def __init__(self, args: list[str], log: Path):
        super().__init__([*args, "--workers", str(WORKERS)], log)

    def answers(self, until: float = 240) -> dict[int, str]:
        """Search on a fresh connection each time (the kernel hands each to one worker) until every worker has
        answered; each worker's pid and the snapshot id of its last answer."""
        seen: dict[int, str] = {}
        deadline = time.monotonic() + until
        while len(seen) < WORKERS:
            assert time.monotonic() < deadline, f"only workers {sorted(seen)} answered"
            r = httpx.post(f"{self.url}/v1/search", json={"query": "counter", "k": 3}, timeout=60)
            assert r.status_code == 200, r.text
            seen[int(r.headers[WORKER_HEADER])] = r.json()["snapshot_id"]
            time.sleep(0.05)
        return seen

    def snapshot_series(self) -> dict[tuple[str, str], float]:
        """``trustindex_snapshot_info`` from /metrics: (pid, snapshot id) -> value."""
        out = {}
        for line in httpx.get(f"{self.url}/metrics", timeout=60).text.splitlines():
            if line.startswith("trustindex_snapshot_info{"):
                labels, value = line.rsplit(" ", 1)
                pid = labels.split('pid="', 1)[1].split('"', 1)[0]
                sid = labels.split('snapshot_id="', 1)[1].split('"', 1)[0]
                out[pid, sid] = float(value)
        return out

    def stopped_cleanly(self, sig: int) -> None:
        family = descendants(self.proc.pid)
        assert len(family) >= WORKERS, family
        os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(alive(p) for p in family):
            assert time.monotonic() < deadline, f"orphans left: {[p for p in family if alive(p)]}"
            time.sleep(0.2)


def test_setup_round_trips_through_json():
    from trustindex.serve.http_app import ServeConfig, ServeLimits

    setup = ServeSetup(
        config=ServeConfig(port=9, limits=ServeLimits(max_k=7, max_concurrency=3), tokens=frozenset({"a", "b"})),
        source=SourceSpec(uri="s3://b/p", endpoint="http://127.0.0.1:9000", query_cache=0),
        workers=3,
    )
    assert ServeSetup.from_json(setup.to_json()) == setup


def test_two_workers_answer_both_swap_and_stop_with_the_parent(refreshed, tmp_path, capsys):
    data, to = tmp_path / "data", str(tmp_path / "target")
    live = resolve_current(refreshed["data"])
    shutil.copytree(live, data / SNAPSHOTS_DIR / live.name)
    (data / CURRENT).write_text(live.name + "\n")
    first, second = live.name, twin(data, live.name, "gzip")
    export(data, first, to, None, capsys)

    with Workers(["--from", to, "--cache", str(tmp_path / "cache")], tmp_path / "serve.log") as server:
        seen = server.answers()
        assert set(seen.values()) == {first}
        export(data, second, to, None, capsys)
        deadline = time.monotonic() + 180
        while {sid for (_, sid), v in server.snapshot_series().items() if v == 1.0} != {second} or len(
            server.snapshot_series()
        ) < 2 * WORKERS:
            assert time.monotonic() < deadline, f"not every worker swapped: {server.snapshot_series()}"
            time.sleep(0.2)
        series = server.snapshot_series()
        assert {pid for (pid, sid), v in series.items() if sid == second and v == 1.0} == {str(p) for p in seen}
        assert all(v == 0.0 for (_, sid), v in series.items() if sid == first)
        assert set(server.answers().values()) == {second}
        metrics = httpx.get(f"{server.url}/metrics", timeout=60).text
        assert f"trustindex_snapshot_swaps_total {2.0 * WORKERS}" in metrics  # each worker loads each snapshot
        server.stopped_cleanly(signal.SIGTERM)
    assert server.proc.returncode == 0
    log = (tmp_path / "serve.log").read_text()
    assert all(f"trustindex serve[{pid}]: serving snapshot {second}" in log for pid in seen)
    assert list((tmp_path / "cache" / SNAPSHOTS_DIR).iterdir()) != []


def listening_sockets(port: int) -> int:
    """How many sockets listen on loopback ``port`` (/proc/net/tcp: state 0A is LISTEN)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for r in rows if r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "0A")


def keep_alive_spread(url: str, connections: int = 16) -> list[set[int]]:
    """Open ``connections`` keep-alive connections in one tight loop (as wrk does), then ask 3 times on each: the
    workers that answered on each connection."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    conns = [http.client.HTTPConnection(host, port, timeout=60) for _ in range(connections)]
    try:
        for c in conns:
            c.connect()  # the kernel completes each handshake before any worker accepts
        out = []
        for c in conns:
            seen = set()
            for _ in range(3):
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                seen.add(int(r.headers[WORKER_HEADER]))
            out.append(seen)
        return out
    finally:
        for c in conns:
            c.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_workers_leave_with_the_parent(sig, refreshed, tmp_path):
    with Workers(["--data", str(refreshed["data"])], tmp_path / "serve.log") as server:
        server.answers()
        # Each worker listens on its own SO_REUSEPORT socket, so connections opened together spread over the workers
        # (with one shared socket, the first worker to wake took all 16); a connection stays with its worker.
        assert listening_sockets(httpx.URL(server.url).port) == WORKERS
        per_connection = keep_alive_spread(server.url)
        assert all(len(w) == 1 for w in per_connection), per_connection
        assert len(set().union(*per_connection)) == WORKERS, per_connection
        server.stopped_cleanly(sig)


def test_the_port_check_binds_without_taking_connections():
    """The supervisor checks its port with a bound, not listening, socket: a port another program listens on is
    one clear error, and the check itself never accepts (and so never resets) a connection."""
    other = socket.socket()  # a plain listener, no SO_REUSEPORT: the port is taken
    other.bind(("127.0.0.1", 0))
    other.listen()
    taken = other.getsockname()[1]
    with pytest.raises(TrustIndexError, match=rf"cannot listen on 127.0.0.1:{taken}"):
        reuseport_socket("127.0.0.1", taken, listen=False)
    other.close()

    check = reuseport_socket("127.0.0.1", 0, listen=False)
    port = check.getsockname()[1]
    try:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        group = reuseport_socket("127.0.0.1", port)  # a worker's listening socket joins the same port
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            accepted, _ = group.accept()
            accepted.close()
        group.close()
    finally:
        check.close()
