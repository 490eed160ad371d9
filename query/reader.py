"""Open a snapshot for serving: verify it, then load its tables and indexes.

Loading refuses a corrupt or mismatched snapshot with a clear error: every
file is checked against the manifest's sha256, and the embedding matrix must
agree with the manifest's model dimensions and the chunk count.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from query.lexical import LexicalIndex
from schemas.errors import SnapshotError
from schemas.snapshot import BM25_DIR, EMBEDDINGS, TABLE_FILES, Manifest, verify_snapshot


class SnapshotData:
    def __init__(self, directory: Path, verify: bool = True):
        self.dir = Path(directory)
        self.manifest: Manifest = verify_snapshot(self.dir, checksums=verify)
        # ParquetFile.read, not read_table: it avoids importing pyarrow.dataset (~0.5 s of a cold start)
        t = {name: pq.ParquetFile(self.dir / file).read() for name, file in TABLE_FILES.items()
             if (self.dir / file).is_file()}
        missing = [n for n in ("documents", "chunks", "attribution") if n not in t]
        if missing:
            raise SnapshotError(f"snapshot {self.manifest.snapshot_id}: missing table {missing[0]}")
        ch = t["chunks"].to_pydict()
        self.chunk_ids: list[str] = ch["chunk_id"]
        self.chunk_doc: list[str] = ch["doc_id"]
        self.chunks = ch
        self.n = len(self.chunk_ids)
        self.text_sha = [None] * self.n  # filled lazily for duplicate collapse
        self.docs = {r["doc_id"]: r for r in t["documents"].to_pylist()}
        self.attribution = {r["doc_id"]: r for r in t["attribution"].to_pylist()}
        self.verifications: dict[str, list[dict]] = defaultdict(list)
        for r in t.get("verifications", _empty()).to_pylist():
            self.verifications[r["doc_id"]].append(r)
        self.doc_versions: dict[str, list[dict]] = defaultdict(list)
        self.chunk_versions: dict[str, list[dict]] = defaultdict(list)
        self.components: dict[str, set[str]] = defaultdict(set)
        for r in t.get("version_targets", _empty()).to_pylist():
            (self.chunk_versions[r["chunk_id"]] if r["chunk_id"] else self.doc_versions[r["doc_id"]]).append(r)
            self.components[r["component"]].add(r["constraint"])
        self.doc_deprecations: dict[str, list[dict]] = defaultdict(list)
        self.chunk_deprecations: dict[str, list[dict]] = defaultdict(list)
        for r in t.get("deprecations", _empty()).to_pylist():
            (self.chunk_deprecations[r["chunk_id"]] if r["chunk_id"] else self.doc_deprecations[r["doc_id"]]).append(r)
        self.sources = {r["source"]: r for r in t["sources"].to_pylist()} if "sources" in t else {}
        self.embeddings = np.load(self.dir / EMBEDDINGS, mmap_mode="r")
        dims = int(self.manifest.embedding_model.get("dimensions", -1))
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != self.n or self.embeddings.shape[1] != dims:
            raise SnapshotError(f"snapshot {self.manifest.snapshot_id}: embeddings have shape "
                                f"{tuple(self.embeddings.shape)}, expected ({self.n}, {dims}) from the manifest")
        self.lexical = LexicalIndex(self.dir / BM25_DIR)
        if self.lexical.n_docs != self.n:
            raise SnapshotError(f"snapshot {self.manifest.snapshot_id}: BM25 index covers {self.lexical.n_docs} "
                                f"passages, the chunks table has {self.n}")

    def version_rows(self, i: int) -> dict[str, list[dict]]:
        """Chunk-scoped constraints override document-scoped ones per component."""
        out: dict[str, list[dict]] = defaultdict(list)
        for r in self.doc_versions.get(self.chunk_doc[i], []):
            out[r["component"]].append(r)
        chunk_rows = self.chunk_versions.get(self.chunk_ids[i], [])
        for comp in {r["component"] for r in chunk_rows}:
            out[comp] = [r for r in chunk_rows if r["component"] == comp]
        return out

    def deprecation_rows(self, i: int) -> list[dict]:
        return self.chunk_deprecations.get(self.chunk_ids[i], []) + self.doc_deprecations.get(self.chunk_doc[i], [])


def _empty():
    import pyarrow as pa
    return pa.table({})
