"""A swap under load, end to end: ``trustindex export`` publishes to a target (a directory, or S3 on a moto
server on loopback), ``trustindex serve --from TARGET`` runs as its own process and pulls it; while 8 clients
query, a new snapshot is exported and the server swaps to it; then a corrupted export (one flipped byte, with
the target's CURRENT naming it) is never served.

Per client: no failed request, every response names one snapshot id, the ids switch once and never back.
"""

from __future__ import annotations

import shutil
import threading
import time

import httpx
import pytest

from bench.serve_load import twin
from tests.kits.servekit import ServeProcess, export, moto_s3
from trustindex.schemas.snapshot import CURRENT, SNAPSHOTS_DIR, resolve_current

pytestmark = pytest.mark.serving_load

CLIENTS = 8
AFTER_SWITCH = 5  # answers a client still asks for once it has seen the new snapshot


@pytest.fixture(scope="module")
def s3():
    with moto_s3() as url:
        yield url


def target_fs(to: str, endpoint: str | None):
    """The target as a pyarrow filesystem and its base path (to place a corrupted copy the way a broken
    uploader would: ``trustindex export`` itself refuses to publish one)."""
    import pyarrow.fs as pafs

    if to.startswith("s3://"):
        host = endpoint.partition("://")[2]
        return pafs.S3FileSystem(endpoint_override=host, scheme="http"), to[len("s3://") :]
    return pafs.LocalFileSystem(), to


def hammer(url: str, first: str, deadline: float):
    """CLIENTS threads querying until each has seen AFTER_SWITCH answers from another snapshot than ``first``
    (or the deadline, or 2000 requests each); their ids in order, and every failure."""
    seen: list[list[str]] = [[] for _ in range(CLIENTS)]
    failures: list[tuple] = []

    def client(n: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            for j in range(2000):
                if time.monotonic() > deadline or (len(seen[n]) >= AFTER_SWITCH and seen[n][-AFTER_SWITCH] != first):
                    return
                try:
                    r = c.post("/v1/search", json={"query": f"counter {j % 7}", "k": 3})
                except httpx.TransportError as e:
                    failures.append((n, type(e).__name__))
                    continue
                if r.status_code != 200:
                    failures.append((n, r.status_code, r.text))
                    continue
                seen[n].append(r.json()["snapshot_id"])
                time.sleep(0.01)  # paced: the swap (download, verify, warm) needs the cores too

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    return threads, seen, failures


@pytest.mark.parametrize("kind", ["dir", "s3"])
def test_swap_under_load_then_a_corrupted_export_is_never_served(kind, refreshed, tmp_path, request, capsys):
    endpoint = request.getfixturevalue("s3") if kind == "s3" else None
    to = "s3://swap-tier/prod/ti" if kind == "s3" else str(tmp_path / "target")
    data = tmp_path / "data"  # the build's data directory: a copy, the shared fixture stays untouched
    live = resolve_current(refreshed["data"])
    shutil.copytree(live, data / SNAPSHOTS_DIR / live.name)
    (data / CURRENT).write_text(live.name + "\n")
    first, second = live.name, twin(data, live.name, "gzip")
    export(data, first, to, endpoint, capsys)

    args = ["--from", to, "--cache", str(tmp_path / "cache")] + (["--endpoint", endpoint] if endpoint else [])
    with ServeProcess(args, tmp_path / "serve.log", ready_timeout_s=180) as server:
        threads, seen, failures = hammer(server.url, first, time.monotonic() + 240)
        while min(len(s) for s in seen) < 3 and any(t.is_alive() for t in threads):
            time.sleep(0.05)  # every client has answers from the first snapshot before the export
        export(data, second, to, endpoint, capsys)
        for t in threads:
            t.join(timeout=300)
        assert failures == []
        for n, ids in enumerate(seen):
            assert ids and ids[0] == first and ids[-1] == second, f"client {n}: {ids[:3]} … {ids[-3:]}"
            switch = ids.index(second)
            assert set(ids[:switch]) == {first} and set(ids[switch:]) == {second}, f"client {n} flipped back"

        # A corrupted export: a third snapshot's files with one flipped byte, CURRENT naming it.
        bad = twin(data, first, "zstd")
        victim = data / SNAPSHOTS_DIR / bad / "chunks.parquet"
        flipped = bytearray(victim.read_bytes())
        flipped[len(flipped) // 2] ^= 0x01
        victim.write_bytes(bytes(flipped))
        fs, base = target_fs(to, endpoint)
        import pyarrow.fs as pafs

        pafs.copy_files(str(data / SNAPSHOTS_DIR / bad), f"{base}/{SNAPSHOTS_DIR}/{bad}", destination_filesystem=fs)
        with fs.open_output_stream(f"{base}/{CURRENT}") as out:
            out.write(f"{bad}\n".encode())
        with httpx.Client(base_url=server.url, timeout=60) as c:
            deadline, metrics = time.monotonic() + 120, ""
            while 'trustindex_snapshot_load_failures_total{stage="download"} 1.0' not in metrics:
                assert time.monotonic() < deadline, f"the corrupted export was not tried:\n{metrics}"
                time.sleep(0.2)
                metrics = c.get("/metrics").text
            for _ in range(5):  # still the second snapshot, never the corrupted one
                assert c.post("/v1/search", json={"query": "counter", "k": 3}).json()["snapshot_id"] == second
            assert f'trustindex_snapshot_info{{snapshot_id="{second}"}} 1.0' in metrics
            assert "trustindex_snapshot_swaps_total 2.0" in metrics
            snap = c.get("/v1/snapshot").json()
            assert snap["snapshot_id"] == second and bad in snap["warning"] and "sha256" in snap["warning"]
            assert c.get("/readyz").json()["snapshot_id"] == second
    log = (tmp_path / "serve.log").read_text()
    assert f"serving snapshot {second}" in log
    assert f"names '{bad}', which failed to download" in log and "chunks.parquet" in log
    assert not (tmp_path / "cache" / SNAPSHOTS_DIR / bad).exists()
