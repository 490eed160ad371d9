"""deploy/prefect.yaml against a real Prefect server, work pool and process worker.

Starts ``prefect server start`` on a free loopback port, creates the process work pool, registers
every deployment with ``prefect deploy --all``, creates a run of the nightly refresh deployment on the
demo corpus and lets a ``prefect worker start`` (long-running, as in compose) execute it, then checks
that (1) a verified snapshot is published and (2) the refresh's Completed event fires the export
deployment's trigger, whose run copies the live snapshot to the serving tier.  Everything goes
through the CLI and the REST API, as an operator would (DESIGN.md, "Stack": server healthy in
6–14 s).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

import pytest

from trustindex.schemas.snapshot import read_manifest, resolve_current, verify_snapshot

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the interpreter running the tests is the project's virtualenv
PREFECT = str(BIN / "prefect") if (BIN / "prefect").exists() else "prefect"
POOL = "trustindex-process"
DEPLOYMENTS = {
    "nightly-refresh": "trustindex-refresh-files",
    "backfill": "trustindex-backfill",
    "export-live": "trustindex-export",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(url: str, method: str, path: str, body: dict | None = None):
    req = urllib.request.Request(
        url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def tail(path: Path, n: int = 4000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


@contextmanager
def prefect_server(home: Path):
    """A real Prefect API server in its own process group; yields (api_url, env for clients)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        # No runs of the nightly cron while the test runs: only the runs it creates exist.
        "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),  # this checkout's code, whichever checkout the interpreter has installed
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    log = home / "server.log"
    home.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if api(url, "GET", "/health") is True:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"prefect server did not become healthy:\n{tail(log)}")
            time.sleep(0.5)
        yield url, env
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group, started above
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def cli(env: dict, log: Path, *args: str, timeout: float = 180) -> str:
    t0 = time.monotonic()
    r = subprocess.run([PREFECT, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    with open(log, "a") as f:
        f.write(f"$ prefect {' '.join(args)}  ({time.monotonic() - t0:.1f} s)\n{r.stdout}\n{r.stderr}\n")
    assert r.returncode == 0, f"prefect {' '.join(args)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


@contextmanager
def worker(env: dict, log: Path):
    """A long-running process worker (as in compose), polling every second; stopped on exit."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [PREFECT, "worker", "start", "--pool", POOL],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**env, "PREFECT_WORKER_QUERY_SECONDS": "1"},
        )
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the worker's own process group, started above
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for(what, timeout: float, proc: subprocess.Popen, log: Path):
    """Poll ``what()`` until it returns something truthy; fail with the worker's log otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if got := what():
            return got
        if proc.poll() is not None:
            pytest.fail(f"the worker exited ({proc.returncode}):\n{tail(log)}")
        time.sleep(1)
    pytest.fail(f"timed out after {timeout} s:\n{tail(log)}")


def finished(url: str, run_id: str):
    state = api(url, "GET", f"/flow_runs/{run_id}")["state"]
    return state if state and state["type"] in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"} else None


def test_nightly_refresh_deployment_publishes_and_triggers_export(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from build_demo import build_demo

    data, tier, log, wlog = tmp_path / "data", tmp_path / "serving", tmp_path / "cli.log", tmp_path / "worker.log"
    with ThreadPoolExecutor(1) as pool, prefect_server(tmp_path / "prefect-home") as (url, env):
        demo = pool.submit(build_demo, tmp_path / "demo")  # builds while the CLI registers the deployments
        cli(env, log, "work-pool", "create", POOL, "--type", "process", "--overwrite")
        cli(env, log, "deploy", "--all", "--no-prompt", "--prefect-file", "deploy/prefect.yaml")

        deps = {d["name"]: d for d in api(url, "POST", "/deployments/filter", {})}
        assert set(deps) == set(DEPLOYMENTS)
        flows = {f["id"]: f["name"] for f in api(url, "POST", "/flows/filter", {})}
        assert {name: flows[d["flow_id"]] for name, d in deps.items()} == DEPLOYMENTS
        assert all(d["work_pool_name"] == POOL for d in deps.values())
        assert [s["schedule"]["cron"] for s in deps["nightly-refresh"]["schedules"]] == ["0 3 * * *"]
        backfill_params = deps["backfill"]["parameter_openapi_schema"]["properties"]
        assert set(backfill_params) == {"files", "request"}  # ConfigFiles and BackfillRequest
        assert deps["backfill"]["parameters"]["request"]["publish"] is False
        automations = api(url, "POST", "/automations/filter", {})
        assert any(a["actions"][0].get("deployment_id") == deps["export-live"]["id"] for a in automations)

        # 1. The nightly refresh, run now on the demo corpus (created first: a worker takes existing runs).
        run = api(
            url,
            "POST",
            f"/deployments/{deps['nightly-refresh']['id']}/create_flow_run",
            {"parameters": {"files": {"sources": str(demo.result())}, "request": {"data_dir": str(data)}}},
        )
        with worker({**env, "TRUSTINDEX_EXPORT_TO": str(tier)}, wlog) as proc:
            state = wait_for(lambda: finished(url, run["id"]), 420, proc, wlog)
            assert state["type"] == "COMPLETED", f"{state}\n{tail(wlog)}"
            live = resolve_current(data)
            assert verify_snapshot(live).snapshot_id == live.name
            assert read_manifest(live).row_counts.get("chunks", 0) > 0

            # 2. Its Completed event fires export-live's trigger with the refresh run's data_dir.
            exports = wait_for(
                lambda: api(
                    url, "POST", "/flow_runs/filter", {"deployments": {"id": {"any_": [deps["export-live"]["id"]]}}}
                ),
                60,
                proc,
                wlog,
            )
            assert len(exports) == 1 and exports[0]["parameters"]["data_dir"] == str(data)
            state = wait_for(lambda: finished(url, exports[0]["id"]), 180, proc, wlog)
            assert state["type"] == "COMPLETED", f"{state}\n{tail(wlog)}"
        assert (tier / "CURRENT").read_text().strip() == live.name
        assert verify_snapshot(tier / "snapshots" / live.name).snapshot_id == live.name


def test_compose_matches_the_deployments():
    """The compose file cannot run here (no registry): check it agrees with prefect.yaml and the Dockerfile."""
    import yaml

    project = yaml.safe_load((ROOT / "deploy" / "prefect.yaml").read_text())
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    workdir = [ln.split()[1] for ln in dockerfile.splitlines() if ln.startswith("WORKDIR")][-1]
    services = compose["services"]
    worker, deploy = services["worker"], services["deploy"]
    entry = {d["name"]: d for d in project["deployments"]}
    assert {d["work_pool"]["name"] for d in entry.values()} == {POOL}
    for d in entry.values():  # every entrypoint exists: a module of the package, or a file in the working directory
        target, _, name = d["entrypoint"].partition(":")
        if target.endswith(".py"):
            assert (ROOT / target).is_file(), d["entrypoint"]
        else:
            assert target.startswith("trustindex.") and callable(getattr(import_module(target), name)), d["entrypoint"]
    assert POOL in worker["command"] and "--prefect-file deploy/prefect.yaml" in " ".join(deploy["command"])
    assert deploy["depends_on"]["prefect-server"]["condition"] == "service_healthy"
    assert worker["depends_on"]["deploy"]["condition"] == "service_completed_successfully"
    # "source:/container/path[:ro]"; a source like ${VAR:-../config} has colons of its own
    mounts = dict(reversed(re.fullmatch(r"(.+):(/[^:]*)(?::ro|:rw)?", m).groups()) for m in worker["volumes"])
    for name in ("nightly-refresh", "backfill"):  # relative parameters land on the mounted volumes
        params = entry[name]["parameters"]
        assert f"{workdir}/{params['request']['data_dir']}" in mounts
        assert f"{workdir}/{Path(params['files']['sources']).parent}" in mounts
    assert mounts[f"{workdir}/data"] in compose["volumes"]
    env = worker["environment"]
    assert env["PREFECT_API_URL"].startswith("http://prefect-server:")
    assert env["TRUSTINDEX_EXPORT_TO"].endswith(":-/app/serving}") and "/app/serving" in mounts
    assert all(env[k] is None for k in env if k.startswith("AWS_"))  # credentials pass through, never stored
    assert services["prefect-server"]["image"].endswith(":3.9.1-python3.11")
    assert f"prefect-version: {project['prefect-version']}" in (ROOT / "deploy" / "prefect.yaml").read_text()


def test_serving_replica_pulls_what_the_worker_exports():
    """The serve service reads the volume export-live writes, and its image pins every base and [serve] requirement
    from the lock (a dependency added to pyproject.toml and forgotten in the image would fail here, not in prod)."""
    import tomllib

    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    serve, worker = compose["services"]["serve"], compose["services"]["worker"]
    dockerfile = (ROOT / "deploy" / serve["build"]["dockerfile"].removeprefix("deploy/")).read_text()
    volume = next(v for v in worker["volumes"] if v.endswith(":/app/serving"))
    assert f"{volume.split(':')[0]}:/app/serving:ro" in serve["volumes"]
    assert '"--from", "/app/serving"' in dockerfile and "--token-file" in dockerfile  # 0.0.0.0 needs tokens
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["serve"]]
    pinned = re.search(r"grep -E -i '\^\(([^)]*)\)==", dockerfile).group(1).split("|")
    lock = (ROOT / "requirements.lock").read_text().lower()
    for req in wanted:
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower()
        assert name in pinned, f"{name} is a serving requirement the image does not take from the lock"
        assert f"\n{name}==" in lock, f"{name} is not pinned in requirements.lock"
    for stage in ("schemas", "query", "serve", "cli"):
        assert f"COPY {stage} ./{stage}" in dockerfile


def test_export_live_without_a_target_is_one_clear_line(tmp_path, monkeypatch):
    import importlib.util

    from trustindex.warehouse.export import ExportError

    spec = importlib.util.spec_from_file_location("export_flow", ROOT / "deploy" / "export_flow.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.delenv(mod.EXPORT_TO_ENV, raising=False)
    with pytest.raises(
        ExportError, match=rf"no target; set the deployment's export_to parameter or {mod.EXPORT_TO_ENV}"
    ):
        mod.export_live.fn(data_dir=str(tmp_path))
