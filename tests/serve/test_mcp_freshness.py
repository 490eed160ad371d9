"""The stdio MCP server verifies what it serves (issue 40 item 4): ``trustindex mcp --from DIR --trusted-key K`` pulls
with the same rules as ``serve`` (an older signed snapshot is refused after a newer one, also after a restart; an
expired one answers with a warning), and ``trustindex mcp --data DIR --trusted-key K`` refuses a live snapshot whose
signature does not verify, and a rollback too.  Real ``trustindex mcp`` processes driven by the official client."""

from __future__ import annotations

import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path

import anyio
import pytest

from bench.serve_load import twin
from tests.kits.exportkit import forge_trust, rehash
from trustindex.cli.main import main as cli
from trustindex.schemas.snapshot import CURRENT, SNAPSHOTS_DIR
from trustindex.warehouse.export import export_snapshot

ROOT = Path(__file__).resolve().parents[2]
QUERY = "how do I write a counter contract in Compact"

pytestmark = pytest.mark.serving_load


async def _ask(args: list[str], between=None) -> list[dict]:
    """One ``trustindex mcp ARGS`` process: a search, then ``between()`` (if given) and a second search after the
    poll had time to see it."""
    from mcp import Client, StdioServerParameters

    env = {
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HOME": os.environ["HOME"],
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustindex.cli.main", "mcp", *args], env=env, cwd=str(ROOT)
    )
    out = []
    async with Client(params, read_timeout_seconds=180) as client:
        for step in (None, between) if between else (None,):
            if step is not None:
                step()
                await anyio.sleep(1.5)  # --poll 0.2 (a data directory is looked at on every call)
            r = await client.call_tool("search", {"query": QUERY, "k": 2})
            texts = [c.text for c in r.content if getattr(c, "type", "") == "text"]
            out.append({"error": r.is_error, "data": r.structured_content, "text": texts})
    return out


@pytest.fixture(scope="module")
def signed(refreshed, tmp_path_factory) -> dict:
    """A and B (a twin of A) in a data dir, both exported in that order to a directory target, signed."""
    work = tmp_path_factory.mktemp("mcp-fresh")
    assert cli(["keys", "generate", "--out", str(work / "keys")]) == 0
    data = work / "data"
    a = (refreshed["data"] / CURRENT).read_text().strip()
    shutil.copytree(refreshed["data"] / SNAPSHOTS_DIR / a, data / SNAPSHOTS_DIR / a)
    b = twin(data, a, "gzip")
    target, key = work / "export", work / "keys" / "signing.key"
    export_snapshot(data, a, str(target), sign_key=key)
    export_snapshot(data, b, str(target), sign_key=key)
    return {"work": work, "data": data, "a": a, "b": b, "target": target, "key": key, "pub": work / "keys/signing.pub"}


def _roll_back(target: Path, to: str):
    return lambda: (target / CURRENT).write_text(to + "\n")


def test_mcp_from_refuses_a_rollback_and_still_does_after_a_restart(signed):
    s, cache = signed, signed["work"] / "cache-from"
    args = ["--from", str(s["target"]), "--trusted-key", str(s["pub"]), "--cache", str(cache), "--poll", "0.2"]
    before, after = anyio.run(_ask, args, _roll_back(s["target"], s["a"]))
    assert not before["error"] and before["data"]["snapshot_id"] == s["b"] and before["data"]["signed"]
    assert len(before["text"]) == 1  # no warning
    assert not after["error"] and after["data"]["snapshot_id"] == s["b"]
    assert "rollback" in after["text"][1] and "was refused" in after["text"][1]
    (restarted,) = anyio.run(_ask, args)  # a new process: the mark and B are in the cache
    assert restarted["data"]["snapshot_id"] == s["b"] and "rollback" in restarted["text"][1]
    export_snapshot(s["data"], s["b"], str(s["target"]), sign_key=s["key"])  # put right for the next tests


def test_mcp_from_warns_once_its_snapshot_expires_and_refuses_one_that_arrives_expired(signed, tmp_path):
    target = tmp_path / "export"
    valid = 45.0  # long enough for a server to start on a loaded machine, short enough to wait for
    result = export_snapshot(signed["data"], signed["a"], str(target), sign_key=signed["key"], valid_for=valid)
    until = datetime.fromisoformat(result["expires_at"]).timestamp()
    args = ["--from", str(target), "--trusted-key", str(signed["pub"]), "--cache", str(tmp_path / "cache")]
    before, after = anyio.run(_ask, args, lambda: time.sleep(max(0.0, until - time.time() + 0.5)))
    assert not before["error"] and len(before["text"]) == 1, "started after the expiry: raise valid"
    assert not after["error"] and after["data"]["snapshot_id"] == signed["a"]
    assert "expired" in after["text"][1] and "has not been re-signed" in after["text"][1]
    args = ["--from", str(target), "--trusted-key", str(signed["pub"]), "--cache", str(tmp_path / "fresh-cache")]
    (r,) = anyio.run(_ask, args)  # a new replica: an expired export is never swapped in
    assert r["error"] and "signature expired at" in r["text"][0] and "refused" in r["text"][0]


def test_mcp_data_with_a_trusted_key_refuses_a_forgery_and_a_rollback(signed, tmp_path):
    s = signed
    target = tmp_path / "export"
    shutil.copytree(s["target"], target)
    args = ["--data", str(target), "--trusted-key", str(s["pub"]), "--cache", str(tmp_path / "cache")]
    before, after = anyio.run(_ask, args, _roll_back(target, s["a"]))
    assert before["data"]["snapshot_id"] == s["b"] and after["data"]["snapshot_id"] == s["b"]
    assert "rollback" in after["text"][1]
    forged = rehash(target, s["b"], forge_trust)  # CURRENT names a re-hashed copy with the old signature
    (r,) = anyio.run(_ask, ["--data", str(target), "--trusted-key", str(s["pub"]), "--cache", str(tmp_path / "c2")])
    assert r["error"] and f"snapshot {forged}: the signature does not match the manifest" in r["text"][0]
