"""Open a snapshot for serving: verify it, then load its tables and indexes.

Loading refuses a corrupt or mismatched snapshot with a clear error: every
file is checked against the manifest's sha256, and the embedding matrix must
agree with the manifest's model dimensions and the chunk count.

Tables stay Arrow in memory; Python objects are made only for the rows a query
returns (query/columns.py ``RowMap``, ``Columns``).  The passage text, most of the chunks table's bytes, is not loaded
with it: ``query.passage_text`` reads it from a temporary copy when a search
asks for rows (``texts``, ``chunks["text"]``); columns only a build reads are left
out.  The trust prior (``query.trust_prior``) works on the Arrow columns and
``chunk_doc_row``, each chunk's row in the documents table.

``SnapshotData`` is this module's opening and checking plus two parts by concern: the passage and page features a
search reads (query/passage_features.py) and the evidence by document and passage, version constraints typed
(query/evidence.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trustindex.query.columns import Columns, RowMap
from trustindex.query.evidence import SnapshotEvidence
from trustindex.query.lexical import LexicalIndex
from trustindex.query.page_links import PageLinks
from trustindex.query.passage_features import PassageFeatures
from trustindex.query.passage_text import TEXT_COLUMN, PassageTexts
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.signing import SignedManifest
from trustindex.schemas.snapshot import (
    BM25_DIR,
    BM25_FIELDS_DIR,
    COMPONENTS,
    EMBEDDINGS,
    TABLE_FILES,
    Manifest,
    verify_snapshot,
)

# Chunks columns a search never reads: the embedding cache key and the chunker's token count (build only).
BUILD_ONLY_COLUMNS = ("content_sha256", "token_count")


class SnapshotData(PassageFeatures, SnapshotEvidence):
    """One snapshot opened for searching: checked (query/reader.py, here), its passage and page features
    (query/passage_features.py) and its evidence (query/evidence.py)."""

    def __init__(self, directory: Path, verify: bool = True):
        self.dir = Path(directory)
        self._init_features()
        self.manifest: Manifest = verify_snapshot(self.dir, checksums=verify)
        self.checksums_verified = bool(verify)
        self.signed_by: str | None = None  # the trusted key that signed the manifest (Index.open), None: unsigned
        self.signature: SignedManifest | None = None  # that signature, with its sequence and expiry
        # ParquetFile.read, not read_table: it avoids importing pyarrow.dataset (~0.5 s of a cold start)
        t = {
            name: _read(
                self.dir / file,
                skip=(TEXT_COLUMN, *BUILD_ONLY_COLUMNS) if name == "chunks" else (),
                rows=self.manifest.row_counts.get(name),
                where=f"snapshot {self.manifest.snapshot_id}",
            )
            for name, file in TABLE_FILES.items()
            if (self.dir / file).is_file()
        }
        missing = [n for n in ("documents", "chunks", "attribution") if n not in t]
        if missing:
            raise SnapshotError(f"snapshot {self.manifest.snapshot_id}: missing table {missing[0]}")
        pa.default_memory_pool().release_unused()  # Parquet decoding's buffers, back to the system
        chunks = t["chunks"]
        self.n = chunks.num_rows
        self.passage_texts = PassageTexts(self.dir / TABLE_FILES["chunks"], self.n)
        self.chunks = Columns(chunks, {TEXT_COLUMN: self.passage_texts})
        self.chunk_ids: list[str] = self.chunks["chunk_id"]
        self.chunk_doc: list[str] = self.chunks.shared_strings("doc_id")
        self.docs = RowMap(t["documents"], "doc_id")
        self.attribution = RowMap(t["attribution"], "doc_id")
        # Row of each chunk's document in the documents table (-1: a chunk whose document is missing).
        self.chunk_doc_row = row_positions(chunks.column("doc_id"), t["documents"].column("doc_id"))
        registry_file = self.dir / COMPONENTS
        self.registry = (
            ComponentRegistry.from_json(registry_file.read_text(encoding="utf-8"))
            if registry_file.is_file()
            else ComponentRegistry()
        )
        self._group_evidence(t, self.registry)
        self.sources = {r["source"]: r for r in t["sources"].to_pylist()} if "sources" in t else {}
        self.copies_table = t.get("copies")  # passages copying another source's (query/copies.py); often absent
        self._open_arrays()

    def _open_arrays(self) -> None:
        """The embeddings (memory-mapped) and the BM25 indexes, each checked against the chunks table's rows."""
        self.embeddings = np.load(self.dir / EMBEDDINGS, mmap_mode="r")
        dims = int(self.manifest.embedding_model.get("dimensions", -1))
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != self.n or self.embeddings.shape[1] != dims:
            raise SnapshotError(
                f"snapshot {self.manifest.snapshot_id}: embeddings have shape "
                f"{tuple(self.embeddings.shape)}, expected ({self.n}, {dims}) from the manifest"
            )
        self.lexical = LexicalIndex(self.dir / BM25_DIR)
        if self.lexical.n_docs != self.n:
            raise SnapshotError(
                f"snapshot {self.manifest.snapshot_id}: BM25 index covers {self.lexical.n_docs} "
                f"passages, the chunks table has {self.n}"
            )
        # The field index (title, headings, file name); a snapshot built before it has none.
        fields = self.dir / BM25_FIELDS_DIR
        self.field_lexical = LexicalIndex(fields) if fields.is_dir() else None
        if self.field_lexical is not None and self.field_lexical.n_docs != self.n:
            raise SnapshotError(
                f"snapshot {self.manifest.snapshot_id}: BM25 field index covers {self.field_lexical.n_docs} "
                f"passages, the chunks table has {self.n}"
            )
        # What the site's links say of each page (anchor texts, inbound links); a snapshot built before has none.
        self.page_links = PageLinks.open(self.dir, len(self.docs), f"snapshot {self.manifest.snapshot_id}")


def row_positions(values: pa.ChunkedArray, keys: pa.ChunkedArray) -> np.ndarray:
    """For each value, its row in ``keys`` (-1 where absent)."""
    idx = pc.index_in(values, value_set=keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys)
    return np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _read(path: Path, skip: tuple[str, ...] = (), rows: int | None = None, where: str = "") -> pa.Table:
    f = pq.ParquetFile(path)
    # the footer's row count against the manifest's, before a row is decoded: a small file can expand to far more
    # rows than the build wrote (a hostile export's table would take the memory before any other check)
    if rows is not None and f.metadata.num_rows != rows:
        raise SnapshotError(f"{where}: {path.name} holds {f.metadata.num_rows} rows, the manifest says {rows}")
    if not skip:
        return f.read()
    return f.read(columns=[c for c in f.schema_arrow.names if c not in skip])
