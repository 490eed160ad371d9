"""Snapshot export to a serving tier: a local directory and S3 (a real S3-speaking server on loopback).

The S3 server is moto's (``ThreadedMotoServer``), reached over HTTP by pyarrow's S3 client, as a
production bucket would be.  A failed upload is injected with a real pyarrow filesystem
(``PyFileSystem``) that flips a byte of one object on its way to the target.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from tests.kits.servekit import S3_ENV, moto_s3
from trustindex.schemas.snapshot import file_sha256, read_manifest, resolve_current, verify_snapshot
from trustindex.warehouse.export import ExportError, Target, export_snapshot, export_to_target, open_target
from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

ROOT = Path(__file__).resolve().parents[2]


def build(data: Path, payload: str) -> str:
    d = new_build_dir(data)
    (d / "chunks.parquet").write_text(payload * 50)
    (d / "embeddings.npy").write_bytes(os.urandom(3000))
    (d / "bm25").mkdir()
    (d / "bm25" / "vocab.index.json").write_text('{"a": 1}')
    m = finish_snapshot(
        data,
        d,
        sources=[{"name": "s", "commit": "abc"}],
        embedding_model={"dimensions": 3},
        row_counts={"chunks": 1},
        build_policy_id="sha256:x",
    )
    set_current(data, m.snapshot_id)
    return m.snapshot_id


@pytest.fixture(scope="module")
def s3():
    with moto_s3() as url:
        yield url


@pytest.fixture
def data(tmp_path) -> tuple[Path, str]:
    d = tmp_path / "data"
    return d, build(d, "one")


_bucket = iter(range(10_000))


def target_for(kind: str, tmp_path: Path, s3_url: str) -> tuple[str, str | None]:
    if kind == "local":
        return str(tmp_path / "serving" / "tier"), None
    return f"s3://tier-{next(_bucket)}/prod/idx", s3_url  # a fresh bucket per test: no state leaks


def read_bytes(t: Target, *parts: str) -> bytes:
    with t.fs.open_input_stream(t.path(*parts)) as f:
        return f.read()


def download(t: Target, sid: str, dest: Path) -> Path:
    """Copy the exported snapshot to a local directory so the contract's own verifier can check it."""
    out = dest / "snapshots" / sid
    root = t.path("snapshots", sid)
    for info in t.fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        if info.type == pafs.FileType.File:
            p = out / info.path[len(root) + 1 :]
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(read_bytes(t, "snapshots", sid, info.path[len(root) + 1 :]))
    return out


def has_current(t: Target) -> bool:
    return t.fs.get_file_info(t.path("CURRENT")).type == pafs.FileType.File


class FlipOnUpload(pafs.FileSystemHandler):
    """A real filesystem (delegating to another) that corrupts one file as it is written: a bad upload."""

    def __init__(self, inner: pafs.FileSystem, victim: str):
        self.inner, self.victim = inner, victim

    def open_output_stream(self, path, metadata):
        real = self.inner.open_output_stream(path)
        if not path.endswith("/" + self.victim):
            return real

        class Flip:
            closed = False

            def write(self, b):
                b = bytearray(b)
                if b:
                    b[0] ^= 0x01
                real.write(bytes(b))
                return len(b)

            def flush(self):
                real.flush()

            def close(self):
                real.close()
                self.closed = True

        return pa.PythonFile(Flip(), mode="w")

    def get_type_name(self):
        return "flip-on-upload"

    def equals(self, other):
        return self is other

    def normalize_path(self, path):
        return self.inner.normalize_path(path)

    def get_file_info(self, paths):
        return self.inner.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.inner.get_file_info(selector)

    def create_dir(self, path, recursive):
        self.inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.inner.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise NotImplementedError

    def delete_file(self, path):
        self.inner.delete_file(path)

    def move(self, src, dest):
        self.inner.move(src, dest)

    def copy_file(self, src, dest):
        self.inner.copy_file(src, dest)

    def open_input_stream(self, path):
        return self.inner.open_input_stream(path)

    def open_input_file(self, path):
        return self.inner.open_input_file(path)

    def open_append_stream(self, path, metadata):
        return self.inner.open_append_stream(path)


KINDS = ["local", "s3"]


