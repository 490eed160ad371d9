"""Manifest, content-derived ids, verification and the atomic CURRENT swap."""

import json

import pytest

from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import read_manifest, resolve_current, verify_snapshot
from trustindex.warehouse.snapshots import (
    current_id,
    finish_snapshot,
    gc,
    list_snapshots,
    new_build_dir,
    rollback,
    set_current,
)


def build(data, payload: str):
    d = new_build_dir(data)
    (d / "chunks.parquet").write_text(payload)
    (d / "bm25").mkdir()
    (d / "bm25" / "vocab.index.json").write_text("{}")
    return finish_snapshot(
        data,
        d,
        sources=[{"name": "s", "commit": "abc"}],
        embedding_model={"dimensions": 3},
        row_counts={"chunks": 1},
        build_policy_id="sha256:x",
    )


def test_id_is_derived_from_content(tmp_path):
    a = build(tmp_path, "one")
    b = build(tmp_path, "one")
    c = build(tmp_path, "two")
    assert a.snapshot_id == b.snapshot_id != c.snapshot_id
    assert len(list_snapshots(tmp_path)) == 2
    assert not [p for p in (tmp_path / "snapshots").iterdir() if p.name.startswith(".tmp-")]


def test_manifest_lists_every_file_with_checksum(tmp_path):
    m = build(tmp_path, "x")
    snap = tmp_path / "snapshots" / m.snapshot_id
    on_disk = json.loads((snap / "manifest.json").read_text())
    assert set(on_disk["files"]) == {"chunks.parquet", "bm25/vocab.index.json"}
    assert on_disk["files"]["chunks.parquet"]["size"] == 1
    for key in (
        "schema_version",
        "snapshot_id",
        "parent",
        "created_at",
        "sources",
        "embedding_model",
        "row_counts",
        "files",
    ):
        assert key in on_disk
    assert verify_snapshot(snap).snapshot_id == m.snapshot_id


def test_current_swap_and_parent(tmp_path):
    a = build(tmp_path, "a")
    set_current(tmp_path, a.snapshot_id)
    b = build(tmp_path, "b")
    assert b.parent == a.snapshot_id
    set_current(tmp_path, b.snapshot_id)
    assert resolve_current(tmp_path).name == b.snapshot_id
    assert not list(tmp_path.glob(".CURRENT*"))  # no temp file left behind
    assert rollback(tmp_path) == a.snapshot_id
    assert current_id(tmp_path) == a.snapshot_id
    with pytest.raises(SnapshotError):
        set_current(tmp_path, "0000000000000000")


@pytest.mark.parametrize("damage", ["flip", "truncate", "extra", "delete"])
def test_corruption_is_refused(tmp_path, damage):
    m = build(tmp_path, "payload")
    snap = tmp_path / "snapshots" / m.snapshot_id
    f = snap / "chunks.parquet"
    if damage == "flip":
        data = bytearray(f.read_bytes())
        data[0] ^= 0x01
        f.write_bytes(bytes(data))
    elif damage == "truncate":
        f.write_text("pay")
    elif damage == "extra":
        (snap / "evil.parquet").write_text("x")
    else:
        f.unlink()
    with pytest.raises(SnapshotError, match=m.snapshot_id):
        verify_snapshot(snap)


def test_gc_keeps_live_and_retention(tmp_path):
    ids = []
    for i in range(4):
        m = build(tmp_path, f"p{i}")
        set_current(tmp_path, m.snapshot_id)
        ids.append(m.snapshot_id)
    set_current(tmp_path, ids[0])
    new_build_dir(tmp_path)  # an orphan from a crash
    removed = gc(tmp_path, keep=2)
    left = {m.snapshot_id for m in list_snapshots(tmp_path)}
    assert ids[0] in left and ids[3] in left and len(left) == 3
    assert any(r.startswith(".tmp-") for r in removed)
    assert read_manifest(tmp_path / "snapshots" / ids[0]).snapshot_id == ids[0]
