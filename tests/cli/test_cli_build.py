"""The build commands end to end as a user runs them: `trustindex refresh` and `backfill` in their own processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_API_URL", None)  # its own ephemeral server, as on an operator's machine
    return subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )


def test_refresh_then_backfill_print_what_they_built(demo, tmp_path):
    data = tmp_path / "data"
    r = cli("refresh", "--sources", str(demo), "--data", str(data))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("snapshot ") and lines[0].endswith(" published")
    sid = lines[0].split()[1]
    assert (data / "CURRENT").read_text().strip() == sid
    assert any("chunks; embeddings:" in line and "encoded" in line for line in lines)
    sources = [s["source"] for s in json.loads((data / "last_run.json").read_text())["sources"]]
    assert_timed(data, r, sources, build=True)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    b = cli("backfill", "--sources", str(demo), "--data", str(data), "--as-of", today)
    assert b.returncode == 0, b.stderr[-3000:]
    # the sources as they stand today are what was just built: the same snapshot, not published again
    assert b.stdout.startswith(f"snapshot {sid} built")
    assert "nothing changed: the snapshot already holds this build" in b.stdout
    assert_timed(data, b, sources, build=False)


def assert_timed(data: Path, run: subprocess.CompletedProcess, sources: list[str], build: bool) -> None:
    """Every stage that ran is in last_run.json with its time (and rate where it counts items), a start and an
    end line on standard error (a pipe: no terminal), and in the summary that ends standard output."""
    record = json.loads((data / "last_run.json").read_text())
    per_source = [(name, src) for src in sources for name in ("fetch", "ingest", "extract")]
    expected = per_source if build else [(n, s) for n, s in per_source if n != "extract"]  # tables reused
    # a build embeds each source's texts while it extracts (encoder/pipeline.py): its model and embed stages
    expected += [(name, src) for src in sources for name in ("model", "embed")] if build else []
    expected += [(n, None) for n in ("model", "tables", "copies", "embed", "index", "hash")] if build else []
    # the run's own stages (issue 41): every source task, then the texts still queued when the last one ended
    expected += [("sources", None), ("drain", None), ("publish", None)]
    stages = record["stages"]
    assert sorted((r["stage"], r["source"] or "") for r in stages) == sorted((n, s or "") for n, s in expected)
    assert all(r["seconds"] >= 0 for r in stages)
    assert all(r["seconds"] <= record["seconds"] for r in stages)  # sources run side by side: no sum
    for r in stages:
        if r["stage"] in ("extract", "tables", "embed", "index") and r["count"]:
            assert r["per_second"] > 0, r
    if build:
        embed = next(r for r in stages if r["stage"] == "embed" and not r["source"])
        # the build finds the sources' texts in the cache; they are counted once, in the sources' records (issue 41)
        found = embed["count"] + embed["cache_hits"] + embed["counted_by_sources"]
        assert embed["unit"] == "texts" and found == embed["distinct"] > 0
        assert next(r for r in stages if r["stage"] == "hash")["megabytes"] > 0
    for r in stages:
        label = f"{r['stage']} {r['source']}" if r["source"] else r["stage"]
        assert f"trustindex: {label}: started" in run.stderr and f"trustindex: {label}: done, " in run.stderr
    out = run.stdout.strip().splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("  time: ") and line.endswith(" s in the flow"))
    assert " s in the command, " in out[at]  # Prefect's start-up is the difference
    assert [line.strip().split(":")[0] for line in out[at + 1 : at + 1 + len(stages)]] == [
        f"{r['stage']} {r['source']}" if r["source"] else r["stage"] for r in stages
    ]


def test_command_line_runs_send_no_heartbeat_without_an_api():
    import prefect.context
    from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings

    from trustindex.cli.build import in_process_settings

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        assert get_current_settings().flows.heartbeat_frequency is not None
        with in_process_settings():
            assert get_current_settings().flows.heartbeat_frequency is None
        assert get_current_settings().flows.heartbeat_frequency is not None
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        before = prefect.context.get_settings_context().settings
        with in_process_settings():  # a configured API (a worker, a deployment): heartbeats stay on
            assert get_current_settings().flows.heartbeat_frequency == before.flows.heartbeat_frequency


def test_the_ephemeral_servers_output_goes_to_its_log_not_the_terminal(demo, tmp_path):
    """Issue 29: the server Prefect starts for a command-line run printed its shutdown tracebacks on the terminal.
    Its debug logging is turned on here so that it has plenty to say; all of it lands in its log file."""
    home = tmp_path / "prefect-home"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_HOME": str(home), "PREFECT_LOGGING_SERVER_LEVEL": "DEBUG"}
    env.pop("PREFECT_API_URL", None)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # issue 30: the fresh home gets the migrated database
    r = subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(demo), "--data", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert [line for line in r.stderr.splitlines() if not line.startswith("trustindex: ")] == []
    log = (home / "ephemeral-server.log").read_text()
    assert "uvicorn.error - Started server process" in log and "DEBUG" in log
    assert log.startswith("trustindex: prefect.db copied from the user's cache")
    assert list((tmp_path / "cache" / "trustindex" / "prefect-db").glob("*/prefect.db"))