@pytest.mark.parametrize("kind", KINDS)
def test_export_publishes_a_verified_copy(kind, data, tmp_path, s3):
    data_dir, sid = data
    to, endpoint = target_for(kind, tmp_path, s3)
    result = export_snapshot(data_dir, sid, to, endpoint=endpoint)
    manifest = read_manifest(data_dir / "snapshots" / sid)
    assert result["snapshot_id"] == sid
    assert result["files"] == len(manifest.files) + 1 == 4  # three files and the manifest
    assert result["uploaded"] == 3 and result["reused"] == 0 and result["previous"] is None
    t = open_target(to, endpoint)
    assert result["target"] == t.label
    assert read_bytes(t, "CURRENT") == (sid + "\n").encode()
    copy = download(t, sid, tmp_path / "check")
    assert verify_snapshot(copy).snapshot_id == sid  # the contract's own check on what the tier holds
    for name, meta in manifest.files.items():
        assert file_sha256(copy / name) == meta["sha256"]
    if kind == "local":
        assert resolve_current(to).name == sid  # a local tier opens like a data directory
        assert not list(Path(to).glob(".CURRENT*"))


@pytest.mark.parametrize("kind", KINDS)
def test_reexport_is_idempotent_and_moves_current(kind, data, tmp_path, s3):
    data_dir, first = data
    to, endpoint = target_for(kind, tmp_path, s3)
    export_snapshot(data_dir, first, to, endpoint=endpoint)
    t = open_target(to, endpoint)
    before = {i.path: i.mtime_ns for i in t.fs.get_file_info(pafs.FileSelector(t.base, recursive=True))}
    again = export_snapshot(data_dir, first, to, endpoint=endpoint)
    assert (again["uploaded"], again["reused"], again["bytes_uploaded"], again["previous"]) == (0, 3, 0, first)
    if kind == "local":  # nothing rewritten but CURRENT
        after = {i.path: i.mtime_ns for i in t.fs.get_file_info(pafs.FileSelector(t.base, recursive=True))}
        assert {p: m for p, m in after.items() if not p.endswith("CURRENT")} == {
            p: m for p, m in before.items() if not p.endswith("CURRENT")
        }
    second = build(data_dir, "two")  # shares bm25/vocab.index.json with the first
    r = export_snapshot(data_dir, "current", to, endpoint=endpoint)
    assert (r["snapshot_id"], r["previous"], r["uploaded"]) == (second, first, 3)
    assert read_bytes(t, "CURRENT").decode().strip() == second
    assert verify_snapshot(download(t, first, tmp_path / "old")).snapshot_id == first  # old copy still whole


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("live_before", [False, True])
def test_corrupted_upload_never_becomes_current(kind, live_before, data, tmp_path, s3):
    data_dir, first = data
    to, endpoint = target_for(kind, tmp_path, s3)
    if live_before:
        export_snapshot(data_dir, first, to, endpoint=endpoint)
    sid = build(data_dir, "second")
    real = open_target(to, endpoint)
    flaky = Target(
        fs=pafs.PyFileSystem(FlipOnUpload(real.fs, "chunks.parquet")),
        base=real.base,
        label=real.label,
        local=real.local,
    )
    with pytest.raises(ExportError, match=rf"{sid} to .*chunks\.parquet fails its sha256 check") as e:
        export_to_target(data_dir, sid, flaky)
    assert "\n" not in str(e.value) and real.label in str(e.value)
    if live_before:
        assert read_bytes(real, "CURRENT").decode().strip() == first
    else:
        assert not has_current(real)
    assert real.fs.get_file_info(real.path("snapshots", sid, "manifest.json")).type == pafs.FileType.NotFound
    fixed = export_to_target(data_dir, sid, real)  # a clean re-run repairs only the bad file
    assert (fixed["uploaded"], fixed["reused"]) == (1, 2)
    assert read_bytes(real, "CURRENT").decode().strip() == sid
    assert verify_snapshot(download(real, sid, tmp_path / "fixed")).snapshot_id == sid


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_target_copy_is_repaired(kind, data, tmp_path, s3):
    data_dir, sid = data
    to, endpoint = target_for(kind, tmp_path, s3)
    export_snapshot(data_dir, sid, to, endpoint=endpoint)
    t = open_target(to, endpoint)
    good = read_bytes(t, "snapshots", sid, "embeddings.npy")
    with t.fs.open_output_stream(t.path("snapshots", sid, "embeddings.npy")) as f:  # same size, wrong bytes
        f.write(bytes([good[0] ^ 0xFF]) + good[1:])
    with t.fs.open_output_stream(t.path("snapshots", sid, "stray.parquet")) as f:
        f.write(b"not listed")
    r = export_snapshot(data_dir, sid, to, endpoint=endpoint)
    assert (r["uploaded"], r["reused"], r["removed"]) == (1, 2, 1)
    assert verify_snapshot(download(t, sid, tmp_path / "repaired")).snapshot_id == sid


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("damage", ["flip", "truncate", "extra"])
def test_corrupt_local_snapshot_is_refused(kind, damage, data, tmp_path, s3):
    data_dir, sid = data
    snap = data_dir / "snapshots" / sid
    f = snap / "chunks.parquet"
    if damage == "flip":
        b = bytearray(f.read_bytes())
        b[10] ^= 0x01
        f.write_bytes(bytes(b))
    elif damage == "truncate":
        f.write_bytes(f.read_bytes()[:-1])
    else:
        (snap / "evil.parquet").write_text("x")
    to, endpoint = target_for(kind, tmp_path, s3)
    with pytest.raises(ExportError, match=rf"snapshot {sid} to .*fails verification.*nothing was uploaded"):
        export_snapshot(data_dir, sid, to, endpoint=endpoint)
    t = open_target(to, endpoint)
    assert not has_current(t)
    assert t.fs.get_file_info(t.path("snapshots")).type == pafs.FileType.NotFound


