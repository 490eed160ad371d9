"""The lows of issue 40 item 6: a signing key or token file other accounts can read is used with a warning naming it;
the key folder is made 0700 whatever the umask; an unknown passage id is echoed only as a short prefix (over HTTP and
MCP); every ``/v1`` answer says ``X-Content-Type-Options: nosniff``."""

from __future__ import annotations

import logging
import os
import stat

import anyio
import httpx
import pytest

from tests.kits.servekit import Running
from trustindex.schemas.secret_files import exposed
from trustindex.schemas.signing import generate_keys, sign_manifest
from trustindex.serve.http_app import ServeConfig, load_tokens
from trustindex.serve.listing import SHOWN_ID_CHARS
from trustindex.serve.live import DataDirSource, SnapshotHolder
from trustindex.serve.mcp_server import build_server

LONG_ID = "f" * 12_000  # what a URL carries through uvicorn; MCP takes 100 KB


@pytest.fixture(scope="module")
def served(refreshed):
    holder = SnapshotHolder(DataDirSource(refreshed["data"]))
    with Running(holder, ServeConfig()) as server:
        yield holder, server.url


def test_a_key_or_token_file_others_can_read_is_used_with_a_warning(tmp_path, caplog):
    key, _pub = generate_keys(tmp_path / "keys")
    tokens = tmp_path / "tokens"
    tokens.write_text("s3cret-token\n")
    os.chmod(tokens, 0o600)
    with caplog.at_level(logging.WARNING, logger="trustindex.secrets"):
        assert sign_manifest(b"{}", key) and load_tokens(str(tokens), None) == {"s3cret-token"}
    assert not caplog.records  # the owner's alone: nothing to say
    os.chmod(key, 0o644)
    os.chmod(tokens, 0o640)
    with caplog.at_level(logging.WARNING, logger="trustindex.secrets"):
        assert sign_manifest(b"{}", key)  # still used: a secret store may mount it so
        assert load_tokens(str(tokens), None) == {"s3cret-token"}
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2
    assert f"{key} holds the export signing key" in said[0] and "mode 0644" in said[0] and "chmod 600" in said[0]
    assert f"{tokens} holds bearer tokens" in said[1] and "mode 0640" in said[1]
    assert exposed(tmp_path / "missing") is None


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o777])
def test_the_key_folder_is_0700_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        key, pub = generate_keys(tmp_path / "a" / "keys")
    finally:
        os.umask(old)
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_an_unknown_passage_id_is_echoed_only_as_a_short_prefix(served):
    holder, url = served
    r = httpx.get(f"{url}/v1/passages/{LONG_ID}", timeout=60)
    assert r.status_code == 404 and "is not in snapshot" in r.json()["error"]
    assert len(r.text) < SHOWN_ID_CHARS + 200 and "f" * (SHOWN_ID_CHARS + 1) not in r.text

    async def ask():
        return await build_server(live=holder).call_tool("get_passage", {"chunk_id": "e" * 100_000})

    from mcp.server.mcpserver.exceptions import ToolError

    with pytest.raises(ToolError) as raised:
        anyio.run(ask)
    assert "is not in snapshot" in str(raised.value) and len(str(raised.value)) < SHOWN_ID_CHARS + 200


def test_every_v1_answer_says_nosniff(served):
    _, url = served
    with httpx.Client(base_url=url, timeout=60) as c:
        answers = [
            c.post("/v1/search", json={"query": "counter", "k": 1}),
            c.post("/v1/search", json={"query": "counter", "k": 1, "format": "compact"}),
            c.post("/v1/search:batch", json={"requests": [{"query": "counter"}]}),
            c.post("/v1/search", json={"query": ""}),  # a 400 too
            c.get("/v1/sources"),
            c.get("/v1/snapshot"),
            c.get(f"/v1/passages/{'0' * 64}"),
        ]
    for r in answers:
        assert r.headers["x-content-type-options"] == "nosniff", r.request.url
