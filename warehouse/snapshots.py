"""Publishing and managing snapshots (dlt's model: commit by renaming a finished temp folder).

publish: write every file into ``snapshots/.tmp-*``, fsync files, compute the
content-derived id, write the manifest, fsync, rename the folder to its id,
then replace ``CURRENT`` atomically (temp file, fsync, ``os.replace``, fsync
the directory).  A crash at any point leaves ``CURRENT`` naming a complete
snapshot; ``gc`` removes what a crash left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from trustindex.runtime.durable import fsync_path, replace_durably
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import (
    CURRENT,
    MANIFEST,
    SNAPSHOTS_DIR,
    Manifest,
    list_files,
    read_current,
    read_manifest,
    snapshot_id_from_files,
    verify_snapshot,
)


def new_build_dir(data_dir: Path) -> Path:
    root = Path(data_dir) / SNAPSHOTS_DIR
    root.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
    d.chmod(0o755)  # mkdtemp makes it 0700; a serving tier may run as another user
    return d


def current_id(data_dir: Path) -> str | None:
    return read_current(data_dir)


def set_current(data_dir: Path, snapshot_id: str) -> None:
    data_dir = Path(data_dir)
    if not (data_dir / SNAPSHOTS_DIR / snapshot_id / MANIFEST).is_file():
        raise SnapshotError(f"snapshot {snapshot_id} does not exist in {data_dir}")
    replace_durably(data_dir / CURRENT, (snapshot_id + "\n").encode(), data_dir / f".{CURRENT}.{os.getpid()}.tmp")


def finish_snapshot(
    data_dir: Path,
    build_dir: Path,
    *,
    sources: list[dict],
    embedding_model: dict,
    row_counts: dict[str, int],
    build_policy_id: str,
    extra: dict | None = None,
    known_sha256: dict[str, str] | None = None,
) -> Manifest:
    """Seal a build directory as a snapshot (without moving CURRENT); idempotent by content.

    ``known_sha256``: files hashed already in this process (``warehouse.build.linked_sha256``), not read again."""
    data_dir, build_dir = Path(data_dir), Path(build_dir)
    for p in build_dir.rglob("*"):
        if p.is_file():
            fsync_path(p)
    files = list_files(build_dir, known_sha256)
    sid = snapshot_id_from_files(files)
    final = data_dir / SNAPSHOTS_DIR / sid
    if final.is_dir():
        shutil.rmtree(build_dir, ignore_errors=True)
        return verify_snapshot(final)
    manifest = Manifest(
        snapshot_id=sid,
        created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        sources=sources,
        embedding_model=embedding_model,
        row_counts=row_counts,
        files=files,
        parent=current_id(data_dir),
        build_policy_id=build_policy_id,
        extra=extra or {},
    )
    with open(build_dir / MANIFEST, "w", encoding="utf-8") as f:
        f.write(manifest.to_json())
        f.flush()
        os.fsync(f.fileno())
    for d in [build_dir, *[p for p in build_dir.rglob("*") if p.is_dir()]]:
        fsync_path(d)
    os.rename(build_dir, final)
    fsync_path(final.parent)
    return manifest


def list_snapshots(data_dir: Path) -> list[Manifest]:
    root = Path(data_dir) / SNAPSHOTS_DIR
    out = []
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if d.is_dir() and not d.name.startswith("."):
            try:
                out.append(read_manifest(d))
            except SnapshotError:
                continue
    return sorted(out, key=lambda m: (m.created_at, m.snapshot_id))


def rollback(data_dir: Path, to: str | None = None) -> str:
    """Point CURRENT at ``to`` (verified first), or at the live snapshot's parent."""
    data_dir = Path(data_dir)
    target = to
    if target is None:
        cur = current_id(data_dir)
        if cur is None:
            raise SnapshotError(f"{data_dir}: nothing to roll back (no CURRENT)")
        target = read_manifest(data_dir / SNAPSHOTS_DIR / cur).parent
        if not target:
            raise SnapshotError(f"snapshot {cur} has no parent to roll back to; name one")
    verify_snapshot(data_dir / SNAPSHOTS_DIR / target)
    set_current(data_dir, target)
    return target


def gc(data_dir: Path, keep: int) -> list[str]:
    """Remove temp folders and all but the newest ``keep`` snapshots (never the live one)."""
    data_dir = Path(data_dir)
    root = data_dir / SNAPSHOTS_DIR
    removed = []
    for d in root.iterdir() if root.is_dir() else []:
        if d.name.startswith(".tmp-") or d.name.startswith(".export-"):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    for stray in data_dir.glob(f".{CURRENT}.*.tmp"):
        stray.unlink(missing_ok=True)
        removed.append(stray.name)
    live = current_id(data_dir)
    snaps = list_snapshots(data_dir)
    keepers = {m.snapshot_id for m in snaps[-keep:]} | ({live} if live else set())
    for m in snaps:
        if m.snapshot_id not in keepers:
            # Out of its id first (atomic): a crash mid-delete leaves a .tmp-* for the next gc, never a torn snapshot.
            os.rename(root / m.snapshot_id, doomed := root / f".tmp-gc-{m.snapshot_id}")
            shutil.rmtree(doomed, ignore_errors=True)
            removed.append(m.snapshot_id)
    return removed


def snapshot_summary(m: Manifest, live: str | None) -> dict:
    return {
        "snapshot_id": m.snapshot_id,
        "live": m.snapshot_id == live,
        "created_at": m.created_at,
        "parent": m.parent,
        "sources": {s.get("source", s.get("name")): s.get("commit") for s in m.sources},
        "row_counts": m.row_counts,
    }


def manifest_dict(m: Manifest) -> dict:
    return json.loads(m.to_json())
