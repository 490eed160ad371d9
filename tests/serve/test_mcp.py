"""The MCP server, driven by the official ``mcp`` client over stdio (``trustindex mcp --data DIR``).

One server process serves a whole conversation (starting it loads the model,
the slow part); the conversation is recorded once and the tests below assert
on it.  Midway it publishes other snapshots into the copied data directory —
a real one with a source removed, then a corrupt one — and the server must
follow CURRENT without a restart, and keep serving what it has (and say so)
when the new snapshot fails to load.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from trustindex.schemas.embedded_text import embedding_input
from trustindex.schemas.response import validate_response
from trustindex.schemas.snapshot import (
    BM25_DIR,
    BM25_FIELDS_DIR,
    EMBEDDINGS,
    PAGE_LINKS_DIR,
    TABLE_FILES,
    read_manifest,
    resolve_current,
)
from trustindex.warehouse.bm25 import build_bm25
from trustindex.warehouse.build import field_input
from trustindex.warehouse.page_links import write_page_links
from trustindex.warehouse.snapshots import current_id, finish_snapshot, new_build_dir, set_current
from trustindex.warehouse.tables import write_table

ROOT = Path(__file__).resolve().parents[2]
QUERY = "how do I write a counter contract in Compact"
TRIM_TOKENS = 700
TOOLS = {"search", "search_batch", "get_passage", "list_sources", "list_versions"}


def copy_data(src: Path, dst: Path) -> Path:
    """Only what serving reads (CURRENT and snapshots/), so the shared fixture stays untouched."""
    dst.mkdir(parents=True)
    shutil.copy2(src / "CURRENT", dst / "CURRENT")
    shutil.copytree(src / "snapshots", dst / "snapshots", ignore=shutil.ignore_patterns(".tmp-*", ".export-*"))
    return dst


def publish_without(data: Path, drop_source: str, corrupt: bool = False) -> str:
    """A real, self-consistent snapshot of the live one minus a source (tables, embeddings, BM25 rebuilt)."""
    live = data / "snapshots" / current_id(data)
    m = read_manifest(live)
    build = new_build_dir(data)
    docs = pq.read_table(live / TABLE_FILES["documents"])
    keep_docs = docs.filter(pc.not_equal(docs["source"], drop_source))["doc_id"]
    counts = {}
    for name, file in TABLE_FILES.items():
        if not (live / file).is_file():
            continue
        t = pq.read_table(live / file)
        if "doc_id" in t.column_names:
            t = t.filter(pc.is_in(t["doc_id"], value_set=keep_docs))
        elif "source" in t.column_names:
            t = t.filter(pc.not_equal(t["source"], drop_source))
        write_table(t, build / file)
        counts[name] = t.num_rows
    chunks = pq.read_table(live / TABLE_FILES["chunks"])
    rows = np.flatnonzero(np.asarray(pc.not_equal(chunks["source"], drop_source)))
    np.save(build / EMBEDDINGS, np.ascontiguousarray(np.load(live / EMBEDDINGS)[rows]), allow_pickle=False)
    kept = pq.read_table(build / TABLE_FILES["chunks"])
    build_bm25(embedding_input(kept), build / BM25_DIR)
    build_bm25(field_input(kept), build / BM25_FIELDS_DIR)
    if (build / TABLE_FILES["links"]).is_file():  # what the kept pages' links say of them
        write_page_links(
            build, pq.read_table(build / TABLE_FILES["links"]), pq.read_table(build / TABLE_FILES["documents"])
        )
    for p in live.rglob("*"):  # anything else the snapshot carries (an ONNX encoder) goes along unchanged
        rel = p.relative_to(live)
        rebuilt = rel.parts[0] in (BM25_DIR, BM25_FIELDS_DIR, PAGE_LINKS_DIR)
        if p.is_file() and p.name != "manifest.json" and not (build / rel).exists() and not rebuilt:
            (build / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, build / rel)
    new = finish_snapshot(
        data,
        build,
        sources=[s for s in m.sources if _name(s) != drop_source],
        embedding_model=m.embedding_model,
        row_counts=counts,
        build_policy_id=m.build_policy_id,
    )
    if corrupt:  # same size, different bytes: only the sha256 check can catch it
        f = data / "snapshots" / new.snapshot_id / TABLE_FILES["chunks"]
        b = bytearray(f.read_bytes())
        b[len(b) // 2] ^= 0xFF
        f.write_bytes(bytes(b))
    set_current(data, new.snapshot_id)
    return new.snapshot_id


def _name(source: dict) -> str:
    return source.get("source") or source.get("name")


async def conversation(data: Path) -> dict:
    from mcp import Client, StdioServerParameters

    env = {
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustindex.cli.main", "mcp", "--data", str(data)], env=env, cwd=str(ROOT)
    )
    log: dict = {"first_id": current_id(data)}

    async def call(name, args=None):
        r = await client.call_tool(name, args or {})
        return {
            "error": r.is_error,
            "data": r.structured_content,
            "text": [c.text for c in r.content if getattr(c, "type", "") == "text"],
        }

    async with Client(params, read_timeout_seconds=120) as client:
        log["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        log["search"] = await call("search", {"query": QUERY, "k": 3})
        log["full"] = await call("search", {"query": QUERY, "k": 3, "detail": "full"})
        log["k10"] = await call("search", {"query": QUERY, "k": 10})
        log["trimmed"] = await call("search", {"query": QUERY, "k": 10, "max_tokens": TRIM_TOKENS})
        log["bad_detail"] = await call("search", {"query": QUERY, "detail": "verbose"})
        top = log["search"]["data"]["hits"][0]["chunk_id"]
        log["passage"] = await call("get_passage", {"chunk_id": top, "neighbours": 1})
        log["sources"] = await call("list_sources")
        log["versions"] = await call("list_versions")
        some = log["versions"]["data"]["components"][0]
        log["targeted"] = await call("search", {"query": QUERY, "targets": {some["component"]: some["constraints"][0]}})
        log["errors"] = {case: await call(tool, args) for case, (tool, args, _) in ERRORS.items()}
        log["after_errors"] = await call("list_sources")

        log["dropped"] = "community-contracts"
        log["second_id"] = publish_without(data, log["dropped"])
        log["search2"] = await call("search", {"query": QUERY, "k": 10})
        log["sources2"] = await call("list_sources")
        log["corrupt_id"] = publish_without(data, "partner-sdk", corrupt=True)
        log["search3"] = await call("search", {"query": QUERY, "k": 3})
        set_current(data, log["second_id"])  # CURRENT names the served snapshot again: the warning goes
        log["search3b"] = await call("search", {"query": QUERY, "k": 3})
        set_current(data, log["first_id"])  # a rollback is a CURRENT change like any other
        log["search4"] = await call("search", {"query": QUERY, "k": 3})
    return log


ERRORS = {  # case: (tool, arguments, words the one-line message must contain)
    "empty query": ("search", {"query": "   "}, "query is empty"),
    "unknown component": (
        "search",
        {"query": QUERY, "targets": {"no-such-component": "1.0"}},
        "no content for component 'no-such-component'",
    ),
    "bad version": ("search", {"query": QUERY, "targets": {"compact-language": "not a version"}}, "not a version"),
    # the limits of `trustindex serve` (serve.request_limits.RequestLimits), the same over stdio
    "k out of range": ("search", {"query": QUERY, "k": 0}, "k must be an integer from 1 to 100, got 0"),
    "k over the limit": ("search", {"query": QUERY, "k": 101}, "k must be an integer from 1 to 100, got 101"),
    "query over the limit": ("search", {"query": "x" * 10_001}, "the limit is 10000"),
    "batch over the limit": ("search_batch", {"requests": [{"query": QUERY}] * 65}, "the limit is 64"),
    "unknown chunk": ("get_passage", {"chunk_id": "0" * 24}, "is not in snapshot"),
    "neighbours out of range": (
        "get_passage",
        {"chunk_id": "0" * 24, "neighbours": 99},
        "neighbours must be an integer from 0 to 20",
    ),
}


@pytest.fixture(scope="module")
def talk(refreshed, tmp_path_factory):
    data = copy_data(Path(refreshed["data"]), tmp_path_factory.mktemp("mcp") / "data")
    return anyio.run(conversation, data)


def test_lists_the_four_tools_with_schemas(talk):
    assert set(talk["tools"]) == TOOLS
    props = talk["tools"]["search"].input_schema["properties"]
    assert {"query", "k", "targets", "strict"} <= set(props)
    assert talk["tools"]["search"].input_schema["required"] == ["query"]
    assert "chunk_id" in talk["tools"]["get_passage"].input_schema["required"]


@pytest.mark.parametrize("key", ["search", "targeted", "full", "k10", "trimmed"])
def test_search_returns_the_contract(talk, key):
    r = talk[key]
    assert not r["error"], r["text"]
    # the contract, once: as structured content beside the compact text, or as JSON text alone (detail "full")
    data = json.loads(r["text"][0]) if key == "full" else r["data"]
    assert (r["data"] is None) == (key == "full")
    validate_response(data)
    assert data["snapshot_id"] == talk["first_id"]
    assert data["hits"], "the demo corpus answers this query"
    for h in data["hits"]:
        assert h["provenance"]["path"] and h["provenance"]["commit"]


def test_detail_full_reads_as_the_contract(talk):
    full = json.loads(talk["full"]["text"][0])
    assert full["hits"] == talk["search"]["data"]["hits"] and talk["full"]["data"] is None


def test_compact_text_is_the_default(talk):
    from trustindex.serve.assistant_text import quoted, token_counter

    r = talk["search"]
    text, data = r["text"][0], r["data"]
    head = text.split("\n\n")[0]
    assert f"match tier: {data['match_tier']}" in head and "answered" in head
    assert f"snapshot {data['snapshot_id']} built {data['built_at'][:10]}" in head
    cited = {h["provenance"]["source"] for h in data["hits"]}
    for s in data["sources"]:  # the sources of the hits by name and commit, the rest counted (issue 29)
        named = f"{s['source']} @ {s['commit'][:12]} ({s['commit_date'][:10]})" in head
        assert named == (s["source"] in cited)
    rest = len(data["sources"]) - len(cited)
    assert (f"{rest} other source" in head) == (rest > 0)
    for h in data["hits"]:
        p = h["provenance"]
        assert f"[{h['rank_position']}] {p['source']}/{p['path']}:{p['start_line']}" in text
        assert quoted(h["text"]) in text
    assert "trust: " in text and '"factors"' not in text and "trimmed" not in text
    full, compact = talk["full"]["text"][0], talk["k10"]["text"][0]
    count = token_counter()
    assert count(text) < count(full) / 2  # the same three hits, less than half the tokens
    assert count(compact) <= 3000  # k=10 within the default budget


def test_max_tokens_trims_whole_hits_and_says_so(talk):
    from trustindex.serve.assistant_text import quoted, token_counter

    text, data = talk["trimmed"]["text"][0], talk["trimmed"]["data"]
    assert token_counter()(text) <= TRIM_TOKENS
    shown = [h for h in data["hits"] if f"[{h['rank_position']}] " in text]
    assert 1 <= len(shown) < len(data["hits"]) == 10
    assert [h["rank_position"] for h in shown] == list(range(1, len(shown) + 1))  # best first, whole
    for h in shown:
        assert quoted(h["text"]) in text
    assert f"[trimmed: {10 - len(shown)} of 10 hits left out to stay within max_tokens={TRIM_TOKENS}" in text
    assert len(talk["k10"]["data"]["hits"]) == 10  # the structured content keeps every hit


def test_an_unknown_detail_is_a_tool_error(talk):
    assert talk["bad_detail"]["error"]


def test_targeted_search_reports_the_target(talk):
    targets = talk["targeted"]["data"]["targets"]
    assert len(targets) == 1 and targets[0]["known_component"]


def test_get_passage_returns_neighbours_in_document_order(talk):
    p = talk["passage"]["data"]
    hit = talk["search"]["data"]["hits"][0]
    roles = [x["role"] for x in p["passages"]]
    assert roles.count("target") == 1
    target = p["passages"][roles.index("target")]
    assert target["chunk_id"] == hit["chunk_id"] and target["text"] == hit["text"]
    assert 1 <= len(p["passages"]) <= 3
    ordinals = [x["ordinal"] for x in p["passages"]]
    assert ordinals == sorted(ordinals) and len(set(ordinals)) == len(ordinals)
    assert roles == sorted(roles, key=["before", "target", "after"].index)
    assert {x["provenance"]["path"] for x in p["passages"]} == {hit["provenance"]["path"]}
    assert p["document"]["path"] == hit["provenance"]["path"] and p["document"]["chunks"] >= len(ordinals)
    assert p["evidence"]["tier"] in {"foundation", "partner", "third_party", "community", "unknown"}


def test_list_sources_names_every_source_with_its_commit(talk, refreshed):
    d = talk["sources"]["data"]
    manifest = read_manifest(Path(refreshed["data"]) / "snapshots" / talk["first_id"])
    assert {s["source"]: s["commit"] for s in d["sources"]} == {_name(s): s["commit"] for s in manifest.sources}
    for s in d["sources"]:
        assert s["publishers"] and all(p["tier"] for p in s["publishers"])
        assert s["chunks"] > 0


def test_list_versions_gives_components_and_constraints(talk, refreshed):
    from trustindex.query.reader import SnapshotData

    known = SnapshotData(resolve_current(refreshed["data"]), verify=False).components
    comps = {c["component"]: c for c in talk["versions"]["data"]["components"]}
    assert set(comps) == set(known) and "compact-language" in comps
    for name, c in comps.items():
        assert c["constraints"] == sorted(known[name]) and c["documents"] > 0


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_come_back_as_tool_errors(talk, case):
    r = talk["errors"][case]
    assert r["error"] and r["data"] is None
    msg = r["text"][0]
    assert ERRORS[case][2] in msg and "\n" not in msg and "Traceback" not in msg


def test_server_survives_errors(talk):
    assert not talk["after_errors"]["error"]


def test_follows_current_without_restart(talk):
    r = talk["search2"]
    assert not r["error"], r["text"]
    validate_response(r["data"])
    assert r["data"]["snapshot_id"] == talk["second_id"] != talk["first_id"]
    assert talk["dropped"] not in {h["provenance"]["source"] for h in r["data"]["hits"]}
    assert talk["dropped"] not in {s["source"] for s in talk["sources2"]["data"]["sources"]}
    assert len(r["text"]) == 1  # no warning


def test_keeps_serving_and_warns_when_new_snapshot_is_corrupt(talk):
    r = talk["search3"]
    assert not r["error"]
    assert r["data"]["snapshot_id"] == talk["second_id"]
    warning = r["text"][1]
    assert talk["corrupt_id"] in warning and f"still serving snapshot {talk['second_id']}" in warning
    assert "sha256" in warning


def test_warning_clears_when_current_names_the_served_snapshot_again(talk):
    r = talk["search3b"]
    assert r["data"]["snapshot_id"] == talk["second_id"] and len(r["text"]) == 1


def test_rollback_is_followed_and_clears_the_warning(talk):
    r = talk["search4"]
    assert r["data"]["snapshot_id"] == talk["first_id"] and len(r["text"]) == 1


def test_module_stays_off_the_build_side():
    code = (
        "import sys, serve.mcp_server; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'prefect', 'torch', 'flows', 'extractors', 'sentence_transformers'}); print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_live_snapshot_is_a_tool_error(tmp_path):
    """Started before the first refresh: every call says what to do, and nothing crashes."""
    from mcp import Client

    from trustindex.serve.mcp_server import build_server

    async def ask():
        async with Client(build_server(tmp_path)) as client:
            return [await client.call_tool(name, {}) for name in ("list_sources", "list_versions")]

    for r in anyio.run(ask):
        assert (
            r.is_error and "no live snapshot (CURRENT is missing); run `trustindex refresh` first" in r.content[0].text
        )
