"""Pulling a snapshot from an export target into the local cache (``serve --from``), and keeping the cache bounded.

The export target is not trusted (docs/serving.md, threat model): whoever can write it may place any bytes there.
So the pull reads the manifest first (at most ``MAX_MANIFEST_BYTES``), checks its signature against the pinned
keys when there are any, checks every name it lists is a plain relative path inside the snapshot (schemas/
snapshot.py ``check_name``, before any file system call uses one), checks the free disk against the listed sizes,
and only then copies the listed files, each at most its listed size and hashed while it is copied.  Nothing the
manifest does not list is read, listed or stat-ed.  On a directory target every path component below the
snapshot is ``lstat``-ed: a link or anything but a plain file or folder is refused, never followed.

The cache holds ``partial/<id>-<pid>-<thread>`` while a pull runs and ``snapshots/<id>`` once it is verified.
Partial folders of processes that no longer run are removed at start-up and at every cleanup; retired snapshots
are removed after ``grace`` seconds, and sooner, oldest first, when more than ``keep_retired`` of them or more
than ``max_bytes`` bytes are kept (never the one being served).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.signing import (
    MAX_SIGNATURE_BYTES,
    SignatureError,
    SignedManifest,
    TrustedKey,
    verify_manifest_signature,
)
from trustindex.schemas.snapshot import (
    CURRENT,
    MANIFEST,
    SIGNATURE,
    SNAPSHOT_ID,
    SNAPSHOTS_DIR,
    Manifest,
    snapshot_id_from_files,
    verify_snapshot,
)
from trustindex.serve.freshness import RollbackError

log = logging.getLogger("trustindex.serve")

MAX_MANIFEST_BYTES = 16 << 20  # a real manifest is a few KB; 10,000 entries fit well within this
MAX_CURRENT_BYTES = 256
DISK_MARGIN = 64 << 20  # free space left over after a pull, for the logs and the next pull's manifest
_BLOCK = 1 << 20
_PARTIAL = re.compile(r"^[0-9a-f]{16}-(\d+)-(\d+)\Z")


class ExportSource:
    """An export target (``--from s3://bucket/prefix`` or ``--from /path``), copied into ``cache_dir``."""

    def __init__(
        self,
        uri: str,
        cache_dir: Path,
        endpoint: str | None = None,
        grace_seconds: float = 600.0,
        trusted: Sequence[TrustedKey] = (),
        keep_retired: int = 2,
        max_bytes: int = 0,
    ):
        import pyarrow.fs as pafs

        self.label, self.grace, self.trusted = uri, grace_seconds, list(trusted)
        # the holder's freshness check (serve/freshness.py HighWater.check), run on a signed manifest before the pull
        self.admit: Callable[[str, SignedManifest], None] | None = None
        self._refused: set[bytes] = set()  # target signatures of a cached snapshot already refused (said once)
        self.keep_retired, self.max_bytes = keep_retired, max_bytes
        self._retired: dict[str, float] = {}  # cached snapshot -> when it stopped being served
        self.cache = Path(cache_dir).resolve()
        self.local: Path | None = None
        if uri.startswith("s3://"):
            bucket_prefix = uri[len("s3://") :].strip("/")
            kwargs: dict[str, Any] = {}
            if endpoint:
                scheme, _, host = endpoint.partition("://")
                kwargs = (
                    {"endpoint_override": host.strip("/"), "scheme": scheme}
                    if host
                    else {"endpoint_override": endpoint}
                )
            self.fs, self.base = pafs.S3FileSystem(**kwargs), bucket_prefix
        else:
            self.local = Path(uri).expanduser().resolve()  # the operator's own path: links above it are theirs
            self.fs, self.base = pafs.LocalFileSystem(), self.local.as_posix()
        self.key = self.local.as_posix() if self.local is not None else f"s3://{self.base}"
        sweep_partials(self.cache)

    def _path(self, *parts: str) -> str:
        return "/".join([self.base.rstrip("/"), *parts])

    def _open(self, *parts: str) -> BinaryIO:
        """A file of the target for reading; on a directory target, every component below the base is a plain
        folder and the last a plain file, none a link (``lstat``, then ``O_NOFOLLOW``)."""
        if self.local is None:
            return self.fs.open_input_stream(self._path(*parts))
        path = self.local
        for i, part in enumerate(parts):
            path = path / part
            mode = os.lstat(path).st_mode  # FileNotFoundError when absent
            last = i == len(parts) - 1
            if not (stat.S_ISREG(mode) if last else stat.S_ISDIR(mode)):
                raise SnapshotError(
                    f"{self.label}: {'/'.join(parts[: i + 1])} is not a plain {'file' if last else 'folder'} "
                    f"(links are never followed)"
                )
        return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb")

    def _read_capped(self, cap: int, *parts: str) -> bytes:
        with self._open(*parts) as f:
            data = f.read(cap + 1)
        if len(data) > cap:
            raise SnapshotError(f"{self.label}: {'/'.join(parts)} is over {cap} bytes")
        return data

    def current(self) -> str | None:
        try:
            return self._read_capped(MAX_CURRENT_BYTES, CURRENT).decode("utf-8", "replace").strip()
        except FileNotFoundError:
            return None

    def fetch(self, snapshot_id: str) -> Path:
        if not SNAPSHOT_ID.match(snapshot_id):
            raise SnapshotError(f"{self.label}/{CURRENT}: names {snapshot_id[:80]!r}, not a snapshot id")
        dest = self.cache / SNAPSHOTS_DIR / snapshot_id
        if dest.is_dir():  # verified before it was renamed into place; Index.open verifies again
            self.renew_signature(snapshot_id)  # exported again since: signed anew (an operator's rollback)
            return dest
        # per process and thread: the workers of ``serve --workers N`` share the cache directory
        part = self.cache / "partial" / f"{snapshot_id}-{os.getpid()}-{threading.get_ident()}"
        shutil.rmtree(part, ignore_errors=True)
        try:
            part.mkdir(parents=True)
            manifest, raw, signature = self._manifest(snapshot_id)
            self._check_disk(manifest, snapshot_id)
            for name, meta in sorted(manifest.files.items()):
                self._copy(snapshot_id, name, meta, part / name)
            (part / MANIFEST).write_bytes(raw)
            if signature is not None:
                (part / SIGNATURE).write_bytes(signature)
            verify_snapshot(part, checksums=False)  # every sha256 was checked while copying
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                part.rename(dest)
            except OSError:
                if not dest.is_dir():  # else another worker renamed its verified copy into place first
                    raise
        finally:
            shutil.rmtree(part, ignore_errors=True)
        return dest

    def _manifest(self, sid: str) -> tuple[Manifest, bytes, bytes | None]:
        """The snapshot's manifest, read and checked (signature first, then names and id) before anything else."""
        where = f"{self.label}: snapshot {sid}"
        try:
            raw = self._read_capped(MAX_MANIFEST_BYTES, SNAPSHOTS_DIR, sid, MANIFEST)
        except FileNotFoundError:
            raise SnapshotError(f"{where} has no {MANIFEST}") from None
        try:
            signature: bytes | None = self._read_capped(MAX_SIGNATURE_BYTES, SNAPSHOTS_DIR, sid, SIGNATURE)
        except FileNotFoundError:
            signature = None
        if self.trusted:
            signed = verify_manifest_signature(raw, signature, self.trusted, where)
            if self.admit is not None:
                self.admit(sid, signed)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SnapshotError(f"{where}: {MANIFEST} is not UTF-8") from None
        manifest = Manifest.from_json(text, f"{where}: {MANIFEST}")
        if manifest.snapshot_id != sid or snapshot_id_from_files(manifest.files) != sid:
            raise SnapshotError(f"{where}: its manifest names {manifest.snapshot_id[:40]!r} or other files")
        return manifest, raw, signature

    def cached(self, snapshot_id: str) -> Path | None:
        dest = self.cache / SNAPSHOTS_DIR / snapshot_id
        return dest if SNAPSHOT_ID.match(snapshot_id) and dest.is_dir() else None

    def renew_signature(self, snapshot_id: str) -> None:
        """When the target holds a newer signature of a snapshot in the cache (a re-export renewed its expiry), put it
        in the cached copy; SignatureError (RollbackError for an older one) the first time a signature is refused."""
        dest = self.cached(snapshot_id)
        if dest is None or not self.trusted:
            return
        try:
            raw = self._read_capped(MAX_SIGNATURE_BYTES, SNAPSHOTS_DIR, snapshot_id, SIGNATURE)
        except FileNotFoundError:
            return
        held = (dest / SIGNATURE).read_bytes() if (dest / SIGNATURE).is_file() else None
        if raw == held or raw in self._refused:
            return
        manifest, where = (dest / MANIFEST).read_bytes(), f"{self.label}: snapshot {snapshot_id}"
        try:
            new = verify_manifest_signature(manifest, raw, self.trusted, where)
            old = verify_manifest_signature(manifest, held, self.trusted, where).sequence if held is not None else -1
            if new.sequence < old:
                raise RollbackError(
                    f"{where}: its signature on the target (sequence {new.sequence}) is older than "
                    f"the one this replica holds (sequence {old}); kept the newer"
                )
        except SignatureError:
            self._refused.add(raw)
            raise
        if new.sequence > old:  # a new file renamed over the old: a reader sees one signature or the other
            tmp = dest / f".{SIGNATURE}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_bytes(raw)
            os.replace(tmp, dest / SIGNATURE)

    def _check_disk(self, manifest: Manifest, sid: str) -> None:
        need = sum(int(meta["size"]) for meta in manifest.files.values())
        free = shutil.disk_usage(self.cache).free
        if need + DISK_MARGIN > free:
            raise SnapshotError(
                f"{self.label}: snapshot {sid} needs {need} bytes, the cache {self.cache} has {free} free"
            )

    def _copy(self, sid: str, name: str, meta: dict, target: Path) -> None:
        """One listed file, at most its listed size, its sha256 checked as it is copied."""
        size, h, n = int(meta["size"]), hashlib.sha256(), 0
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._open(SNAPSHOTS_DIR, sid, *name.split("/")) as src, open(target, "wb") as out:
                while block := src.read(min(_BLOCK, size - n + 1)):
                    n += len(block)
                    if n > size:
                        raise SnapshotError(f"snapshot {sid}: file {name} is larger than the {size} bytes listed")
                    h.update(block)
                    out.write(block)
        except FileNotFoundError:
            raise SnapshotError(f"snapshot {sid}: file {name} is missing on {self.label}") from None
        if n != size:
            raise SnapshotError(f"snapshot {sid}: file {name} has size {n}, manifest says {size}")
        if h.hexdigest() != meta["sha256"]:
            raise SnapshotError(f"snapshot {sid}: file {name} fails its sha256 check (corrupt or edited export)")

    def cleanup(self, keep: set[str]) -> None:
        """Remove cached snapshots not in ``keep``: each ``grace`` seconds after it was retired (a search that took
        the old state may still be reading its memory-mapped files), and at once, oldest first, beyond
        ``keep_retired`` snapshots or ``max_bytes`` bytes.  Partial pulls of dead processes go too."""
        sweep_partials(self.cache)
        root = self.cache / SNAPSHOTS_DIR
        now = time.monotonic()
        retired = []
        for d in root.iterdir() if root.is_dir() else []:
            if d.name in keep:
                self._retired.pop(d.name, None)
            elif now - self._retired.setdefault(d.name, now) >= self.grace:
                self._remove(d, "its grace period passed")
            else:
                retired.append(d)
        retired.sort(key=lambda d: d.lstat().st_mtime)  # renamed into place when pulled: oldest first
        sizes = [_tree_bytes(d) for d in retired]
        while retired and (len(retired) > self.keep_retired or (self.max_bytes and sum(sizes) > self.max_bytes)):
            self._remove(retired.pop(0), "the cache is over its cap")
            sizes.pop(0)

    def _remove(self, d: Path, why: str) -> None:
        shutil.rmtree(d, ignore_errors=True)
        self._retired.pop(d.name, None)
        log.info("removed cached snapshot %s (%s)", d.name, why)


def _tree_bytes(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        total += sum(os.lstat(os.path.join(folder, f)).st_size for f in files)
    return total


def _alive(pid: int, thread: int) -> bool:
    if pid == os.getpid():  # this process (a container restarted with the same pid): is that thread still pulling?
        return thread in {t.ident for t in threading.enumerate()}
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process of that id: not ours to judge
        return True
    return True


def sweep_partials(cache: Path) -> int:
    """Remove ``cache/partial/<id>-<pid>-<thread>`` folders whose process is gone (a pull killed midway)."""
    removed = 0
    folder = cache / "partial"
    for d in folder.iterdir() if folder.is_dir() else []:
        m = _PARTIAL.match(d.name)
        if m and not _alive(int(m.group(1)), int(m.group(2))):
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
            log.info("removed the partial pull %s of a process that is gone", d.name)
    return removed
