"""Freshness of signed exports (issue 40 item 3, serve/freshness.py): an export signs a sequence that grows and an
optional expiry; a replica (``serve --from DIR --trusted-key``, the holder both servers use) refuses a snapshot older
than the newest it has verified from that target, counts it, keeps serving the newer one, and keeps that mark across
a restart; past the expiry (or ``--max-snapshot-age``) it still answers, with a warning on every answer, and
``/readyz`` fails.  Real exports, real keys, the real pull, HTTP on loopback."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from bench.serve_load import twin
from tests.kits.servekit import Running, ServeProcess
from trustindex.cli.main import main as cli
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.signing import load_trusted_keys, parse_duration, verify_snapshot_signature
from trustindex.schemas.snapshot import CURRENT, SIGNATURE, SNAPSHOTS_DIR
from trustindex.serve.freshness import STATE_FILE
from trustindex.serve.http_app import WARNING_HEADER, ServeConfig
from trustindex.serve.live import SourceSpec
from trustindex.warehouse.export import ExportError, export_snapshot

pytestmark = pytest.mark.serving_load


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("keys")
    assert cli(["keys", "generate", "--out", str(d / "k")]) == 0
    return d / "k" / "signing.key", d / "k" / "signing.pub"


@pytest.fixture(scope="module")
def two(refreshed, tmp_path_factory) -> tuple[Path, str, str]:
    """A data directory holding the demo snapshot (A) and a twin of it (B, other bytes, another id)."""
    data = tmp_path_factory.mktemp("two") / "data"
    first = (refreshed["data"] / CURRENT).read_text().strip()
    shutil.copytree(refreshed["data"] / SNAPSHOTS_DIR / first, data / SNAPSHOTS_DIR / first)
    return data, first, twin(data, first, "gzip")


def spec(target: Path, cache: Path, pub: Path, **kw) -> SourceSpec:
    return SourceSpec(uri=str(target), cache=str(cache), trusted_keys=(str(pub),), **kw)


def signature(target: Path, sid: str) -> dict:
    return json.loads((target / SNAPSHOTS_DIR / sid / SIGNATURE).read_text())


def test_every_export_signs_a_later_sequence_and_its_expiry(two, key, tmp_path, capsys):
    data, a, _ = two
    target = tmp_path / "export"
    first = export_snapshot(data, a, str(target), sign_key=key[0], valid_for=3600)
    sig = signature(target, a)
    assert sig["version"] == 2 and sig["sequence"] == first["sequence"] and sig["expires_at"] == first["expires_at"]
    assert abs(sig["sequence"] / 1000 - time.time()) < 600
    signed = verify_snapshot_signature(target / SNAPSHOTS_DIR / a, load_trusted_keys([key[1]]))
    assert signed.freshness is not None and signed.freshness.expires_at == first["expires_at"]
    argv = ["export", a, "--to", str(target), "--data", str(data), "--sign-key", str(key[0]), "--valid-for", "2d"]
    assert cli(argv) == 0
    assert "as sequence" in capsys.readouterr().out
    assert signature(target, a)["sequence"] > first["sequence"]  # the same snapshot, re-signed: later
    # an expiry needs a signature; a duration needs a unit or plain seconds
    with pytest.raises(ExportError, match="--valid-for needs --sign-key"):
        export_snapshot(data, a, str(target), valid_for=60)
    with pytest.raises(TrustIndexError, match="--valid-for: 'soon' is not a duration"):
        parse_duration("soon", "--valid-for")
    assert parse_duration("12h", "x") == 43200 and parse_duration("90", "x") == 90


def test_a_replica_refuses_an_older_signed_snapshot_and_keeps_that_across_a_restart(two, key, tmp_path):
    data, a, b = two
    target, cache = tmp_path / "export", tmp_path / "cache"
    export_snapshot(data, a, str(target), sign_key=key[0])
    saved_a = tmp_path / "saved-a"
    shutil.copytree(target / SNAPSHOTS_DIR / a, saved_a)  # what an attacker keeps to put back later
    holder = spec(target, cache, key[1]).holder()
    with Running(holder, ServeConfig()) as server:
        assert holder.served.index.snapshot_id == a
        export_snapshot(data, b, str(target), sign_key=key[0])
        assert holder.poll() and holder.served.index.snapshot_id == b
        # the attack: the target's CURRENT names A again, and A's saved copy (its own valid signature) is put back
        shutil.rmtree(target / SNAPSHOTS_DIR / a)
        shutil.copytree(saved_a, target / SNAPSHOTS_DIR / a)
        (target / CURRENT).write_text(a + "\n")
        assert not holder.poll()
        assert holder.served.index.snapshot_id == b
        assert "was refused" in holder.warning and "rollback" in holder.warning
        with httpx.Client(base_url=server.url, timeout=60) as c:
            body = c.post("/v1/search", json={"query": "counter", "k": 2})
            assert body.json()["snapshot_id"] == b and "rollback" in body.json()["warning"]
            assert "rollback" in body.headers[WARNING_HEADER]
            metrics = c.get("/metrics").text
            assert 'trustindex_snapshot_load_failures_total{stage="rollback"} 1.0' in metrics
            assert c.get("/readyz").status_code == 200  # B is current and fresh: only A was refused
    mark = json.loads((cache / STATE_FILE).read_text())
    assert mark[target.resolve().as_posix()]["snapshot_id"] == b
    # a restart: the mark is in the cache, and B, which the target no longer names, is served from the cache
    again = spec(target, cache, key[1]).holder()
    assert not again.poll()
    assert again.served is not None and again.served.index.snapshot_id == b and "rollback" in again.warning
    # the operator's own rollback is an export: signed later, so it is taken
    export_snapshot(data, a, str(target), sign_key=key[0])
    again._failed = None
    assert again.poll() and again.served.index.snapshot_id == a


def test_the_serve_command_keeps_refusing_after_a_restart(two, key, tmp_path):
    """``trustindex serve --from DIR --trusted-key K`` as a process, stopped and started again after the attack."""
    data, a, b = two
    target, cache = tmp_path / "export", tmp_path / "cache"
    export_snapshot(data, a, str(target), sign_key=key[0])
    export_snapshot(data, b, str(target), sign_key=key[0])
    args = ["--from", str(target), "--cache", str(cache), "--trusted-key", str(key[1])]
    with ServeProcess(args, tmp_path / "first.log") as server:
        assert httpx.get(f"{server.url}/v1/snapshot", timeout=30).json()["snapshot_id"] == b
    (target / CURRENT).write_text(a + "\n")  # rolled back while the replica was down
    with ServeProcess(args, tmp_path / "second.log") as server:
        snap = httpx.get(f"{server.url}/v1/snapshot", timeout=30).json()
        assert snap["snapshot_id"] == b and "rollback" in snap["warning"] and snap["sequence"] > 0
        metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
        assert 'trustindex_snapshot_load_failures_total{stage="rollback"}' in metrics


def test_an_expired_export_answers_with_a_warning_and_is_not_ready_until_it_is_re_signed(two, key, tmp_path):
    """The served snapshot expires: still answering, with the warning, not ready.  A new export that arrives
    expired is refused outright."""
    data, a, b = two
    target = tmp_path / "export"
    expires = export_snapshot(data, a, str(target), sign_key=key[0], valid_for=5.0)["expires_at"]
    holder = spec(target, tmp_path / "cache", key[1]).holder()
    with Running(holder, ServeConfig()) as server:
        assert holder.served is not None, "loaded after the expiry: raise valid_for"
        time.sleep(max(0.0, datetime.fromisoformat(expires).timestamp() - time.time() + 0.2))  # past the expiry
        with httpx.Client(base_url=server.url, timeout=60) as c:
            assert c.get("/readyz").status_code == 503 and "stale" in c.get("/readyz").json()["error"]
            r = c.post("/v1/search", json={"query": "counter", "k": 2})
            assert r.status_code == 200 and "expired" in r.json()["warning"] and "expired" in r.headers[WARNING_HEADER]
            compact = c.post("/v1/search", json={"query": "counter", "k": 2, "format": "compact"}).text
            assert compact.splitlines()[0].startswith("warning: snapshot ") and "expired" in compact.splitlines()[0]
            batch = c.post("/v1/search:batch", json={"requests": [{"query": "counter", "k": 1}]}).json()
            assert "expired" in batch["warning"]
            assert "expired" in c.get("/v1/sources").headers[WARNING_HEADER]
            assert "expired" in c.get("/v1/snapshot").json()["stale"]
            index = holder.served.index
            export_snapshot(data, a, str(target), sign_key=key[0], valid_for=3600)  # the target re-signed
            assert not holder.poll()  # the same snapshot: no reload, a newer signature taken
            assert holder.served.index is index and c.get("/readyz").status_code == 200
            assert "warning" not in c.post("/v1/search", json={"query": "counter", "k": 2}).json()
            export_snapshot(data, b, str(target), sign_key=key[0], valid_for=0.5)
            time.sleep(0.7)  # B's signature expires before the replica looks
            assert not holder.poll() and holder.served.index.snapshot_id == a
            assert "was refused" in holder.warning and "expired" in holder.warning
            assert 'trustindex_snapshot_load_failures_total{stage="expired"} 1.0' in c.get("/metrics").text
            assert not (tmp_path / "cache" / SNAPSHOTS_DIR / b).exists()  # refused from its manifest: not downloaded


def test_max_snapshot_age_holds_for_an_unsigned_data_directory(refreshed):
    old = SourceSpec(data=str(refreshed["data"]), max_snapshot_age=0.001).holder()
    assert old.poll() and not old.ready() and "--max-snapshot-age" in old.notice()
    young = SourceSpec(data=str(refreshed["data"]), max_snapshot_age=parse_duration("30d", "x")).holder()
    assert young.poll() and young.ready() and young.notice() is None
