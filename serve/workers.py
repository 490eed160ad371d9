"""Running ``trustindex serve``: one process, or ``--workers N`` processes sharing the port.

A search is mostly Python under one GIL (the encoder and the numpy products release it, the ranking around them
does not), so one process uses about one core however many requests it runs at once.  ``--workers N`` starts N
uvicorn worker processes, each listening on its own socket bound to the one port with SO_REUSEPORT, so the
kernel spreads new connections over the workers by their addresses.  uvicorn's own supervisor shares one
listening socket instead, and there the worker that wakes first accepts: measured with wrk's 16 keep-alive
connections opened at once, one worker took all 16 and the other stayed idle (143 q/s; see docs/serving.md).
The supervisor here (``Supervisor``) restarts a worker that dies and stops them all on SIGTERM or SIGINT.  Each
worker is a full stateless replica: it builds its own
``SnapshotHolder`` from the ``ServeSetup`` the parent serialises into ``TRUSTINDEX_SERVE_SETUP``, loads, polls,
verifies and swaps its own snapshot, and keeps its own query-vector cache.  Workers of an export target share
its cache directory (a snapshot is downloaded by whichever worker gets there first).  Metrics use
prometheus_client's multiprocess mode (serve/metrics.py), so ``/metrics`` sums over the workers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field

from trustindex.schemas.errors import TrustIndexError
from trustindex.serve.access import AccessSpec
from trustindex.serve.audit import WORKER_NUMBER_ENV, AuditSpec
from trustindex.serve.http_app import ServeConfig, ServeLimits, build_app
from trustindex.serve.live import SourceSpec
from trustindex.serve.metrics import MULTIPROCESS_ENV, ServeMetrics, multiprocess

SETUP_ENV = "TRUSTINDEX_SERVE_SETUP"
APP_FACTORY = f"{__name__}:worker_app"
PARENT_CHECK_SECONDS = 1.0
LISTEN_BACKLOG = 2048  # uvicorn's default
STOP_SECONDS = 30  # a worker finishing its requests after SIGTERM; then it is killed
# A worker that dies sooner than this after starting, this many times in a row, is a setup error (a port taken,
# a broken snapshot source): the supervisor stops instead of restarting it forever.
EARLY_DEATH_SECONDS, EARLY_DEATHS = 10.0, 3


@dataclass(frozen=True)
class ServeSetup:
    """Everything a worker needs, as one object that survives a round trip through JSON."""

    config: ServeConfig = field(default_factory=ServeConfig)
    source: SourceSpec = field(default_factory=SourceSpec)
    workers: int = 1

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["config"]["tokens"] = sorted(self.config.tokens)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> ServeSetup:
        d = json.loads(text)
        c = d["config"]
        config = ServeConfig(
            **{
                **c,
                "limits": ServeLimits(**c["limits"]),
                "tokens": frozenset(c["tokens"]),
                "allowed_hosts": tuple(c.get("allowed_hosts", ())),
                "access": AccessSpec.from_dict(c.get("access")),
                "audit": AuditSpec(**(c.get("audit") or {})),
            }
        )
        source = SourceSpec(**{**d["source"], "trusted_keys": tuple(d["source"].get("trusted_keys", ()))})
        return cls(config=config, source=source, workers=d["workers"])


def worker_app():
    """The app factory each worker imports (``APP_FACTORY``)."""
    return _app(ServeSetup.from_json(os.environ[SETUP_ENV]))


def _app(setup: ServeSetup):
    fmt = "trustindex serve" + (f"[{os.getpid()}]" if setup.workers > 1 else "") + ": %(message)s"
    logging.basicConfig(level=logging.INFO, format=fmt)
    metrics = ServeMetrics()
    holder = setup.source.holder()
    holder.events = metrics
    holder.poll()

    @contextlib.contextmanager
    def background():
        stop = threading.Event()
        poll = threading.Thread(
            target=holder.run, args=(setup.config.poll_seconds, stop), daemon=True, name="snapshot-poll"
        )
        poll.start()
        if setup.workers > 1:
            threading.Thread(target=_exit_with_parent, args=(os.getppid(), stop), daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            if multiprocess():  # its per-process gauge series leave /metrics with it
                from prometheus_client import multiprocess as mp

                mp.mark_process_dead(os.getpid())

    return build_app(holder, setup.config, metrics, background)


def _exit_with_parent(parent: int, stop: threading.Event) -> None:
    """A worker whose parent died without stopping it (SIGKILL) stops itself instead of serving as an orphan."""
    while not stop.wait(PARENT_CHECK_SECONDS):
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def serve(setup: ServeSetup) -> None:
    """Load the first snapshot, start polling the source, and serve until interrupted."""
    import uvicorn

    config = setup.config
    config.check()
    if setup.workers <= 1:
        uvicorn.run(_app(setup), host=config.host, port=config.port, log_level="warning")
        return
    # prometheus_client's multiprocess directory must be empty when the workers start
    metrics_dir = tempfile.mkdtemp(prefix="trustindex-metrics-")
    os.environ[MULTIPROCESS_ENV] = metrics_dir
    os.environ[SETUP_ENV] = setup.to_json()
    try:
        Supervisor(setup).run()
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def reuseport_socket(host: str, port: int, listen: bool = True) -> socket.socket:
    """A listening TCP socket on ``host:port`` that other sockets of this user may bind too (SO_REUSEPORT);
    ``listen=False``: bound only, which checks the port without ever taking a connection (the kernel spreads
    connections over the listening sockets of the group only)."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)  # IPPROTO_TCP: asyncio then sets TCP_NODELAY on its connections
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        if listen:
            sock.listen(LISTEN_BACKLOG)
    except OSError as e:
        sock.close()
        raise TrustIndexError(f"cannot listen on {host}:{port} ({e.strerror})") from None
    return sock


