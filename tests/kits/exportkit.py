"""Hostile exports, built the way an attacker who can write an export target would: the snapshot's files edited,
added or linked, and its manifest re-hashed so that every checksum agrees (schemas/snapshot.py's own format)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trustindex.schemas.snapshot import (
    CURRENT,
    MANIFEST,
    SIGNATURE,
    SNAPSHOTS_DIR,
    _manifest_checksum,
    file_sha256,
    snapshot_id_from_files,
)

PHISHING = (
    "Security notice: your wallet must be re-verified. Paste your 24-word seed phrase at "
    "https://midnight-wallet-verify.example to keep your funds."
)


def rehash(
    target: Path,
    of: str,
    edit: Callable[[Path], None],
    *,
    keep_signature: bool = True,
    files_edit: Callable[[dict], None] | None = None,
    manifest_edit: Callable[[dict], None] | None = None,
    make_current: bool = True,
) -> str:
    """A copy of ``target``'s snapshot ``of``, changed by ``edit(work_dir)``, its manifest listing what the work
    directory now holds (sizes and sha256 recomputed, following links as a naive tool would), a new id, and the old
    ``manifest.sig`` copied along (a forger has no key: the signature he has is the old one's).  ``files_edit`` and
    ``manifest_edit`` change the manifest's file list or fields after that; CURRENT names the result."""
    snaps = target / SNAPSHOTS_DIR
    work = snaps / f"work-{of}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(snaps / of, work, symlinks=True)
    edit(work)
    d = json.loads((work / MANIFEST).read_text())
    files = {}
    for folder, _dirs, names in os.walk(work, followlinks=True):  # a naive tool follows links
        for name in names:
            p = Path(folder) / name
            rel = p.relative_to(work).as_posix()
            if p.is_file() and rel not in (MANIFEST, SIGNATURE):
                files[rel] = {"sha256": file_sha256(p), "size": p.stat().st_size}
    if files_edit:
        files_edit(files)
    d["files"] = files
    d["snapshot_id"] = snapshot_id_from_files(files)
    if manifest_edit:
        manifest_edit(d)
    d["manifest_sha256"] = _manifest_checksum(d)
    (work / MANIFEST).write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")
    if not keep_signature:
        (work / SIGNATURE).unlink(missing_ok=True)
    final = snaps / d["snapshot_id"]
    shutil.rmtree(final, ignore_errors=True)
    work.rename(final)
    if make_current:
        (target / CURRENT).write_text(d["snapshot_id"] + "\n")
    return d["snapshot_id"]


def forge_trust(work: Path) -> None:
    """Every document's tier set to foundation, one passage's text replaced by seed-phrase phishing."""
    att = pq.read_table(work / "attribution.parquet")
    tier = att.schema.get_field_index("tier")
    att = att.set_column(tier, "tier", pa.array(["foundation"] * att.num_rows, pa.string()))
    pq.write_table(att, work / "attribution.parquet")
    chunks = pq.read_table(work / "chunks.parquet")
    text = chunks.schema.get_field_index("text")
    texts = chunks.column("text").to_pylist()
    texts[0] = PHISHING
    pq.write_table(chunks.set_column(text, "text", pa.array(texts, pa.string())), work / "chunks.parquet")


def inflate_documents(work: Path, extra_rows: int) -> None:
    """documents.parquet with ``extra_rows`` copies of its first row appended: a small file, a large table."""
    docs = pq.read_table(work / "documents.parquet")
    idx = pa.array([0] * extra_rows, pa.int64())
    more = pc.take(docs, idx)
    pq.write_table(pa.concat_tables([docs, more]), work / "documents.parquet", compression="zstd")


def fake_entry(size: int) -> dict:
    return {"sha256": hashlib.sha256(b"never read").hexdigest(), "size": size}
