"""Signed exports and pulls that cannot leave the cache (issue 27): hostile exports built by the tests (forged tiers
and phishing text re-hashed, CURRENT traversal, manifest traversal, links, oversized tables) against the real pull
(serve/pull.py), ``Index.open`` and ``trustindex serve`` over HTTP on loopback.  docs/serving.md's threat model
names the test covering each line."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from bench.serve_load import twin
from tests.kits.exportkit import PHISHING, fake_entry, forge_trust, inflate_documents, rehash
from tests.kits.servekit import Running
from trustindex.cli.main import main as cli
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.signing import SignatureError, load_trusted_keys
from trustindex.schemas.snapshot import CURRENT, MANIFEST, SIGNATURE, SNAPSHOTS_DIR, resolve_current, verify_snapshot
from trustindex.serve.http_app import ServeConfig
from trustindex.serve.live import DataDirSource, SnapshotHolder
from trustindex.serve.pull import ExportSource, sweep_partials
from trustindex.warehouse.export import export_snapshot

pytestmark = pytest.mark.serving_load

MEMORY_BOUND_MIB = 32  # what a refused pull may add to a server's peak RSS (docs/serving.md, threat model)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict:
    out = {}
    for name in ("operator", "rotated", "stranger"):
        d = tmp_path_factory.mktemp(f"keys-{name}")
        assert cli(["keys", "generate", "--out", str(d)]) == 0
        out[name] = (d / "signing.key", d / "signing.pub")
    return out


@pytest.fixture
def signed(refreshed, keys, tmp_path) -> tuple[Path, str]:
    """The demo snapshot exported to a directory target, signed with the operator's key."""
    target = tmp_path / "export"
    result = export_snapshot(refreshed["data"], "current", str(target), sign_key=keys["operator"][0])
    assert result["signed_by"] == load_trusted_keys([keys["operator"][1]])[0].key_id
    return target, result["snapshot_id"]


def _holder(target: Path, cache: Path, *pubs: Path) -> SnapshotHolder:
    trusted = load_trusted_keys(pubs)
    return SnapshotHolder(ExportSource(str(target), cache, trusted=trusted), trusted_keys=trusted)


