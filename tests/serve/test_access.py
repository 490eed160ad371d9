"""Teams share one serving tier (issue 44): a token scoped to the public source never receives a private passage,
count or score through any route or MCP tool (batches, ``also`` phrasings and cached answers included), a private
chunk id is a 404 like a missing one, ``/metrics`` counts refusals by reason, and the audit log holds one line per
answered request with the chunk ids it returned.  Real HTTP on loopback (uvicorn in a thread), the MCP SDK's
streamable HTTP client, a snapshot of two sources built by the real build path (tests/kits/scopekit.py)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import anyio
import httpx
import pytest

from tests.kits.scopekit import PRIVATE, PRIVATE_A, PUBLIC, build_two_sources, private_words
from tests.kits.servekit import Running
from trustindex.query.index import Index
from trustindex.schemas.access import AccessFile, SourceScope
from trustindex.schemas.errors import ConfigError
from trustindex.serve.access import AccessSpec
from trustindex.serve.audit import AuditLog, AuditSpec
from trustindex.serve.http_app import ServeConfig, ServeLimits
from trustindex.serve.live import DataDirSource, SnapshotHolder

SECRETS = {"public-team": "pub-7f3a", "ops": "ops-91c2", "old": "old-0b1d"}
PUBLIC_ONLY = SourceScope((PUBLIC,))
REQUESTS = [
    {"query": "install the compiler on the build farm mirror", "k": 5},
    {"query": "escrow contract releases the buyer's payment", "targets": {"compact-language": "0.31"}},
    {"query": "acquisition of Lumen Labs", "also": ["Nightjar acquisition price", "zorblax audit"]},
    {"query": "zorblax audit", "k": 1, "strict": True},
]


def sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def tokens_toml() -> str:
    return (
        f'[[token]]\nname = "public-team"\nsha256 = "{sha(SECRETS["public-team"])}"\nsources = ["{PUBLIC}"]\n\n'
        f'[[token]]\nname = "ops"\nsha256 = "{sha(SECRETS["ops"])}"\nsources = ["*"]\n\n'
        f'[[token]]\nname = "old"\nsha256 = "{sha(SECRETS["old"])}"\nsources = ["*"]\nexpires = 2020-01-31\n'
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    from trustindex.encoder.factory import make_embedder
    from trustindex.schemas.embedding_model import Backend, encoder_cache_dir

    root = tmp_path_factory.mktemp("access")
    build_two_sources(root / "data", PRIVATE_A, make_embedder(Backend.ONNX_INT8, cache_dir=encoder_cache_dir(root)))
    (root / "tokens.toml").write_text(tokens_toml(), encoding="utf-8")
    index = Index.open(data_dir=root / "data")
    private = {c for c, s in zip(index.data.chunk_ids, index.data.chunks["source"], strict=True) if s == PRIVATE}
    return {"root": root, "data": root / "data", "index": index, "private": private}


@pytest.fixture(scope="module")
def server(built):
    config = ServeConfig(
        limits=ServeLimits(max_k=20, max_batch=8),
        tokens=frozenset({"legacy-secret"}),
        access=AccessSpec(tokens_file=str(built["root"] / "tokens.toml")),
        audit=AuditSpec(path=str(built["root"] / "audit" / "audit.jsonl")),
    )
    with Running(SnapshotHolder(DataDirSource(built["data"]), query_cache=64), config) as running:
        yield running


def client(server, who: str) -> httpx.Client:
    secret = SECRETS.get(who, who)
    return httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {secret}"})


def no_leak(built, payload) -> None:
    """Nothing of the private source in ``payload`` (a response, a listing, a tool's text): no chunk id, no source
    name, none of its own words (but those the request itself used)."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    asked = " ".join(" ".join([r["query"], *r.get("also", [])]) for r in REQUESTS).lower()
    assert not {c for c in built["private"] if c in text}
    assert PRIVATE not in text and "nightjar-sdk" not in text
    assert not {w for w in private_words(PRIVATE_A) if w not in asked and w in text.lower()}


def mcp_calls(server, secret: str, calls: list[tuple[str, dict]]):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def talk():
        headers = {"Authorization": f"Bearer {secret}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as c:
                return [await c.call_tool(name, args) for name, args in calls]

    return anyio.run(talk)


def test_a_public_token_gets_no_private_passage_count_or_score_over_http(server, built):
    with client(server, "ops") as ops, client(server, "public-team") as pub:
        # the full token asks first: every cache (query vectors, shown hits, page terms) holds its answers
        unscoped = [ops.post("/v1/search", json=r).json() for r in REQUESTS]
        assert built["private"] & {h["chunk_id"] for r in unscoped for h in r["hits"]}
        for r in REQUESTS:
            got = pub.post("/v1/search", json=r)
            assert got.status_code == 200, got.text
            no_leak(built, got.json())
            want = built["index"].search(r["query"], **{k: v for k, v in r.items() if k != "query"}, scope=PUBLIC_ONLY)
            assert got.json() == json.loads(json.dumps(want))
            no_leak(built, pub.post("/v1/search", json={**r, "format": "compact"}).text)
        batch = pub.post("/v1/search:batch", json={"requests": REQUESTS}).json()["responses"]
        assert len(batch) == len(REQUESTS) and all("hits" in b for b in batch)
        no_leak(built, batch)
        for path in ("/v1/sources", "/v1/versions", "/v1/snapshot"):
            listing = pub.get(path).json()
            no_leak(built, listing)
        assert [s["source"] for s in pub.get("/v1/sources").json()["sources"]] == [PUBLIC]
        assert {s["source"] for s in ops.get("/v1/sources").json()["sources"]} == {PUBLIC, PRIVATE}


def test_a_private_chunk_id_is_a_404_like_a_missing_one(server, built):
    hidden = sorted(built["private"])[0]
    missing = hidden[:-4] + "zzzz"
    with client(server, "public-team") as pub, client(server, "ops") as ops:
        a, b = pub.get(f"/v1/passages/{hidden}"), pub.get(f"/v1/passages/{missing}")
        assert a.status_code == b.status_code == 404
        assert a.json()["error"].replace(hidden, missing) == b.json()["error"]
        assert ops.get(f"/v1/passages/{hidden}").status_code == 200
        assert pub.get("/metrics").status_code == 403  # its counters would tell about the others' requests
        metrics = ops.get("/metrics").text
    assert 'trustindex_scope_denials_total{reason="passage_out_of_scope"}' in metrics
    assert 'trustindex_scope_denials_total{reason="full_access_route"}' in metrics


def test_the_mcp_tools_answer_within_the_token_scope(server, built):
    hidden = sorted(built["private"])[0]
    calls = [
        ("search", {"query": REQUESTS[0]["query"], "k": 5}),
        ("search", {"query": REQUESTS[2]["query"], "detail": "full"}),
        ("search_batch", {"requests": REQUESTS}),
        ("get_passage", {"chunk_id": hidden}),
        ("get_passage", {"chunk_id": hidden[:-4] + "zzzz"}),
        ("list_sources", {}),
        ("list_versions", {}),
    ]
    pub = mcp_calls(server, SECRETS["public-team"], calls)
    for result in pub[:3] + pub[5:]:
        assert not result.is_error
        no_leak(built, result.structured_content)
        no_leak(built, " ".join(c.text for c in result.content))
    assert pub[3].is_error and pub[4].is_error
    assert pub[3].content[0].text.replace(hidden, hidden[:-4] + "zzzz") == pub[4].content[0].text
    full = mcp_calls(server, SECRETS["ops"], calls[3:4] + calls[5:6])
    assert not full[0].is_error and PRIVATE in json.dumps(full[1].structured_content)


def test_refused_credentials_are_401_with_one_reason_each_and_counted(server):
    with client(server, "ops") as ops:
        before = ops.get("/metrics").text
        cases = {
            "missing": httpx.get(f"{server.url}/v1/sources"),
            "unknown_token": httpx.get(f"{server.url}/v1/sources", headers={"Authorization": "Bearer nope"}),
            "token_expired": httpx.get(
                f"{server.url}/v1/sources", headers={"Authorization": f"Bearer {SECRETS['old']}"}
            ),
            "malformed_header": httpx.get(f"{server.url}/v1/sources", headers={"Authorization": "Basic eDp5"}),
        }
        after = ops.get("/metrics").text
        legacy = httpx.get(f"{server.url}/v1/sources", headers={"Authorization": "Bearer legacy-secret"})
    messages = {r.json()["error"] for r in cases.values()}
    assert all(r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer") for r in cases.values())
    assert len(messages) == len(cases) and "expired" in cases["token_expired"].json()["error"]
    for reason in cases:
        line = f'trustindex_auth_failures_total{{reason="{reason}"}}'
        assert count(after, line) == count(before, line) + 1, reason
    assert legacy.status_code == 200 and {s["source"] for s in legacy.json()["sources"]} == {PUBLIC, PRIVATE}


def count(metrics: str, prefix: str) -> float:
    return next((float(x.rsplit(" ", 1)[1]) for x in metrics.splitlines() if x.startswith(prefix)), 0.0)


def audit_lines(path: Path, at_least: int, timeout: float = 10) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
        if len(lines) >= at_least or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def settled_lines(path: Path, quiet: float = 0.3, timeout: float = 10) -> list[dict]:
    """The file's lines once no line has been added for ``quiet`` seconds: the writer thread may still hold lines of
    requests an earlier test made (they are answered before their line is written)."""
    deadline = time.monotonic() + timeout
    lines = audit_lines(path, 0)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        again = audit_lines(path, 0)
        if len(again) == len(lines):
            break
        lines = again
    return lines


def test_the_audit_log_has_one_line_per_answered_request(server, built):
    path = built["root"] / "audit" / "audit.jsonl"
    start = len(settled_lines(path))  # read as a count: an earlier test's line written late would shift ours
    with client(server, "public-team") as pub:
        answers = [pub.post("/v1/search", json=r).json() for r in REQUESTS[:2]]
        batch = pub.post("/v1/search:batch", json={"requests": REQUESTS[2:]}).json()["responses"]
        first = answers[0]["hits"][0]["chunk_id"]
        passage = pub.get(f"/v1/passages/{first}", params={"neighbours": 1}).json()
        pub.get("/v1/sources")
    httpx.get(f"{server.url}/v1/sources", headers={"Authorization": "Bearer nope"})
    mcp_calls(server, SECRETS["public-team"], [("search", {"query": REQUESTS[0]["query"], "k": 2})])
    lines = audit_lines(path, start + 7)[start:]
    assert [x["route"] for x in lines] == [
        *["/v1/search"] * 2, "/v1/search:batch", "/v1/passages/{chunk_id}", "/v1/sources", "/v1/sources", "mcp:search"
    ]  # fmt: skip
    assert all(x["who"] == "public-team" and x["via"] == "token" for i, x in enumerate(lines) if i != 5)
    for x, r, a in zip(lines[:2], REQUESTS[:2], answers, strict=True):
        assert x["query"] == r["query"] and x["chunk_ids"] == [h["chunk_id"] for h in a["hits"]]
        assert x["snapshot_id"] == a["snapshot_id"] and x["status"] == 200 and x["time"].endswith("Z")
    assert [q["chunk_ids"] for q in lines[2]["requests"]] == [[h["chunk_id"] for h in b["hits"]] for b in batch]
    assert lines[2]["requests"][0]["also"] == REQUESTS[2]["also"]
    assert lines[3]["chunk_ids"] == [p["chunk_id"] for p in passage["passages"]] and len(lines[3]["chunk_ids"]) > 1
    assert lines[5]["status"] == 401 and lines[5]["refused"] == "unknown_token" and lines[5]["who"] is None
    assert lines[6]["query"] == REQUESTS[0]["query"] and len(lines[6]["chunk_ids"]) == 2
    text = path.read_text(encoding="utf-8")
    assert not any(secret in text for secret in [*SECRETS.values(), "legacy-secret"])


def test_hashed_queries_a_full_queue_and_rotation(tmp_path):
    """``--audit-hash-queries`` writes digests; a full queue drops lines, counts them and then says how many in the
    file; the file rotates at its size, keeping the backups asked for."""
    from trustindex.serve.audit import search_fields

    counted: dict[str, int] = {}

    def count_it(result: str, n: int = 1) -> None:
        counted[result] = counted.get(result, 0) + n

    fields = search_fields({"query": "secret plans", "also": ["more"]}, {"hits": [], "snapshot_id": "s"}, True)
    assert fields["query_sha256"] == sha("secret plans") and "query" not in fields and "also" not in fields
    log = AuditLog(AuditSpec(path=str(tmp_path / "full.jsonl"), queue_size=3), None, count_it)
    with log.listener.handlers[0].lock:  # the writer stalls on its first line: the queue fills behind it
        for n in range(10):
            log.write({"n": n, **fields})
        assert counted["dropped"] >= 10 - 3 - 1
    time.sleep(0.2)
    log.write({"n": 10})
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "full.jsonl").read_text().splitlines()]
    gaps = [x for x in lines if x.get("event") == "audit_lines_dropped"]
    assert sum(g["lines"] for g in gaps) == counted["dropped"] and lines[-1]["n"] == 10
    assert len(lines) - len(gaps) + counted["dropped"] == 11 and counted["written"] == len(lines)
    assert "secret plans" not in (tmp_path / "full.jsonl").read_text()

    rotated = AuditLog(AuditSpec(path=str(tmp_path / "r.jsonl"), max_bytes=1200, backups=2), None, count_it)
    for n in range(60):
        rotated.write({"n": n, **fields})
    rotated.close()
    files = sorted(tmp_path.glob("r.jsonl*"))
    assert [f.name for f in files] == ["r.jsonl", "r.jsonl.1", "r.jsonl.2"] and all(
        f.stat().st_size <= 1200 for f in files
    )
    assert json.loads(files[0].read_text().splitlines()[-1])["n"] == 59


@pytest.mark.parametrize(
    "body, key, words",
    [
        ('[[token]]\nname = "a"\nsecret = "x"\nsources = ["*"]\n', "token[0].secret", "never the secret"),
        ('[[token]]\nname = "a"\nsha256 = "abc"\nsources = ["*"]\n', "token[a].sha256", "64 hexadecimal"),
        (f'[[token]]\nname = "a"\nsha256 = "{"0" * 64}"\nsources = []\n', "token[a].sources", "non-empty list"),
        (
            f'[[token]]\nname = "a"\nsha256 = "{"0" * 64}"\nsources = ["*"]\nexpires = 2027-01-01T00:00:00\n',
            "token[a].expires",
            "offset",
        ),
        (f'[[token]]\nname = "a"\nsha256 = "{"0" * 64}"\nsources = ["*"]\n' * 2, "token", "same name"),
        ('[[group]]\nname = "g"\nsources = "team-*"\n', "group[g].sources", "non-empty list"),
        ("[[team]]\n", "team", "unknown key"),
    ],
)
def test_a_bad_tokens_file_is_one_error_naming_the_key(tmp_path, body, key, words):
    f = tmp_path / "tokens.toml"
    f.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        AccessFile.load(f)
    assert e.value.key == key and words in e.value.problem and str(f) in str(e.value)


def test_the_workers_get_the_same_access_and_audit_setup():
    from trustindex.serve.oidc import OidcSpec
    from trustindex.serve.workers import ServeSetup

    config = ServeConfig(
        access=AccessSpec("t.toml", OidcSpec("https://sso.example", "ti", None, "groups", "email", ("RS256",))),
        audit=AuditSpec("audit.jsonl", True, 4096, 3, 17),
    )
    setup = ServeSetup(config=config)
    assert ServeSetup.from_json(setup.to_json()) == setup


def test_the_serve_command_checks_the_access_options_first(tmp_path, capsys):
    from trustindex.cli.main import main

    bad = tmp_path / "tokens.toml"
    bad.write_text('[[token]]\nname = "a"\nsha256 = "not-a-digest"\nsources = ["*"]\n', encoding="utf-8")
    assert main(["serve", "--data", str(tmp_path), "--host", "0.0.0.0", "--tokens", str(bad)]) == 1
    assert f"{bad}: token[a].sha256: expected the secret's sha256" in capsys.readouterr().err
    assert main(["serve", "--data", str(tmp_path), "--oidc-issuer", "http://sso.example", "--oidc-audience", "a"]) == 1
    assert "must be https://" in capsys.readouterr().err
    assert AuditSpec(path=str(tmp_path / "audit.jsonl")).for_worker(1) == tmp_path / "audit.1.jsonl"
