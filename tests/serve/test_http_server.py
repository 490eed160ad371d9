"""``trustindex serve`` over real HTTP on loopback: uvicorn in a thread, httpx and the MCP SDK's streamable HTTP
client as clients; snapshots pulled from a directory export target and from a moto S3 server, a corrupted
export never served.  The swap under load (``trustindex export``, ``serve`` as a process): test_serving_swap.py."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import anyio
import httpx
import jsonschema
import pytest

from tests.kits.servekit import Running
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.response import response_schema
from trustindex.schemas.snapshot import CURRENT, SNAPSHOTS_DIR, resolve_current
from trustindex.serve.http_app import ServeConfig, ServeLimits
from trustindex.serve.live import DataDirSource, ExportSource, SnapshotHolder
from trustindex.serve.metrics import ServeMetrics

LIMITS = ServeLimits(max_body_bytes=4096, max_k=20, max_batch=3, max_concurrency=8)


@pytest.fixture(scope="module")
def server(refreshed):
    with Running(SnapshotHolder(DataDirSource(refreshed["data"])), ServeConfig(limits=LIMITS)) as running:
        yield running


def test_search_and_reads_answer_the_contract(server, refreshed):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/v1/search", json={"query": "How do I install the Compact compiler?", "k": 3})
        assert r.status_code == 200, r.text
        body = r.json()
        jsonschema.validate(body, response_schema())
        assert body["snapshot_id"] == resolve_current(refreshed["data"]).name and body["hits"]
        chunk = body["hits"][0]["chunk_id"]
        p = c.get(f"/v1/passages/{chunk}", params={"neighbours": 1}).json()
        assert [x["chunk_id"] for x in p["passages"] if x["role"] == "target"] == [chunk]
        assert c.get("/v1/sources").json()["sources"]
        assert c.get("/v1/versions").json()["components"]
        snap = c.get("/v1/snapshot").json()
        assert snap["snapshot_id"] == body["snapshot_id"] and snap["policy_id"] == body["policy_id"]
        assert c.get("/healthz").status_code == 200 and c.get("/readyz").json()["snapshot_id"] == body["snapshot_id"]
        batch = c.post("/v1/search:batch", json={"requests": [{"query": "counter"}, {"query": ""}]}).json()
        assert batch["responses"][0]["snapshot_id"] == body["snapshot_id"] and batch["responses"][1]["line"] == 2
        metrics = c.get("/metrics").text
        assert 'trustindex_http_requests_total{route="/v1/search",status="200"}' in metrics
        assert 'trustindex_http_request_seconds_bucket{le="0.005",route="/v1/search"}' in metrics
        assert f'trustindex_snapshot_info{{snapshot_id="{body["snapshot_id"]}"}} 1.0' in metrics
        assert "trustindex_snapshot_swaps_total 1.0" in metrics


def test_v1_search_answers_what_the_python_api_answers(server, index):
    """The served index (warmed, keeping query vectors) and a plain ``Index.open`` give the same JSON, asked twice
    (the second time from the server's query-vector cache), targets, strict, ``also`` and duplicates included."""
    from tests.kits.servekit import QUERIES

    with httpx.Client(base_url=server.url, timeout=60) as c:
        for _ in range(2):
            for q, kw in QUERIES:
                if kw.get("k", 10) > LIMITS.max_k:
                    continue
                r = c.post("/v1/search", json={"query": q, **kw})
                assert r.status_code == 200, r.text
                assert r.json() == json.loads(json.dumps(index.search(q, **kw))), q
        lookups = [line for line in c.get("/metrics").text.splitlines() if "query_vector_lookups_total{" in line]
    hits = next(float(line.rsplit(" ", 1)[1]) for line in lookups if 'result="hit"' in line)
    assert hits >= len(QUERIES)  # the second round, at least, came from the cache


def test_compact_format_is_bounded_text_with_the_same_hits(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        q = {"query": "How do I install the Compact compiler?", "k": 3}
        full = c.post("/v1/search", json=q).json()
        r = c.post("/v1/search", json={**q, "format": "compact"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        assert full["hits"] and all(h["provenance"]["path"] in r.text for h in full["hits"])
        tight = c.post("/v1/search", json={**q, "format": "compact", "max_tokens": 60}).text
        assert "[trimmed:" in tight and len(tight) < len(r.text)
        bad = c.post("/v1/search", json={**q, "format": "yaml"})
        assert bad.status_code == 400 and "format must be" in bad.json()["error"]


def test_openapi_describes_the_response_json_schema(server):
    doc = httpx.get(f"{server.url}/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["schemas"]["SearchResponse"] == response_schema()
    ok = doc["paths"]["/v1/search"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert doc["paths"]["/v1/search"]["post"]["responses"]["200"]["content"]["text/plain"]
    assert ok == {"$ref": "#/components/schemas/SearchResponse"}
    assert {"/v1/search", "/v1/search:batch", "/v1/passages/{chunk_id}", "/metrics"} <= set(doc["paths"])


@pytest.mark.parametrize(
    "method, path, payload, status, words",
    [
        ("post", "/v1/search", b"{not json", 400, "malformed JSON"),
        ("post", "/v1/search", {"query": ""}, 400, "query is empty"),
        ("post", "/v1/search", {"query": "x" * 10_001}, 413, "limit"),
        ("post", "/v1/search", {"query": "counter", "k": 0}, 400, "k must be"),
        ("post", "/v1/search", {"query": "counter", "k": 21}, 400, "from 1 to 20"),
        ("post", "/v1/search", {"query": "counter", "targets": {"no-such": "1.0"}}, 400, "no close name among"),
        ("post", "/v1/search", {"query": "counter", "targets": ["nonsense"]}, 400, "COMPONENT=VERSION"),
        ("post", "/v1/search", {"query": "counter", "bogus": 1}, 400, "unknown key"),
        ("post", "/v1/search", ["counter"], 400, '"query"'),
        ("post", "/v1/search:batch", {"requests": [{"query": "a"}] * 4}, 400, "limit is 3"),
        ("get", "/v1/passages/no-such-chunk", None, 404, "not in snapshot"),
        ("get", "/v1/passages/..%2F..%2Fetc%2Fpasswd", None, 404, None),  # no route: nothing is read
        ("get", "/v1/passages/x?neighbours=999", None, 400, "neighbours"),
    ],
)
def test_bad_requests_get_4xx_with_one_line(server, method, path, payload, status, words):
    kwargs = {"content": payload} if isinstance(payload, bytes) else {"json": payload} if payload is not None else {}
    if isinstance(payload, bytes):
        kwargs["headers"] = {"content-type": "application/json"}
    r = httpx.request(method.upper(), f"{server.url}{path}", timeout=30, **kwargs)
    assert r.status_code == status, r.text
    if words is None:
        return
    assert words in r.json()["error"] and "\n" not in r.json()["error"]


def test_mcp_tools_over_streamable_http(server):
    from mcp import Client

    async def talk():
        async with Client(f"{server.url}/mcp") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("search", {"query": "How do I install the Compact compiler?", "k": 2})
            bad = await client.call_tool("search", {"query": ""})
            return tools, found, bad

    tools, found, bad = anyio.run(talk)
    assert {"search", "search_batch", "get_passage", "list_sources", "list_versions"} <= tools
    assert not found.is_error and found.structured_content["hits"]
    assert bad.is_error and "empty" in bad.content[0].text


def test_mcp_over_http_keeps_the_limits_of_v1_search(server):
    """k, batch length and body size: /mcp answers what /v1/search answers (LIMITS: k ≤ 20, 3 a batch, 4 KiB)."""
    from mcp import Client

    q = "counter"

    async def talk():
        async with Client(f"{server.url}/mcp") as client:
            return {
                "k 20": await client.call_tool("search", {"query": q, "k": 20}),
                "k 21": await client.call_tool("search", {"query": q, "k": 21}),
                "k 0": await client.call_tool("search", {"query": q, "k": 0}),
                "batch of 4": await client.call_tool("search_batch", {"requests": [{"query": q}] * 4}),
                "batch k 21": await client.call_tool(
                    "search_batch", {"requests": [{"query": q}, {"query": q, "k": 21}]}
                ),
                "batch default k 21": await client.call_tool("search_batch", {"requests": [{"query": q}], "k": 21}),
            }

    r = anyio.run(talk)
    assert not r["k 20"].is_error
    http = httpx.post(f"{server.url}/v1/search", json={"query": q, "k": 21}, timeout=30).json()["error"]
    assert http == "k must be an integer from 1 to 20, got 21"
    assert r["k 21"].is_error and http in r["k 21"].content[0].text
    assert r["k 0"].is_error and "from 1 to 20, got 0" in r["k 0"].content[0].text
    assert r["batch of 4"].is_error and "the limit is 3" in r["batch of 4"].content[0].text
    first, second = r["batch k 21"].structured_content["responses"]
    assert first["hits"] and second == {"line": 2, "error": "k must be an integer from 1 to 20, got 21"}
    assert r["batch default k 21"].structured_content["responses"][0]["error"].startswith("k must be")
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "x" * 5000}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    over = httpx.post(f"{server.url}/mcp", json=big, headers=headers, timeout=30)
    assert over.status_code == 413 and "limit of 4096 bytes" in over.json()["error"]


def test_bearer_token_required_when_configured_and_off_loopback(refreshed):
    with pytest.raises(TrustIndexError, match="bearer token"):
        ServeConfig(host="0.0.0.0").check()
    config = ServeConfig(limits=LIMITS, tokens=frozenset({"s3cret"}))
    with Running(SnapshotHolder(DataDirSource(refreshed["data"])), config) as running:
        assert httpx.get(f"{running.url}/v1/sources").status_code == 401
        assert httpx.get(f"{running.url}/v1/sources", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(f"{running.url}/v1/sources", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert httpx.get(f"{running.url}/healthz").status_code == 200


def _export_dir(refreshed, target: Path, corrupt: bool = False) -> str:
    """An export target's layout (<target>/snapshots/<id>, <target>/CURRENT) copied from the built data."""
    live = resolve_current(refreshed["data"])
    dest = target / SNAPSHOTS_DIR / live.name
    shutil.copytree(live, dest)
    if corrupt:
        victim = dest / "chunks.parquet"
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
    (target / CURRENT).write_text(live.name + "\n")
    return live.name


def test_pull_from_a_directory_target_verifies_before_serving(refreshed, tmp_path):
    target, cache = tmp_path / "target", tmp_path / "cache"
    sid = _export_dir(refreshed, target, corrupt=True)
    metrics = ServeMetrics()
    holder = SnapshotHolder(ExportSource(str(target), cache), events=metrics)
    assert holder.poll() is False and holder.served is None
    assert "sha256" in (holder.warning or "") and not (cache / SNAPSHOTS_DIR / sid).exists()
    assert 'trustindex_snapshot_load_failures_total{stage="download"} 1.0' in metrics.render().decode()
    shutil.rmtree(target)
    _export_dir(refreshed, target)
    holder._failed = None  # the retry pause is a minute; a new export is tried at once in the next test
    assert holder.poll() is True and holder.served.index.snapshot_id == sid
    assert (cache / SNAPSHOTS_DIR / sid / "manifest.json").is_file()
    assert "trustindex_snapshot_swaps_total 1.0" in metrics.render().decode()


def test_pull_from_s3_keeps_serving_through_a_corrupted_export(refreshed, tmp_path, monkeypatch):
    pafs = pytest.importorskip("pyarrow.fs")
    from moto.server import ThreadedMotoServer

    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    try:
        host, port = moto.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        fs = pafs.S3FileSystem(endpoint_override=f"{host}:{port}", scheme="http", allow_bucket_creation=True)
        fs.create_dir("exports")
        local = tmp_path / "export"
        sid = _export_dir(refreshed, local, corrupt=True)  # first export: a flipped byte in chunks.parquet
        pafs.copy_files(str(local), "exports/ti", destination_filesystem=fs)
        holder = SnapshotHolder(ExportSource("s3://exports/ti", tmp_path / "cache", endpoint=endpoint))
        with Running(holder, ServeConfig(limits=LIMITS)) as running:
            assert httpx.get(f"{running.url}/readyz").status_code == 503
            assert httpx.post(f"{running.url}/v1/search", json={"query": "counter"}).status_code == 503
            metrics = httpx.get(f"{running.url}/metrics").text
            assert 'trustindex_snapshot_load_failures_total{stage="download"} 1.0' in metrics
            assert not (tmp_path / "cache" / SNAPSHOTS_DIR / sid).exists()
            # the export repaired: the good file uploaded again
            good = resolve_current(refreshed["data"]) / "chunks.parquet"
            with fs.open_output_stream(f"exports/ti/{SNAPSHOTS_DIR}/{sid}/chunks.parquet") as out:
                out.write(good.read_bytes())
            holder._failed = None  # skip the retry pause
            assert holder.poll() is True
            first = httpx.post(f"{running.url}/v1/search", json={"query": "counter"}, timeout=30).json()
            assert first["snapshot_id"] == sid
            # a corrupted copy of another snapshot id: a flipped byte, CURRENT naming it
            bad_id = "f" * 16
            with fs.open_output_stream(f"exports/ti/{SNAPSHOTS_DIR}/{bad_id}/manifest.json") as out:
                out.write((local / SNAPSHOTS_DIR / sid / "manifest.json").read_bytes())
            with fs.open_output_stream(f"exports/ti/{CURRENT}") as out:
                out.write(bad_id.encode())
            assert holder.poll() is False
            again = httpx.post(f"{running.url}/v1/search", json={"query": "counter"}, timeout=30).json()
            assert again["snapshot_id"] == sid
            metrics = httpx.get(f"{running.url}/metrics").text
            assert 'trustindex_snapshot_load_failures_total{stage="download"} 2.0' in metrics
            assert bad_id in json.dumps(httpx.get(f"{running.url}/v1/snapshot").json()["warning"])
    finally:
        moto.stop()


def test_cached_snapshots_are_removed_after_the_grace_period(tmp_path):
    cache = tmp_path / "cache"
    for name in ("a" * 16, "b" * 16):
        (cache / SNAPSHOTS_DIR / name).mkdir(parents=True)
    patient = ExportSource(str(tmp_path / "target"), cache, grace_seconds=3600)
    patient.cleanup({"a" * 16})
    assert (cache / SNAPSHOTS_DIR / ("b" * 16)).is_dir()  # retired just now: within its grace period
    ExportSource(str(tmp_path / "target"), cache, grace_seconds=0).cleanup({"a" * 16})
    assert sorted(p.name for p in (cache / SNAPSHOTS_DIR).iterdir()) == ["a" * 16]


def test_the_serve_command_runs_and_refuses_an_open_bind_without_a_token(refreshed, tmp_path, capsys):
    import os
    import subprocess
    import sys

    from trustindex.cli.main import main

    assert main(["serve", "--data", str(refreshed["data"]), "--host", "0.0.0.0"]) == 1
    assert "needs a bearer token" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "TRUSTINDEX_TOKENS": "t0k"}
    argv = [sys.executable, "-m", "trustindex.cli.main", "serve", "--data", str(refreshed["data"]), "--port", str(port)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline, ready = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                if ready.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        assert ready is not None and ready.status_code == 200, proc.stdout.read() if proc.poll() is not None else ""
        auth = {"Authorization": "Bearer t0k"}
        r = httpx.post(f"http://127.0.0.1:{port}/v1/search", json={"query": "counter"}, headers=auth, timeout=30)
        assert r.status_code == 200 and r.json()["snapshot_id"] == ready.json()["snapshot_id"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_server_imports_neither_torch_nor_prefect():
    import subprocess
    import sys

    code = (
        "import sys; import trustindex.serve.http_app, trustindex.serve.live, trustindex.cli.main; "
        "print(sorted(m for m in ('torch', 'prefect', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
