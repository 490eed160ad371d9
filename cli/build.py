"""Configuration loading and flow invocation for the build commands."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

from trustindex.schemas.config import BuildConfig, load_build_config  # noqa: F401  (re-exported for the command line)
from trustindex.schemas.refresh_run import RefreshRequest


def run_refresh(cfg: BuildConfig, request: RefreshRequest, dask_sources: bool = False) -> dict:
    """The refresh flow run in this process; the result's JSON, what the command prints (schemas/refresh_run.py).

    ``request.dask_address``: the texts to embed go in content-hash shards to that Dask cluster
    (flows/embed_cluster.py); ``dask_sources``: the per-source tasks run there too (its workers then need the data
    directory shared)."""
    server = ephemeral_server_started_early()  # booting in its own process while the build's modules import
    from trustindex.flows.refresh import refresh_flow, with_task_runner

    Path(request.data_dir).mkdir(parents=True, exist_ok=True)
    server.join()
    dask_address = request.dask_address
    with in_process_settings(api_for_workers=dask_address is not None):
        return with_task_runner(refresh_flow, dask_address if dask_sources else None)(cfg, request).to_json()


@contextmanager
def in_process_settings(api_for_workers: bool = False):
    """Prefect settings for a flow run from the command line with no Prefect API configured.

    Such a run talks to an ephemeral server that lives only as long as this process, so
    nothing could ever act on a flow-run heartbeat; yet Prefect 3.9's heartbeat thread
    sleeps in whole seconds and is joined when the flow ends, which added 0.5-1 s to every
    run (0.78 s of a 1.1 s no-change refresh, bench/bench_refresh.py).  Heartbeats stay on
    wherever an API is configured (workers, deployments: deploy/).

    ``api_for_workers``: tasks will run on Dask workers, which report to the API their context names.  Without an
    API configured that context names none, and each worker process would start an ephemeral server of its own
    (~17 s, its own database): the ephemeral server's address (loopback: workers on this machine) is named instead.
    Workers on other machines need a Prefect server they can reach, set as PREFECT_API_URL (docs/architecture.md).
    """
    import prefect.context
    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY

    context = prefect.context.get_settings_context()
    if context.settings.api.url:
        yield
        return
    updates: dict = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if api_for_workers:
        from prefect.server.api.server import SubprocessASGIServer

        server = SubprocessASGIServer()  # the ephemeral server this process started (one instance per port)
        if server.running and server.port:
            updates[PREFECT_API_URL] = server.api_url
    # copy_with_update validates a whole Settings object (~50 ms): made once per process and settings
    key = (id(context.settings), updates.get(PREFECT_API_URL))
    if _NO_HEARTBEAT.get("key") != key:
        _NO_HEARTBEAT.update(key=key, settings=context.settings.copy_with_update(updates=updates))
    with prefect.context.SettingsContext(profile=context.profile, settings=_NO_HEARTBEAT["settings"]):
        yield


_NO_HEARTBEAT: dict = {}


class _Started:
    def join(self) -> None:
        pass


class _Starting(_Started):
    """Prefect's ephemeral server starting on a thread; ``join`` waits for it (or raises what stopped it)."""

    def __init__(self, server):
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._start, args=(server,), name="prefect-server-start", daemon=True)
        self.thread.start()

    def _start(self, server) -> None:
        try:
            server.start()
        except BaseException as exc:  # re-raised in the caller's thread by join
            self.error = exc

    def join(self) -> None:
        self.thread.join()
        if self.error is not None:
            raise self.error


def ephemeral_server_started_early() -> _Started:
    """Start the ephemeral Prefect server now, where a run would start one (no API configured), not when the
    flow first calls it: its process boots (the largest fixed cost, docs/benchmarks.md) while this one imports the
    build's modules.  ``join`` before the flow runs: Prefect's start() returns at once, unhealthy, while another
    thread is still waiting for the server.  With an API configured (a worker, a deployment, the tests'
    harness) nothing is started."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return _Started()
    return _Starting(_logged_server())


SERVER_LOG = "ephemeral-server.log"


def _logged_server():
    """Prefect's ephemeral server with its output in ``$PREFECT_HOME/ephemeral-server.log`` (the last run's), not
    on the terminal: stopped at exit while its services still flush, it printed ~190 lines of tracebacks
    (CancelledError in the SQLAlchemy pool, "Error flushing 1 events") after a 50-source refresh (issue 29).

    The command line is Prefect 3's own (``SubprocessASGIServer._run_uvicorn_command``, pinned in
    requirements.lock) with stdout and stderr redirected; Prefect's clients find this instance because the
    server class keeps one instance per port, this one under Prefect's default key."""
    import os
    import subprocess
    import sys

    import prefect
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_HOME, get_current_settings

    from trustindex.cli.prefect_db import seed_home

    class LoggedServer(SubprocessASGIServer):
        def _run_uvicorn_command(self) -> subprocess.Popen:
            home = Path(PREFECT_HOME.value())
            home.mkdir(parents=True, exist_ok=True)
            seeded = seed_home(home)  # a fresh home: the migrated empty database, not every migration again
            with open(home / SERVER_LOG, "wb") as log:  # the child keeps its own copy of the descriptor
                if seeded:
                    log.write(b"trustindex: prefect.db copied from the user's cache of migrated databases\n")
                    log.flush()
                return subprocess.Popen(
                    [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory"]
                    + ["prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port)]
                    + ["--log-level", "error", "--lifespan", "on"],
                    env={
                        **os.environ,
                        "PREFECT_UI_ENABLED": "0",
                        "PREFECT__SERVER_EPHEMERAL": "1",
                        "PREFECT__SERVER_FINAL": "1",
                        **get_current_settings().to_environment_variables(exclude_unset=True),
                    },
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )

    return LoggedServer()


def describe_refresh(result: dict) -> str:
    lines = [f"snapshot {result['snapshot_id']} {'published' if result['published'] else 'built'}"]
    for s in result["sources"]:
        lines.append(
            f"  {s['source']}: {s['status']}"
            + (f" at {s['commit'][:12]}" if s["commit"] else "")
            + (f" — {s['error']}" if s["error"] else "")
            + (f" ({s['note']})" if s.get("note") else "")
        )
    rc = result["row_counts"]
    e = result["embeddings"]
    if result.get("reused_snapshot"):
        lines.append(
            f"  {rc.get('documents', 0)} documents, {rc.get('chunks', 0)} chunks; nothing changed: the "
            f"snapshot already holds this build"
        )
    else:
        lines.append(
            f"  {rc.get('documents', 0)} documents, {rc.get('chunks', 0)} chunks; embeddings: "
            f"{e['encoded']} encoded, {e['cache_hits']} from cache ({e['distinct']} distinct)"
        )
    if result.get("compile"):
        c = result["compile"]
        lines.append(
            f"  compile checks ({', '.join(c['compilers']) or 'no usable compiler'}): {c['compiled']} compiled "
            f"({c['seconds']:.2f} s), {c['cached']} from the cache"
        )
        lines += [f"    {note}" for note in c["notes"]]
    for g in result.get("forced_past_gate") or []:
        lines.append(f"  published despite the safety gate (--force): {g}")
    if result.get("stages"):
        from trustindex.runtime.progress import timing_lines

        whole = f"{result['command_seconds']:.2f} s in the command, " if "command_seconds" in result else ""
        lines.append(f"  time: {whole}{result['seconds']:.2f} s in the flow")
        lines += [f"    {line}" for line in timing_lines(result["stages"])]
    return "\n".join(lines)