def _worker_main(number: int = 0) -> None:
    """One worker process: its own listening socket on the shared port, then uvicorn until SIGTERM or SIGINT.  The
    setup comes as the app factory reads it, from ``SETUP_ENV`` (a spawned process inherits the parent's
    environment); ``number``: its place among the workers (its audit log file, serve/audit.py)."""
    import uvicorn

    os.environ[WORKER_NUMBER_ENV] = str(number)
    c = ServeSetup.from_json(os.environ[SETUP_ENV]).config
    sock = reuseport_socket(c.host, c.port)
    server = uvicorn.Server(uvicorn.Config(APP_FACTORY, factory=True, log_level="warning", timeout_graceful_shutdown=5))
    server.run(sockets=[sock])


class Supervisor:
    """``setup.workers`` worker processes (``_worker_main``), each restarted when it dies, all stopped together."""

    def __init__(self, setup: ServeSetup):
        import multiprocessing

        self.setup = setup
        self.ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks copied by fork
        self.stop = threading.Event()
        self.log = logging.getLogger("trustindex.serve")

    def _start(self, number: int):
        p = self.ctx.Process(target=_worker_main, args=(number,), name="trustindex-serve-worker")
        p.start()
        return p, time.monotonic()

    def run(self) -> None:
        logging.basicConfig(level=logging.INFO, format="trustindex serve: %(message)s")
        # the port checked once here, so a taken port is one clear error rather than N dying workers; bound, not
        # listening: a listening check could take (and reset) a connection meant for a worker that is already up
        reuseport_socket(self.setup.config.host, self.setup.config.port, listen=False).close()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop.set())
        workers = [self._start(n) for n in range(self.setup.workers)]
        early = 0
        try:
            while not self.stop.wait(0.5):
                for n, (p, started) in enumerate(workers):
                    if p.is_alive():
                        continue
                    early = early + 1 if time.monotonic() - started < EARLY_DEATH_SECONDS else 0
                    if early >= EARLY_DEATHS:
                        raise TrustIndexError(f"serve: workers keep dying at start-up (last exit code {p.exitcode})")
                    self.log.warning("worker %s exited with code %s; starting another", p.pid, p.exitcode)
                    workers[n] = self._start(n)
        finally:
            for p, _ in workers:
                if p.is_alive():
                    p.terminate()  # SIGTERM: uvicorn finishes the requests it has, then exits
            deadline = time.monotonic() + STOP_SECONDS
            for p, _ in workers:
                p.join(max(0.0, deadline - time.monotonic()))
                if p.is_alive():
                    p.kill()
                    p.join()