def test_keys_generate_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path, capsys):
    assert cli(["keys", "generate", "--out", str(tmp_path / "k")]) == 0
    assert stat.S_IMODE((tmp_path / "k" / "signing.key").stat().st_mode) == 0o600
    assert "key id" in capsys.readouterr().out
    before = (tmp_path / "k" / "signing.key").read_bytes()
    assert cli(["keys", "generate", "--out", str(tmp_path / "k")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "already exists" in err
    assert (tmp_path / "k" / "signing.key").read_bytes() == before


def test_a_forged_export_is_refused_by_a_pinned_server_and_by_index_open(signed, keys, tmp_path):
    target, good = signed
    holder = _holder(target, tmp_path / "cache", keys["operator"][1])
    assert holder.poll() and holder.served.index.data.signed_by is not None
    # The attack of issue 27: tiers rewritten, a passage replaced by phishing, the manifest re-hashed.
    forged = rehash(target, good, forge_trust)
    assert not holder.poll()
    assert holder.served.index.snapshot_id == good
    assert "signature does not match the manifest" in holder.warning and "\n" not in holder.warning
    assert not (tmp_path / "cache" / SNAPSHOTS_DIR / forged).exists()  # only the manifest and its signature read
    # Index.open refuses it under every pinned key, and with the forger's own key the operator does not pin.
    with pytest.raises(SignatureError, match="does not match the manifest"):
        from trustindex.query.index import Index

        Index.open(target / SNAPSHOTS_DIR / forged, trusted_keys=[keys["operator"][1], keys["rotated"][1]])
    unsigned = rehash(target, good, forge_trust, keep_signature=False)
    with pytest.raises(SignatureError, match="unsigned"):
        Index.open(target / SNAPSHOTS_DIR / unsigned, trusted_keys=[keys["operator"][1]])
    holder._failed = None  # the retry pause is the holder's own; the next CURRENT is what is tried
    assert not holder.poll() and "unsigned" in holder.warning
    # Unpinned, the same export opens (that is what a signature is for), and says it is not signed.
    assert Index.open(target / SNAPSHOTS_DIR / forged).data.signed_by is None


def test_a_stranger_key_and_key_rotation(refreshed, keys, tmp_path):
    target = tmp_path / "export"
    sid = export_snapshot(refreshed["data"], "current", str(target), sign_key=keys["stranger"][0])["snapshot_id"]
    holder = _holder(target, tmp_path / "cache", keys["operator"][1])
    assert not holder.poll() and "not trusted" in holder.warning
    export_snapshot(refreshed["data"], sid, str(target), sign_key=keys["rotated"][0])
    rotated = _holder(target, tmp_path / "cache2", keys["operator"][1], keys["rotated"][1])
    assert rotated.poll() and rotated.served.index.data.signed_by == load_trusted_keys([keys["rotated"][1]])[0].key_id


def test_pinned_server_refuses_the_forgery_over_http_and_swaps_a_signed_export_under_load(
    signed, keys, refreshed, tmp_path
):
    target, first = signed
    data = tmp_path / "data"  # the second snapshot is made beside a copy of the first, not in the shared data dir
    shutil.copytree(refreshed["data"] / SNAPSHOTS_DIR / first, data / SNAPSHOTS_DIR / first)
    second = twin(data, first, "gzip")
    holder = _holder(target, tmp_path / "cache", keys["operator"][1])
    with Running(holder, ServeConfig()) as server:
        stop, seen, failed = threading.Event(), [], []

        def client():
            with httpx.Client(base_url=server.url, timeout=60) as c:
                for _ in range(400):  # bounded: at most 400 requests or until told to stop
                    if stop.is_set():
                        return
                    r = c.post("/v1/search", json={"query": "counter", "k": 3})
                    (seen if r.status_code == 200 else failed).append(r.json().get("snapshot_id", r.text))

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        forged = rehash(target, first, forge_trust)
        deadline = time.monotonic() + 60
        while holder.warning is None and time.monotonic() < deadline:
            holder.poll()
            time.sleep(0.05)
        with httpx.Client(base_url=server.url, timeout=30) as c:
            metrics = c.get("/metrics").text
            assert 'trustindex_snapshot_load_failures_total{stage="signature"} 1.0' in metrics
            body = c.post("/v1/search", json={"query": "seed phrase wallet", "k": 5}).json()
            assert body["snapshot_id"] == first and body["signed"] is True
            assert all(PHISHING not in h.get("text", "") for h in body["hits"])
        export_snapshot(data, second, str(target), sign_key=keys["operator"][0])
        deadline = time.monotonic() + 120
        while holder.current != second and time.monotonic() < deadline:
            holder.poll()
            time.sleep(0.05)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=120)
        snap = httpx.get(f"{server.url}/v1/snapshot", timeout=30).json()
    assert not failed, failed[:3]
    assert forged not in seen and set(seen) == {first, second}
    assert snap["snapshot_id"] == second and snap["signed"] is True and snap["signed_by"]


def test_an_unsigned_data_dir_still_serves_and_says_so(refreshed):
    with Running(SnapshotHolder(DataDirSource(refreshed["data"])), ServeConfig()) as server:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            assert c.get("/v1/snapshot").json()["signed"] is False
            assert c.post("/v1/search", json={"query": "counter", "k": 2}).json()["signed"] is False


def test_a_current_inside_a_pulled_snapshot_means_nothing(refreshed, tmp_path):
    """A CURRENT file (and a snapshots/ folder) inside the snapshot, listed in its manifest: the server serves the
    exported snapshot itself, never what that CURRENT names."""
    data = refreshed["data"]
    target = tmp_path / "export"
    good = export_snapshot(data, "current", str(target))["snapshot_id"]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(target / SNAPSHOTS_DIR / good, elsewhere / SNAPSHOTS_DIR / good)

    def plant(work: Path) -> None:
        (work / CURRENT).write_text("../" * 12 + str(elsewhere).lstrip("/") + "\n")
        shutil.copytree(target / SNAPSHOTS_DIR / good, work / SNAPSHOTS_DIR / "0123456789abcdef")

    hostile = rehash(target, good, plant)
    holder = SnapshotHolder(ExportSource(str(target), tmp_path / "cache"))
    assert holder.poll(), holder.warning
    assert holder.served.index.snapshot_id == hostile
    assert holder.served.index.data.dir == tmp_path / "cache" / SNAPSHOTS_DIR / hostile
    (target / CURRENT).write_text("../" * 12 + "etc\n")  # and the target's own CURRENT may name only an id
    holder._failed = None
    assert not holder.poll() and "not a snapshot id" in holder.warning


@pytest.mark.parametrize("name", ["../../../../../../etc/hostname", "/etc/hostname", "a/../../b", "./x", "a//b"])
def test_manifest_names_outside_the_snapshot_are_refused_before_any_stat(refreshed, tmp_path, name):
    """The same refusal whether the named file exists or not: no size, no "missing", no existence oracle."""
    target = tmp_path / "export"
    good = export_snapshot(refreshed["data"], "current", str(target))["snapshot_id"]
    messages = []
    for present in (name, name.replace("hostname", "no-such-file-27")):
        sid = rehash(target, good, lambda w: None, files_edit=lambda f, n=present: f.update({n: fake_entry(12)}))
        holder = SnapshotHolder(ExportSource(str(target), tmp_path / f"cache-{len(messages)}"))
        assert not holder.poll()
        messages.append(holder.warning.replace(present, "NAME").replace(sid, "SID"))
        with pytest.raises(SnapshotError, match="not a file name inside a snapshot"):
            verify_snapshot(target / SNAPSHOTS_DIR / sid)
    assert messages[0] == messages[1] and "not a file name inside a snapshot" in messages[0]
    assert "size" not in messages[0] and "missing" not in messages[0]


def test_links_in_a_directory_export_are_refused_not_followed(refreshed, tmp_path):
    target = tmp_path / "export"
    good = export_snapshot(refreshed["data"], "current", str(target))["snapshot_id"]
    outside = tmp_path / "outside"
    shutil.copytree(target / SNAPSHOTS_DIR / good, outside)

    def link_file(work: Path) -> None:
        (work / "chunks.parquet").unlink()
        (work / "chunks.parquet").symlink_to(outside / "chunks.parquet")

    def link_folder(work: Path) -> None:
        shutil.rmtree(work / "bm25")
        (work / "bm25").symlink_to(outside / "bm25", target_is_directory=True)
        (work / "loop1").symlink_to(work / "loop2")  # two self-referencing links: kept a listing busy for 10+ s
        (work / "loop2").symlink_to(work / "loop1")

    for n, edit in enumerate((link_file, link_folder)):
        rehash(target, good, edit)
        holder = SnapshotHolder(ExportSource(str(target), tmp_path / f"cache-{n}"))
        start = time.monotonic()
        assert not holder.poll()
        assert time.monotonic() - start < 30
        assert "links are never followed" in holder.warning, holder.warning
        assert not list((tmp_path / f"cache-{n}").rglob("*.parquet"))  # nothing reached the cache
    with pytest.raises(SnapshotError, match="links are refused"):
        verify_snapshot(target / SNAPSHOTS_DIR / (target / CURRENT).read_text().strip())


def test_a_file_larger_than_listed_and_a_manifest_beyond_the_free_disk_are_not_downloaded(refreshed, tmp_path):
    target = tmp_path / "export"
    good = export_snapshot(refreshed["data"], "current", str(target))["snapshot_id"]

    def understate(files: dict) -> None:
        files["chunks.parquet"] = {**files["chunks.parquet"], "size": 100}

    rehash(target, good, lambda w: None, files_edit=understate)
    holder = SnapshotHolder(ExportSource(str(target), tmp_path / "cache"))
    assert not holder.poll() and "larger than the 100 bytes listed" in holder.warning
    rehash(target, good, lambda w: None, files_edit=lambda f: f.update({"huge.bin": fake_entry(1 << 50)}))
    holder._failed = None
    assert not holder.poll() and re.search(r"needs 11258999\d{8} bytes, the cache .* has \d+ free", holder.warning)
    assert not list((tmp_path / "cache").rglob("*.parquet"))


def test_row_counts_are_checked_against_the_manifest_before_a_table_is_read(refreshed, tmp_path):
    target = tmp_path / "export"
    good = export_snapshot(refreshed["data"], "current", str(target))["snapshot_id"]
    sid = rehash(target, good, lambda w: inflate_documents(w, 300_000))
    assert (target / SNAPSHOTS_DIR / sid / "documents.parquet").stat().st_size < 1 << 20  # small file, big table
    holder = SnapshotHolder(ExportSource(str(target), tmp_path / "cache"))
    assert not holder.poll()
    assert "documents.parquet holds" in holder.warning and "the manifest says" in holder.warning


def test_partial_pulls_of_dead_processes_are_swept_and_retired_snapshots_are_capped(tmp_path):
    cache = tmp_path / "cache"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid in (int(dead.stdout), alive.pid):
            (cache / "partial" / f"0123456789abcdef-{pid}-1" / "bm25").mkdir(parents=True)
        ExportSource(str(tmp_path / "export"), cache)  # start-up sweeps
        assert [p.name for p in (cache / "partial").iterdir()] == [f"0123456789abcdef-{alive.pid}-1"]
    finally:
        alive.kill()
        alive.wait()
    assert sweep_partials(cache) == 1
    snaps = cache / SNAPSHOTS_DIR
    for n in range(5):  # five cached snapshots, oldest first; the oldest is the one being served
        d = snaps / f"{n:016x}"
        d.mkdir(parents=True)
        (d / "blob").write_bytes(b"x" * 1000)
        os.utime(d, (1_000_000 + n, 1_000_000 + n))
    source = ExportSource(str(tmp_path / "export"), cache, keep_retired=2)
    source.cleanup({f"{0:016x}"})
    assert sorted(p.name for p in snaps.iterdir()) == [f"{n:016x}" for n in (0, 3, 4)]
    ExportSource(str(tmp_path / "export"), cache, keep_retired=5, max_bytes=1500).cleanup({f"{0:016x}"})
    assert sorted(p.name for p in snaps.iterdir()) == [f"{n:016x}" for n in (0, 4)]


def test_index_open_reads_current_only_at_a_data_dir_root(refreshed, tmp_path):
    """Index.open of a snapshot directory opens that snapshot, whatever a CURRENT inside it says."""
    from trustindex.query.index import Index

    live = resolve_current(refreshed["data"])
    copy = tmp_path / SNAPSHOTS_DIR / live.name
    shutil.copytree(live, copy)
    (copy / CURRENT).write_text("../../../../etc\n")
    with pytest.raises(SnapshotError, match="unexpected file CURRENT"):
        Index.open(copy)
    assert MANIFEST in os.listdir(copy) and SIGNATURE not in os.listdir(copy)


def _memory_kib(pid: int) -> dict[str, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {k: int(fields[k].split()[0]) for k in ("VmRSS", "VmHWM")}


def test_an_oversized_table_leaves_the_servers_memory_bounded(refreshed, tmp_path):
    """``trustindex serve --from`` as its own process; a 300k-row documents table in a small file is refused from the
    Parquet footer, and the server's peak RSS (VmHWM) does not move by more than MEMORY_BOUND_MIB (it took the
    server of main from 243 to 523 MiB)."""
    from tests.kits.servekit import ServeProcess

    target = tmp_path / "export"
    good = export_snapshot(refreshed["data"], "current", str(target))["snapshot_id"]
    args = ["--from", str(target), "--cache", str(tmp_path / "cache")]
    with ServeProcess(args, tmp_path / "serve.log") as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        assert c.post("/v1/search", json={"query": "counter", "k": 3}).status_code == 200
        before = _memory_kib(srv.proc.pid)
        rehash(target, good, lambda w: inflate_documents(w, 300_000))
        deadline = time.monotonic() + 120
        while 'load_failures_total{stage="verify"} 1.0' not in c.get("/metrics").text:
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-2000:]
            time.sleep(0.2)
        after = _memory_kib(srv.proc.pid)
        assert c.get("/readyz").json()["snapshot_id"] == good
        assert "the manifest says" in c.get("/v1/snapshot").json()["warning"]
    grew = (after["VmHWM"] - before["VmHWM"]) / 1024
    print(f"\npeak RSS {before['VmHWM'] / 1024:.0f} -> {after['VmHWM'] / 1024:.0f} MiB across the hostile pull")
    assert grew < MEMORY_BOUND_MIB, (before, after)


def test_a_signed_export_to_s3_is_served_and_a_manifest_edited_there_is_not(refreshed, keys, tmp_path):
    """The same over a real S3 endpoint (moto's server on loopback): one byte more in the manifest object (still
    valid JSON, its own checksum unchanged) fails the signature."""
    import pyarrow.fs as pafs

    from tests.kits.servekit import moto_s3

    with moto_s3() as endpoint:
        to = "s3://trustindex-signed/live"
        sid = export_snapshot(refreshed["data"], "current", to, endpoint=endpoint, sign_key=keys["operator"][0])[
            "snapshot_id"
        ]
        trusted = load_trusted_keys([keys["operator"][1]])
        source = ExportSource(to, tmp_path / "cache", endpoint=endpoint, trusted=trusted)
        holder = SnapshotHolder(source, trusted_keys=trusted)
        assert holder.poll(), holder.warning
        assert holder.served.index.data.signed_by == trusted[0].key_id
        fs = pafs.S3FileSystem(endpoint_override=endpoint.split("://")[1], scheme="http")
        key = f"trustindex-signed/live/{SNAPSHOTS_DIR}/{sid}/{MANIFEST}"
        with fs.open_input_stream(key) as f:
            raw = f.read()
        with fs.open_output_stream(key) as f:
            f.write(raw + b"\n")
        shutil.rmtree(tmp_path / "cache")
        again = SnapshotHolder(ExportSource(to, tmp_path / "cache", endpoint=endpoint, trusted=trusted))
        assert not again.poll() and "does not match the manifest" in again.warning