@pytest.mark.parametrize(
    "case, pattern",
    [
        ("unknown-id", r"snapshot 0123456789abcdef to .*no such snapshot.*snapshots list"),
        ("not-an-id", r"'\.\./x'.*not a snapshot id"),
        ("no-current", r"has no CURRENT; run `trustindex refresh`"),
        ("target-is-file", r"target exists and is not a directory"),
        ("target-is-data-dir", r"target is the data directory itself"),
        ("bad-scheme", r"^export of snapshot \w{16} to gs://b/x: unsupported scheme; use a directory"),
        ("short-bucket", r"^export of snapshot \w{16} to s3://ab/x: bucket name 'ab' is too short"),
        ("bad-endpoint", r"^export of snapshot \w{16} to s3://abc/x: endpoint 'ftp://x': expected http.*; fix"),
        (
            "unreachable",
            r"to s3://tier-down/p: .* failed \(.*\); the target's CURRENT was not changed; check the endpoint",
        ),
    ],
)
def test_bad_input_is_one_clear_line(case, pattern, data, tmp_path, s3):
    data_dir, sid = data
    args = {
        "unknown-id": ("0123456789abcdef", str(tmp_path / "t"), None),
        "not-an-id": ("../x", str(tmp_path / "t"), None),
        "no-current": ("current", str(tmp_path / "t"), None),
        "target-is-file": (sid, str(data_dir / "CURRENT"), None),
        "target-is-data-dir": (sid, str(data_dir), None),
        "bad-scheme": (sid, "gs://b/x", None),
        "short-bucket": (sid, "s3://ab/x", s3),
        "bad-endpoint": (sid, "s3://abc/x", "ftp://x"),
        "unreachable": (sid, "s3://tier-down/p", "http://127.0.0.1:1"),
    }[case]
    if case == "no-current":
        (data_dir / "CURRENT").unlink()
    with pytest.raises(ExportError, match=pattern) as e:
        export_snapshot(data_dir, *args)
    assert "\n" not in str(e.value)


def run_cli(*argv: str, env_extra: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    env.update(S3_ENV, **env_extra, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_export_to_s3_and_refusal(data, s3):
    data_dir, sid = data
    ok = run_cli("export", sid, "--to", "s3://cli-tier/idx", "--endpoint", s3, "--data", str(data_dir), env_extra={})
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == f"exported snapshot {sid} to s3://cli-tier/idx (4 files verified)"
    # --endpoint defaults to AWS_ENDPOINT_URL, as the AWS CLI does
    again = run_cli(
        "export",
        sid,
        "--to",
        "s3://cli-tier/idx",
        "--data",
        str(data_dir),
        "--json",
        env_extra={"AWS_ENDPOINT_URL": s3},
    )
    assert again.returncode == 0, again.stderr
    assert '"uploaded": 0' in again.stdout and f'"previous": "{sid}"' in again.stdout
    (data_dir / "snapshots" / sid / "embeddings.npy").write_bytes(b"x")
    bad = run_cli("export", sid, "--to", "s3://cli-tier/idx", "--endpoint", s3, "--data", str(data_dir), env_extra={})
    assert bad.returncode == 1
    assert bad.stderr.strip().count("\n") == 0
    assert bad.stderr.startswith(f"trustindex export: export of snapshot {sid} to s3://cli-tier/idx")
