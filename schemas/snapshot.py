"""The snapshot format (contract): file names, manifest, id and verification.

``warehouse/`` writes snapshots, ``query/`` reads them; both use this module so
neither reaches into the other.  A snapshot directory holds the table files,
the dense and lexical index files, and ``manifest.json`` listing the sha256 and
size of every other file.  The snapshot id is derived from those checksums, so
the same content always gets the same id.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.tables import SCHEMA_VERSION, TABLES

MANIFEST = "manifest.json"
CURRENT = "CURRENT"
SNAPSHOTS_DIR = "snapshots"
EMBEDDINGS = "embeddings.npy"  # float16 [n_chunks, dims], L2-normalised, row i = chunks.parquet row i
DENSE_INDEX = "dense.usearch"  # HNSW over the embeddings, only from policy dense.exact_below rows (query/dense.py)
BM25_DIR = "bm25"  # bm25s index files + our tokenizer config
# BM25 over each passage's fields (title and heading path, symbol, file name): field-aware lexical scoring.
# Optional: a snapshot built before it has none and is searched over the passage text alone.
BM25_FIELDS_DIR = "bm25_fields"
# What the site's links say of each page (warehouse/page_links.py, query/page_links.py): a BM25 index whose documents
# are the documents table's rows, each the anchor texts and navigation labels that point at that page, and each
# page's inbound links from other pages of its own site.  Optional: a snapshot built before it has none, and its
# hits show no anchor or authority term.
PAGE_LINKS_DIR = "page_links"
ANCHORS_DIR = f"{PAGE_LINKS_DIR}/anchors"
INBOUND = f"{PAGE_LINKS_DIR}/inbound.npy"  # int32, one count a documents row
# The set of index files a build writes; part of the build's inputs, so a data directory whose snapshot predates
# an index (2: bm25_fields; 3: page_links) is rebuilt once by the next refresh rather than reused without it.
INDEX_FORMAT = 3
COMPONENTS = "components.json"  # the operator's component registry (schemas/components.py), when one was given
ENCODER_DIR = "encoder"  # query encoder files when the backend is ONNX
TABLE_FILES = {name: f"{name}.parquet" for name in TABLES}
SIGNATURE = "manifest.sig"  # schemas/signing.py: the export's detached signature over manifest.json
# Bounds on what a manifest may list (a build writes ~30 files, 3 folders deep): a hostile manifest cannot make a
# reader walk, stat or download without end.
MAX_FILES = 10_000
MAX_DEPTH = 8
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")


def file_sha256(path: Path, bufsize: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(bufsize):
            h.update(block)
    return h.hexdigest()


def snapshot_id_from_files(files: dict[str, dict]) -> str:
    """Content-derived id: the schema version and every file's (name, sha256)."""
    h = hashlib.sha256(SCHEMA_VERSION.encode())
    for name in sorted(files):
        h.update(f"\0{name}\0{files[name]['sha256']}".encode())
    return h.hexdigest()[:16]


def source_name(entry: dict) -> str | None:
    """A manifest's source entry's name (``source``; an entry written before that key says ``name``)."""
    return entry.get("source") or entry.get("name")


