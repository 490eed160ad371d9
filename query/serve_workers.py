"""Running ``trustindex serve``: one process, or ``--workers N`` processes sharing the port.

A search is mostly Python under one GIL (the encoder and the numpy products release it, the ranking around them
does not), so one process uses about one core however many requests it runs at once.  ``--workers N`` starts N
uvicorn worker processes on the one listening socket (uvicorn's own supervisor: it restarts a worker that dies
and stops them all on SIGTERM or SIGINT).  Each worker is a full stateless replica: it builds its own
``SnapshotHolder`` from the ``ServeSetup`` the parent serialises into ``TRUSTINDEX_SERVE_SETUP``, loads, polls,
verifies and swaps its own snapshot, and keeps its own query-vector cache.  Workers of an export target share
its cache directory (a snapshot is downloaded by whichever worker gets there first).  Metrics use
prometheus_client's multiprocess mode (query/http_metrics.py), so ``/metrics`` sums over the workers.
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
from dataclasses import dataclass, field

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from trustindex.query.http_metrics import MULTIPROCESS_ENV, ServeMetrics, multiprocess
from trustindex.query.http_server import ServeConfig, ServeLimits, build_app
from trustindex.query.serving import SourceSpec

SETUP_ENV = "TRUSTINDEX_SERVE_SETUP"
APP_FACTORY = f"{__name__}:worker_app"
HTTP_PROTOCOL = f"{__name__}:NoDelayHTTP"
# uvicorn's supervisor pings each worker; one busy with searches on a loaded machine may take seconds to answer,
# and one that does not answer in time is killed
HEALTHCHECK_SECONDS = 60
PARENT_CHECK_SECONDS = 1.0


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
        config = ServeConfig(**{**c, "limits": ServeLimits(**c["limits"]), "tokens": frozenset(c["tokens"])})
        return cls(config=config, source=SourceSpec(**d["source"]), workers=d["workers"])


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


class NoDelayHTTP(AutoHTTPProtocol):  # type: ignore[valid-type,misc]
    """uvicorn's HTTP protocol with Nagle's algorithm off on every connection.  With ``workers`` uvicorn binds the
    shared socket itself (``socket.socket(AF_INET)``: protocol number 0), and asyncio sets TCP_NODELAY only on
    connections of sockets that say IPPROTO_TCP; without it a small response waits for the client's delayed ACK:
    measured 44 ms for ``/healthz`` over keep-alive with 2 workers, 1.1 ms with 1 (1.6 ms with this)."""

    def connection_made(self, transport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


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
        uvicorn.run(
            APP_FACTORY,
            factory=True,
            workers=setup.workers,
            host=config.host,
            port=config.port,
            log_level="warning",
            timeout_worker_healthcheck=HEALTHCHECK_SECONDS,
            http=HTTP_PROTOCOL,
        )
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
