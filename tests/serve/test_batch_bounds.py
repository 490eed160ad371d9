"""Bounded batches (issue 40 item 5): a batch's hits (the sum of its k) and its answers' bytes are capped, the same
over ``/v1/search:batch`` and the MCP ``search_batch`` tool; the MCP search tools give the contract once (structured
content beside the compact text, or JSON text alone with ``detail="full"``).  The memory a batch costs is measured by
bench/bench_batch_memory.py, not here."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from tests.kits.servekit import Running
from trustindex.schemas.response import validate_response
from trustindex.serve.http_app import ServeConfig, ServeLimits
from trustindex.serve.live import DataDirSource, SnapshotHolder

LIMITS = ServeLimits(max_k=20, max_batch=8, max_batch_hits=30, max_response_bytes=1)
Q = "How do I install the Compact compiler?"


@pytest.fixture(scope="module")
def server(refreshed):
    with Running(SnapshotHolder(DataDirSource(refreshed["data"])), ServeConfig(limits=LIMITS)) as running:
        yield running


def _mcp(url: str, *calls: tuple[str, dict]):
    from mcp import Client

    async def talk():
        async with Client(f"{url}/mcp") as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(talk)


def test_a_batch_over_the_hit_cap_is_refused_before_it_runs(server):
    requests = [{"query": Q, "k": 10}] * 4  # 40 hits, the cap 30
    r = httpx.post(f"{server.url}/v1/search:batch", json={"requests": requests}, timeout=60)
    assert r.status_code == 400 and r.json()["error"] == (
        "batch asks for 40 hits (the sum of its k); the limit is 30: ask for fewer hits or split it"
    )
    (by_default,) = _mcp(server.url, ("search_batch", {"requests": [{"query": Q}] * 4, "k": 10}))
    assert by_default.is_error and "batch asks for 40 hits" in by_default.content[0].text
    ok = httpx.post(f"{server.url}/v1/search:batch", json={"requests": requests[:3]}, timeout=60)
    assert ok.status_code == 200  # 30 hits: at the cap


def test_past_the_byte_cap_the_requests_left_answer_an_error_unrun(server):
    requests = [{"query": Q, "k": 5}, {"query": "counter", "k": 5}, {"query": ""}]
    body = httpx.post(f"{server.url}/v1/search:batch", json={"requests": requests}, timeout=60).json()
    first, *rest = body["responses"]
    assert first["hits"] and [r["line"] for r in rest] == [2, 3]
    assert all(r["error"].startswith("not run: the batch's answers reached") for r in rest)
    (mcp,) = _mcp(server.url, ("search_batch", {"requests": requests}))
    assert [r.get("line") for r in mcp.structured_content["responses"]] == [None, 2, 3]


def test_mcp_search_gives_the_contract_once(server):
    compact, full, batch = _mcp(
        server.url,
        ("search", {"query": Q, "k": 3}),
        ("search", {"query": Q, "k": 3, "detail": "full"}),
        ("search_batch", {"requests": [{"query": Q, "k": 2}], "k": 2}),
    )
    validate_response(compact.structured_content)
    (text,) = [c.text for c in compact.content]
    assert text.startswith("match tier: ") and '"factors"' not in text
    assert full.structured_content is None
    validate_response(json.loads(full.content[0].text))
    (answer,) = batch.structured_content["responses"]
    validate_response(answer)
    batch_text = batch.content[0].text
    assert batch_text.startswith(f"[request 1 of 1] {Q}\nmatch tier: ") and "\n> " in batch_text
    assert '"factors"' not in batch_text