@dataclass
class Manifest:
    snapshot_id: str
    created_at: str
    sources: list[dict]
    embedding_model: dict
    row_counts: dict[str, int]
    files: dict[str, dict]
    parent: str | None = None
    build_policy_id: str = ""
    schema_version: str = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def source_rows(self) -> dict[str, dict]:
        """Each source entry by its name (``source``; an entry written before that key says ``name``), the name
        under ``source``: what a snapshot without a sources table lists."""
        return {n: {**s, "source": n} for s in self.sources if (n := source_name(s))}

    def to_json(self) -> str:
        d = {
            "schema_version": self.schema_version,
            "snapshot_id": self.snapshot_id,
            "parent": self.parent,
            "created_at": self.created_at,
            "build_policy_id": self.build_policy_id,
            "sources": self.sources,
            "embedding_model": self.embedding_model,
            "row_counts": self.row_counts,
            "files": self.files,
        }
        d.update({k: v for k, v in self.extra.items() if k != "manifest_sha256"})
        d["manifest_sha256"] = _manifest_checksum(d)
        return json.dumps(d, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> Manifest:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise SnapshotError(f"{where}: manifest is not valid JSON ({e})") from None
        known = {
            "schema_version",
            "snapshot_id",
            "parent",
            "created_at",
            "build_policy_id",
            "sources",
            "embedding_model",
            "row_counts",
            "files",
            "manifest_sha256",
        }
        missing = sorted(k for k in known - {"parent", "build_policy_id"} if k not in d)
        if missing:
            raise SnapshotError(f"{where}: manifest lacks {', '.join(missing)}")
        if d["schema_version"] != SCHEMA_VERSION:
            raise SnapshotError(f"{where}: schema version {d['schema_version']!r}, this build reads {SCHEMA_VERSION!r}")
        _check_files(d["files"], d["row_counts"], where)
        if d.get("manifest_sha256") != _manifest_checksum(d):
            raise SnapshotError(
                f"{where}: manifest does not match its own checksum (corrupt or edited; roll back "
                f"with `trustindex snapshots rollback`)"
            )
        return cls(
            snapshot_id=d["snapshot_id"],
            created_at=d["created_at"],
            sources=d["sources"],
            embedding_model=d["embedding_model"],
            row_counts=d["row_counts"],
            files=d["files"],
            parent=d.get("parent"),
            build_policy_id=d.get("build_policy_id", ""),
            extra={k: v for k, v in d.items() if k not in known},
        )


def check_name(name: object, where: str) -> str:
    """A manifest's file name as a path inside its snapshot: relative, POSIX, normalised, no ``..``, ``.`` or empty
    part, no backslash or NUL, at most ``MAX_DEPTH`` deep.  Checked before any file system call uses it."""
    if isinstance(name, str):
        parts = name.split("/")
        if (
            all(p not in ("", ".", "..") for p in parts)
            and "\\" not in name
            and "\0" not in name
            and PurePosixPath(name).as_posix() == name
            and len(parts) <= MAX_DEPTH
            and name not in (MANIFEST, SIGNATURE)
        ):
            return name
    raise SnapshotError(f"{where}: manifest lists {str(name)[:120]!r}, which is not a file name inside a snapshot")


def _check_files(files: object, row_counts: object, where: str) -> None:
    if not isinstance(files, dict) or len(files) > MAX_FILES:
        raise SnapshotError(f"{where}: manifest files must be an object of at most {MAX_FILES} entries")
    for name, meta in files.items():
        check_name(name, where)
        size = meta.get("size") if isinstance(meta, dict) else None
        sha = meta.get("sha256") if isinstance(meta, dict) else None
        if (
            isinstance(size, bool)
            or not isinstance(size, int)
            or size < 0
            or not isinstance(sha, str)
            or not _SHA256.match(sha)
        ):
            raise SnapshotError(f"{where}: manifest entry {name!r} needs a size (integer >= 0) and a sha256 (64 hex)")
    if not isinstance(row_counts, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in row_counts.values()
    ):
        raise SnapshotError(f"{where}: manifest row_counts must map tables to integers >= 0")


def _manifest_checksum(d: dict) -> str:
    """sha256 of the manifest's canonical JSON without this field: the files' checksums cover the files,
    this covers everything else (the model, the row counts, the sources)."""
    body = {k: v for k, v in d.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def files_sha256(paths: list[Path]) -> list[str]:
    """sha256 of each file, on parallel threads.

    hashlib releases the GIL on large blocks: one thread per core halves a big snapshot's
    check (~0.25 s at 100k passages on one core).  Largest files start first, so the
    threads end together.
    """
    order = sorted(range(len(paths)), key=lambda i: -paths[i].stat().st_size)
    out: list[str] = [""] * len(paths)
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        for i, digest in zip(order, pool.map(lambda i: file_sha256(paths[i]), order), strict=True):
            out[i] = digest
    return out


def list_files(directory: Path, known: Mapping[str, str] | None = None) -> dict[str, dict]:
    """sha256 and size of every file under ``directory`` except the manifest.

    ``known``: sha256 by relative path of files the caller has just hashed (a build's hard links to the
    verified encoder export); those are not read again."""
    known = known or {}
    paths = [p for p in sorted(directory.rglob("*")) if p.is_file() and p.name != MANIFEST]
    rels = [p.relative_to(directory).as_posix() for p in paths]
    todo = [p for p, rel in zip(paths, rels, strict=True) if rel not in known]
    digests = dict(zip(todo, files_sha256(todo), strict=True))
    return {
        rel: {"sha256": known[rel] if rel in known else digests[p], "size": p.stat().st_size}
        for p, rel in zip(paths, rels, strict=True)
    }


def read_manifest(directory: Path) -> Manifest:
    path = Path(directory) / MANIFEST
    if path.is_symlink() or not path.is_file():  # a link could name any file of the machine
        raise SnapshotError(f"{directory}: not a snapshot (no {MANIFEST})")
    return Manifest.from_json(path.read_text(encoding="utf-8"), str(path))


def verify_snapshot(directory: str | Path, checksums: bool = True) -> Manifest:
    """Check every listed file exists with its size (and sha256), and nothing was added.

    Raises SnapshotError naming the snapshot and the first file that disagrees.
    """
    directory = Path(directory)
    m = read_manifest(directory)
    if m.snapshot_id != directory.name and directory.parent.name == SNAPSHOTS_DIR:
        raise SnapshotError(f"{directory}: directory name does not match snapshot id {m.snapshot_id}")
    if snapshot_id_from_files(m.files) != m.snapshot_id:
        raise SnapshotError(f"{directory}: snapshot id does not match the manifest's checksums")
    present = _regular_files(directory, m.snapshot_id) - {MANIFEST, SIGNATURE}
    extra = sorted(present - set(m.files))
    if extra:
        raise SnapshotError(f"snapshot {m.snapshot_id}: unexpected file {extra[0]} (not in the manifest)")
    for name, meta in sorted(m.files.items()):
        p = directory / name
        if name not in present:  # the walk saw every regular file: no stat of a name it did not find
            raise SnapshotError(f"snapshot {m.snapshot_id}: file {name} is missing")
        if (size := p.lstat().st_size) != meta["size"]:
            raise SnapshotError(
                f"snapshot {m.snapshot_id}: file {name} has size {size}, "
                f"manifest says {meta['size']} (corrupt; run `trustindex snapshots verify`)"
            )
    if checksums:
        names = sorted(m.files)  # the first failing file in name order is reported, as a serial check would
        for name, digest in zip(names, files_sha256([directory / n for n in names]), strict=True):
            if digest != m.files[name]["sha256"]:
                raise SnapshotError(
                    f"snapshot {m.snapshot_id}: file {name} fails its sha256 check (corrupt; "
                    f"roll back with `trustindex snapshots rollback`)"
                )
    return m


def _regular_files(directory: Path, snapshot_id: str) -> set[str]:
    """Relative names of the regular files under ``directory``, found without following a link: a symbolic link,
    a device or a FIFO anywhere is an error (a snapshot holds plain files and folders), and so is a tree deeper
    than ``MAX_DEPTH`` or with more than ``MAX_FILES`` entries."""
    out: set[str] = set()
    stack, seen = [(directory, "", 0)], 0
    while stack:
        folder, rel, depth = stack.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                seen += 1
                name = f"{rel}{e.name}"
                if seen > MAX_FILES + 16:
                    raise SnapshotError(f"snapshot {snapshot_id}: more than {MAX_FILES} entries")
                mode = e.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if depth + 1 >= MAX_DEPTH:
                        raise SnapshotError(f"snapshot {snapshot_id}: {name} is deeper than {MAX_DEPTH} folders")
                    stack.append((Path(e.path), name + "/", depth + 1))
                elif stat.S_ISREG(mode):
                    out.add(name)
                else:
                    raise SnapshotError(
                        f"snapshot {snapshot_id}: {name} is not a regular file or folder (links are refused)"
                    )
    return out


SNAPSHOT_ID = re.compile(r"^[0-9a-f]{16}\Z")  # snapshot_id_from_files: the first 16 hex digits of a sha256


def read_current(data_dir: str | Path) -> str | None:
    """What the data directory's ``CURRENT`` names, stripped; None when there is no such file.  Only ever the
    ``CURRENT`` at a data directory's root: a file of that name anywhere else means nothing."""
    try:
        return (Path(data_dir) / CURRENT).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None


def snapshot_dir(data_dir: str | Path, snapshot_id: str, named_by: str) -> Path:
    """``data_dir/snapshots/<snapshot_id>`` after checking the id is one (16 hex digits: nothing that could name a
    path elsewhere); ``named_by`` says where the id came from for the error."""
    if not SNAPSHOT_ID.match(snapshot_id):
        raise SnapshotError(f"{named_by}: names {snapshot_id!r}, which is not a snapshot id (16 hex digits)")
    path = Path(data_dir) / SNAPSHOTS_DIR / snapshot_id
    if not path.is_dir():
        raise SnapshotError(f"{named_by}: names snapshot {snapshot_id!r}, which does not exist")
    if path.resolve().parent != (Path(data_dir) / SNAPSHOTS_DIR).resolve():
        raise SnapshotError(f"{named_by}: snapshot {snapshot_id!r} resolves outside {SNAPSHOTS_DIR}/ (a link)")
    return path


def resolve_current(data_dir: str | Path) -> Path:
    """The live snapshot's directory, named by the data directory's CURRENT file."""
    sid = read_current(data_dir)
    if sid is None:
        raise SnapshotError(f"{data_dir}: no live snapshot ({CURRENT} is missing); run `trustindex refresh` first")
    return snapshot_dir(data_dir, sid, str(Path(data_dir) / CURRENT))
