"""Export a snapshot to a serving tier: a directory a server reads, or object storage (S3).

The target gets the same layout as a data directory, so ``query/`` can open it
as one: ``<prefix>/snapshots/<id>/...`` and ``<prefix>/CURRENT``.

Order (the snapshot contract, schemas/snapshot.py; the same commit rule as
``warehouse.snapshots.publish``: nothing is live until it is complete):

1. verify the local snapshot (sizes and sha256 against its manifest);
2. upload every listed file that the target does not already hold with the
   same size and sha256 (re-export is cheap and repairs a damaged copy);
3. read every uploaded file back and check its sha256 against the manifest;
4. upload ``manifest.json`` last and check it the same way;
5. only then write the target's ``CURRENT``.  On a local target that is a temp
   file, fsync and rename (POSIX rename is atomic); on S3 one PUT is atomic per
   object (a reader sees the old or the new object, never a mix — AWS S3 docs,
   "Amazon S3 data consistency model").

A failure at any step leaves the target's ``CURRENT`` as it was, so a reader
never sees a half-exported snapshot.  Filesystems are pyarrow's
(``pyarrow.fs.LocalFileSystem`` / ``S3FileSystem``); S3 credentials come from
the environment through the AWS SDK's default chain (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_DEFAULT_REGION, profiles); this
module sets nothing global.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

from trustindex.runtime.durable import fsync_path, replace_durably
from trustindex.schemas.errors import SnapshotError, TrustIndexError, one_line
from trustindex.schemas.signing import (
    MAX_SIGNATURE_BYTES,
    Freshness,
    SignatureError,
    public_key_of,
    sign_manifest,
    verify_manifest_signature,
)
from trustindex.schemas.signing import signature_key_id as key_id_of
from trustindex.schemas.snapshot import (
    CURRENT,
    MANIFEST,
    SIGNATURE,
    SNAPSHOT_ID,
    SNAPSHOTS_DIR,
    read_current,
    verify_snapshot,
)
from trustindex.warehouse.export_target import ExportError, Target, open_target

_BLOCK = 1 << 20
MAX_MANIFEST_BYTES = 16 << 20  # as a replica reads it (serve/pull.py)


def export_snapshot(
    data_dir: Path | str,
    snapshot_id: str,
    to: str,
    endpoint: str | None = None,
    sign_key: str | Path | None = None,
    valid_for: float | None = None,
) -> dict:
    """Copy snapshot ``snapshot_id`` of ``data_dir`` to ``to`` and make it the target's live snapshot;
    ``sign_key``: an Ed25519 private key file, whose signature over the manifest goes next to it
    (``manifest.sig``, schemas/signing.py) before ``CURRENT`` moves, with the export's sequence (after every
    earlier export to the target) and, with ``valid_for`` seconds, its expiry.

    ``snapshot_id`` may be ``current`` for the data directory's live snapshot.
    Returns ``{"snapshot_id", "target", "files", "uploaded", "reused", "removed", "bytes_uploaded", "previous"}``
    where ``files`` counts every file verified on the target (manifest included) and ``previous`` is what
    the target's CURRENT named before (None if nothing).
    """
    try:
        target = open_target(to, endpoint)
    except ExportError as e:
        raise ExportError(f"export of snapshot {snapshot_id} to {e}") from None
    return export_to_target(data_dir, snapshot_id, target, sign_key, valid_for)


def _local_snapshot(data_dir: Path, snapshot_id: str, label: str) -> tuple[Path, bytes, dict]:
    sid = snapshot_id.strip()
    if sid.lower() == "current":
        live = read_current(data_dir)
        if live is None:
            raise ExportError(
                f"export of the live snapshot to {label}: {data_dir} has no {CURRENT}; run `trustindex refresh` first"
            )
        sid = live
    if not SNAPSHOT_ID.match(sid):
        raise ExportError(
            f"export of snapshot {snapshot_id!r} to {label}: not a snapshot id (16 hex digits); "
            f"list them with `trustindex snapshots list`"
        )
    src = data_dir / SNAPSHOTS_DIR / sid
    if not src.is_dir():
        raise ExportError(
            f"export of snapshot {sid} to {label}: no such snapshot in {data_dir}; "
            f"list them with `trustindex snapshots list`"
        )
    try:
        manifest = verify_snapshot(src)
    except SnapshotError as e:
        raise ExportError(
            f"export of snapshot {sid} to {label}: the local snapshot fails verification ({e}); nothing was uploaded"
        ) from None
    return src, (src / MANIFEST).read_bytes(), manifest.files


def _sha256_on(fs: pafs.FileSystem, path: str) -> str:
    h = hashlib.sha256()
    with fs.open_input_stream(path) as f:
        while block := f.read(_BLOCK):
            h.update(block)
    return h.hexdigest()


def _listing(fs: pafs.FileSystem, root: str) -> dict[str, int]:
    """Relative path -> size of every file under ``root`` on the target (empty when absent)."""
    sel = pafs.FileSelector(root, recursive=True, allow_not_found=True)
    out = {}
    for info in fs.get_file_info(sel):
        if info.type == pafs.FileType.File:
            out[info.path[len(root.rstrip("/")) + 1 :]] = info.size
    return out


def _upload(target: Target, src: Path, dest: str) -> int:
    if target.local is not None:
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(src, "rb") as fin, target.fs.open_output_stream(dest) as out:
        while block := fin.read(_BLOCK):
            out.write(block)
            n += len(block)
    return n


def _upload_bytes(target: Target, payload: bytes, dest: str) -> int:
    with target.fs.open_output_stream(dest) as out:
        out.write(payload)
    return len(payload)


def _write_current(target: Target, snapshot_id: str) -> None:
    payload = (snapshot_id + "\n").encode()
    if target.local is not None:
        replace_durably(target.local / CURRENT, payload, target.local / f".{CURRENT}.export.{os.getpid()}.tmp")
    else:
        # One object PUT: atomic per object on S3, so no temp object and no copy (a copy is not atomic).
        with target.fs.open_output_stream(target.path(CURRENT)) as out:
            out.write(payload)


def _read_current(target: Target) -> str | None:
    path = target.path(CURRENT)
    if target.fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with target.fs.open_input_stream(path) as f:
        return f.read(256).decode("utf-8", "replace").strip() or None


def _freshness(target: Target, sign_key: str | Path, valid_for: float | None) -> Freshness:
    """The export's place in the target's order: milliseconds since the epoch, and always after the sequence of the
    export the target serves now when this key signed it (a clock set back cannot make a new export older).  With
    ``valid_for`` seconds, when replicas stop calling it current."""
    now = datetime.now(UTC)
    sequence = max(int(now.timestamp() * 1000), _live_sequence(target, sign_key) + 1)
    expires = (now + timedelta(seconds=valid_for)).isoformat(timespec="milliseconds") if valid_for else None
    return Freshness(sequence, now.isoformat(timespec="milliseconds"), expires)


def _live_sequence(target: Target, sign_key: str | Path) -> int:
    """The sequence of the target's live export if this key signed it (0 when none, unsigned or another's)."""
    try:
        sid = _read_current(target)
        if not sid or not SNAPSHOT_ID.match(sid):
            return 0
        with target.fs.open_input_stream(target.path(SNAPSHOTS_DIR, sid, MANIFEST)) as f:
            manifest = f.read(MAX_MANIFEST_BYTES)
        with target.fs.open_input_stream(target.path(SNAPSHOTS_DIR, sid, SIGNATURE)) as f:
            signature = f.read(MAX_SIGNATURE_BYTES + 1)
        return verify_manifest_signature(manifest, signature, [public_key_of(sign_key)], target.label).sequence
    except (OSError, pa.ArrowException, SignatureError):
        return 0


def export_to_target(
    data_dir: Path | str,
    snapshot_id: str,
    target: Target,
    sign_key: str | Path | None = None,
    valid_for: float | None = None,
) -> dict:
    """The export itself, on an already opened ``Target`` (any pyarrow filesystem)."""
    data_dir = Path(data_dir).resolve()
    src, manifest_bytes, files = _local_snapshot(data_dir, snapshot_id, target.label)
    run = _Export(target, src.name)
    fresh, signature = run.signed(manifest_bytes, sign_key, valid_for)  # before anything is uploaded
    if target.local is not None and target.local == data_dir:
        raise run.error(
            f"the target is the data directory itself; use `trustindex snapshots rollback {run.sid}` to make it "
            f"live there"
        )
    try:
        run.prepare()
        reused, todo, extras, manifest_ok = run.plan(files, manifest_bytes)
        sent = run.upload_files(src, todo, files)
        if not manifest_ok:
            sent += run.put(MANIFEST, src / MANIFEST, hashlib.sha256(manifest_bytes).hexdigest())
        written = [*todo, MANIFEST]
        if signature is not None:
            sent += run.put(SIGNATURE, signature, hashlib.sha256(signature).hexdigest())
            written.append(SIGNATURE)
        previous = run.make_live(written)
    except ExportError:
        raise
    except (OSError, pa.ArrowException) as e:
        raise run.failed(e) from None
    return {
        "snapshot_id": run.sid,
        "target": target.label,
        "files": len(files) + 1,
        "uploaded": len(todo),
        "reused": len(reused),
        "removed": len(extras),
        "bytes_uploaded": sent,
        "previous": previous,
        "signed_by": key_id_of(signature) if signature else None,
        "sequence": fresh.sequence if fresh else None,
        "expires_at": fresh.expires_at if fresh else None,
    }


class _Export:
    """One export's steps on the target, in order; ``stage`` names the step a failing filesystem call was in (the
    error message says it)."""

    def __init__(self, target: Target, sid: str):
        self.target, self.sid, self.snap = target, sid, target.path(SNAPSHOTS_DIR, sid)
        self.stage = "opening the target"

    def error(self, what: str) -> ExportError:
        return ExportError(f"export of snapshot {self.sid} to {self.target.label}: {what}")

    def failed(self, e: BaseException) -> ExportError:
        hint = (
            "check the endpoint, the bucket and the AWS_* credentials in the environment"
            if self.target.local is None
            else "check that the path is a writable directory"
        )
        return self.error(
            f"{self.stage} failed ({one_line(e)}); the target's CURRENT was not changed; {hint}, then re-run the export"
        )

    def signed(
        self, manifest_bytes: bytes, sign_key: str | Path | None, valid_for: float | None
    ) -> tuple[Freshness | None, bytes | None]:
        """The export's freshness and the manifest's signature (none without a key); a bad key changes nothing on
        the target."""
        if valid_for is not None and not sign_key:
            raise self.error(
                "--valid-for needs --sign-key (an expiry nobody signed means nothing to a replica); nothing was "
                "uploaded"
            )
        if not sign_key:
            return None, None
        try:
            fresh = _freshness(self.target, sign_key, valid_for)
            return fresh, sign_manifest(manifest_bytes, sign_key, fresh)
        except TrustIndexError as e:
            raise self.error(f"{e}; nothing was uploaded") from None

    def prepare(self) -> None:
        self.stage = "preparing the target"
        local = self.target.local
        if local is not None:
            if local.exists() and not local.is_dir():
                raise self.error("the target exists and is not a directory; choose another path")
            local.mkdir(parents=True, exist_ok=True)
        else:
            bucket = self.target.base.split("/", 1)[0]
            if self.target.fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                self.target.fs.create_dir(bucket)

    def plan(self, files: dict, manifest_bytes: bytes) -> tuple[set[str], list[str], list[str], bool]:
        """The files already on the target (verified), those to upload, those to remove, and whether the manifest
        there is this one; a copy that needs repair loses its manifest (and signature) first."""
        fs, snap = self.target.fs, self.snap
        self.stage = "listing the target"
        present = _listing(fs, snap)
        self.stage = "checking files already on the target"
        reused = {
            name
            for name, meta in files.items()
            if present.get(name) == meta["size"] and _sha256_on(fs, f"{snap}/{name}") == meta["sha256"]
        }
        manifest_ok = (
            present.get(MANIFEST) == len(manifest_bytes)
            and _sha256_on(fs, f"{snap}/{MANIFEST}") == hashlib.sha256(manifest_bytes).hexdigest()
        )
        todo = sorted(set(files) - reused)
        extras = sorted(set(present) - set(files) - {MANIFEST, SIGNATURE})
        if todo or extras or not manifest_ok:
            self.stage = "clearing a stale copy on the target"
            # The manifest marks a complete copy: drop it while the directory is being repaired.
            for name in (MANIFEST, SIGNATURE):  # a signature is over the manifest it goes with
                if name in present:
                    fs.delete_file(f"{snap}/{name}")
            manifest_ok = False
            for name in extras:  # not in the manifest: a reader's verify_snapshot would refuse the copy
                fs.delete_file(f"{snap}/{name}")
        return reused, todo, extras, manifest_ok

    def upload_files(self, src: Path, todo: list[str], files: dict) -> int:
        """The snapshot's files uploaded, then each read back against the manifest's sha256; the bytes sent."""
        sent = 0
        for name in todo:
            self.stage = f"uploading {name}"
            sent += _upload(self.target, src / name, f"{self.snap}/{name}")
        for name in todo:
            self.stage = f"reading back {name}"
            got, want = _sha256_on(self.target.fs, f"{self.snap}/{name}"), files[name]["sha256"]
            if got != want:
                raise self.error(
                    f"uploaded file {name} fails its sha256 check on the target (got {got[:12]}, manifest "
                    f"{want[:12]}); the target's CURRENT was not changed; re-run the export"
                )
        return sent

    def put(self, name: str, payload: Path | bytes, sha256: str) -> int:
        """The manifest (a file) or its signature (bytes) uploaded and read back; the bytes sent."""
        self.stage = f"uploading {name}"
        dest = f"{self.snap}/{name}"
        sent = (
            _upload(self.target, payload, dest)
            if isinstance(payload, Path)
            else _upload_bytes(self.target, payload, dest)
        )
        self.stage = f"reading back {name}"
        if _sha256_on(self.target.fs, dest) != sha256:
            raise self.error(
                f"uploaded {name} fails its sha256 check on the target; the target's CURRENT was not changed; re-run "
                f"the export"
            )
        return sent

    def make_live(self, written: list[str]) -> str | None:
        """The target's CURRENT pointed at this snapshot, after its files are on disk; the id it named before."""
        local = self.target.local
        if local is not None:
            self.stage = "syncing the target to disk"
            # CURRENT must never reach the disk before the files it names (a power loss in between).
            for name in written:
                fsync_path(local / SNAPSHOTS_DIR / self.sid / name)
            for d in {(local / SNAPSHOTS_DIR / self.sid / n).parent for n in written}:
                fsync_path(d)
        self.stage = f"reading the target's {CURRENT}"
        previous = _read_current(self.target)
        self.stage = f"writing the target's {CURRENT}"
        _write_current(self.target, self.sid)
        return previous
