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

``SnapshotData`` is this module's opening and checking, and the parts it builds, each typed and owned by one object
that lives as long as the opened snapshot (a scoped view, query/scope.py, replaces the ones the scope narrows):

- ``passages`` (query/snapshot_passages.py ``Passages``): the chunks table's rows, ids, documents and texts;
- ``copies`` (``Copies``, same module): which passage copies another source's, the groups a search collapses;
- ``pages`` (query/snapshot_pages.py ``Pages``): the documents and attribution tables, passages by page, routes;
- ``vectors`` (``Vectors``, same module): the memory-mapped embeddings and the page vectors;
- ``lexical_indexes`` (query/snapshot_lexical.py ``LexicalIndexes``): the text and field BM25 indexes, page terms;
- ``evidence`` (query/evidence.py ``Evidence``): verifications, version rows, deprecations, content risks;
- ``page_links`` (query/page_links.py ``PageLinks``): what the site's links say of each page.

What each part derives (a passage's text, a page's vector, the docs version names) it works out on first use and
keeps; ``warm`` prepares it all for a long-lived process.  The snapshot's own facts (``dir``, ``manifest``,
``registry``, ``sources``, its signature) are plain attributes.  The names callers read before the parts existed
(``d.chunk_ids``, ``d.docs``, ``d.copy_of()`` ...) are forwarded to their part for a transition (the properties at
the class's end).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.query.columns import Columns, RowMap, row_positions
from trustindex.query.component_names import ComponentNames
from trustindex.query.evidence import Evidence, VersionRow
from trustindex.query.evidence_rows import DeprecationRow, RiskRow, VerificationRow
from trustindex.query.lexical import LexicalIndex
from trustindex.query.page_links import Cites, PageLinks
from trustindex.query.passage_text import TEXT_COLUMN, PassageTexts
from trustindex.query.snapshot_lexical import LexicalIndexes
from trustindex.query.snapshot_pages import Pages, Vectors
from trustindex.query.snapshot_passages import Copies, Passages
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
# Tables an open does not decode: only a search that weighs a term reading them does (the links: ``cited``).
READ_ON_USE = ("links",)


class SnapshotData:
    """One snapshot opened for searching: checked, then its parts built (the module's docstring)."""

    def __init__(self, directory: Path, verify: bool = True):
        self.dir = Path(directory)
        self.manifest: Manifest = verify_snapshot(self.dir, checksums=verify)
        self.checksums_verified = bool(verify)
        self.signed_by: str | None = None  # the trusted key that signed the manifest (Index.open), None: unsigned
        self.signature: SignedManifest | None = None  # that signature, with its sequence and expiry
        t = self._read_tables()
        chunks, documents = t["chunks"], t["documents"]
        n = chunks.num_rows
        # Row of each chunk's document in the documents table (-1: a chunk whose document is missing).
        doc_row = row_positions(chunks.column("doc_id"), documents.column("doc_id"))
        self.passages = self.passages_type(chunks, PassageTexts(self.dir / TABLE_FILES["chunks"], n), doc_row)
        self.copies = Copies(t.get("copies"), self.passages)  # passages copying another source's; often absent
        self.pages = Pages(RowMap(documents, "doc_id"), RowMap(t["attribution"], "doc_id"), self.passages)
        registry_file = self.dir / COMPONENTS
        self.registry = (
            ComponentRegistry.from_json(registry_file.read_text(encoding="utf-8"))
            if registry_file.is_file()
            else ComponentRegistry()
        )
        self.evidence = Evidence(t, self.registry, self.passages)
        self.sources: dict[str, dict] = {r["source"]: r for r in t["sources"].to_pylist()} if "sources" in t else {}
        self.vectors = Vectors(self._open_embeddings(n), self.pages)
        self.lexical_indexes = LexicalIndexes(*self._open_lexical(n), self.passages, len(self.pages.docs))
        # What the site's links say of each page (anchor texts, inbound links); a snapshot built before has none.
        self.page_links = PageLinks.open(
            self.dir,
            len(self.pages.docs),
            self._where,
            partial(self._cites, chunks.column("chunk_id"), documents.column("doc_id")),
        )

    passages_type = Passages  # what reads the passages (a test compares another reading of their text)

    @property
    def _where(self) -> str:
        return f"snapshot {self.manifest.snapshot_id}"

    def _read_tables(self) -> dict[str, pa.Table]:
        """The snapshot's tables by name, each checked against the manifest's row count; the chunks table without
        its text and build-only columns.  ParquetFile.read, not read_table: it avoids importing pyarrow.dataset
        (~0.5 s of a cold start)."""
        present = {name: self.dir / file for name, file in TABLE_FILES.items() if (self.dir / file).is_file()}
        for name in READ_ON_USE:  # checked now by their footers, decoded only by the search that reads them
            if name in present:
                _rows_checked(present.pop(name), self.manifest.row_counts.get(name), self._where)
        t = {
            name: _read(
                path,
                skip=(TEXT_COLUMN, *BUILD_ONLY_COLUMNS) if name == "chunks" else (),
                rows=self.manifest.row_counts.get(name),
                where=self._where,
            )
            for name, path in present.items()
        }
        missing = [n for n in ("documents", "chunks", "attribution") if n not in t]
        if missing:
            raise SnapshotError(f"{self._where}: missing table {missing[0]}")
        pa.default_memory_pool().release_unused()  # Parquet decoding's buffers, back to the system
        return t

    def _cites(self, chunk_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> Cites:
        """What each passage links to (query/page_links.py ``Cites``), from the links table read now."""
        path = self.dir / TABLE_FILES["links"]
        rows = self.manifest.row_counts.get("links")
        return Cites.of(_read(path, rows=rows, where=self._where) if path.is_file() else None, chunk_ids, doc_ids)

    def _open_embeddings(self, n: int) -> np.ndarray:
        """The embeddings, memory-mapped, checked against the manifest's model dimensions and the passages."""
        embeddings = np.load(self.dir / EMBEDDINGS, mmap_mode="r")
        dims = int(self.manifest.embedding_model.get("dimensions", -1))
        if embeddings.ndim != 2 or embeddings.shape[0] != n or embeddings.shape[1] != dims:
            raise SnapshotError(
                f"{self._where}: embeddings have shape {tuple(embeddings.shape)}, "
                f"expected ({n}, {dims}) from the manifest"
            )
        return embeddings

    def _open_lexical(self, n: int) -> tuple[LexicalIndex, LexicalIndex | None]:
        """The BM25 indexes, text and fields (a snapshot built before the field index has none), checked against the
        passages."""
        text = LexicalIndex(self.dir / BM25_DIR)
        if text.n_docs != n:
            raise SnapshotError(f"{self._where}: BM25 index covers {text.n_docs} passages, the chunks table has {n}")
        fields_dir = self.dir / BM25_FIELDS_DIR
        fields = LexicalIndex(fields_dir) if fields_dir.is_dir() else None
        if fields is not None and fields.n_docs != n:
            raise SnapshotError(
                f"{self._where}: BM25 field index covers {fields.n_docs} passages, the chunks table has {n}"
            )
        return text, fields

    def warm(self) -> None:
        """What every search reads, prepared once for a long-lived process: each part's first-use work (the passage
        text's temporary copy, text and hit groups, pages, routes, the chunk-id order, every page's vector)."""
        self.passages.warm()
        self.copies.hit_groups()
        self.pages.warm()
        self.vectors.warm()
        pa.default_memory_pool().release_unused()  # what decoding the text and the lists left behind

    # The names callers read before the parts existed, forwarded to their part for a transition: new code reads
    # the part (``d.passages.chunk_ids``); query/search.py, response.py, target_report.py, lexical_signals.py,
    # trust_factors/, serve/listing.py and some tests and benches still read these.
    @property
    def n(self) -> int:
        return self.passages.n

    @property
    def chunks(self) -> Columns:
        return self.passages.chunks

    @property
    def chunk_ids(self) -> list[str]:
        return self.passages.chunk_ids

    @property
    def chunk_doc(self) -> list[str]:
        return self.passages.chunk_doc

    @property
    def chunk_doc_row(self) -> np.ndarray:
        return self.passages.chunk_doc_row

    def texts(self, rows: Iterable[int]) -> list[str]:
        return self.passages.texts(rows)

    def chunk_id_rank(self) -> np.ndarray:
        return self.passages.chunk_id_rank()

    @property
    def copies_table(self) -> pa.Table | None:
        return self.copies.table

    def copy_of(self) -> np.ndarray:
        return self.copies.copy_of()

    def hit_groups(self) -> np.ndarray:
        return self.copies.hit_groups()

    @property
    def docs(self) -> RowMap:
        return self.pages.docs

    @property
    def attribution(self) -> RowMap:
        return self.pages.attribution

    def route_codes(self) -> np.ndarray:
        return self.pages.route_codes()

    @property
    def embeddings(self) -> np.ndarray:
        return self.vectors.embeddings

    def unit_mean(self, rows: np.ndarray) -> np.ndarray:
        return self.vectors.unit_mean(rows)

    @property
    def lexical(self) -> LexicalIndex:
        return self.lexical_indexes.text

    @property
    def field_lexical(self) -> LexicalIndex | None:
        return self.lexical_indexes.fields

    @property
    def verifications(self) -> dict[str, list[VerificationRow]]:
        return self.evidence.verifications

    @property
    def doc_versions(self) -> dict[str, list[VersionRow]]:
        return self.evidence.doc_versions

    @property
    def chunk_versions(self) -> dict[str, list[VersionRow]]:
        return self.evidence.chunk_versions

    @property
    def components(self) -> dict[str, set[str]]:
        return self.evidence.components

    @property
    def component_names(self) -> ComponentNames:
        return self.evidence.component_names

    @property
    def doc_deprecations(self) -> dict[str, list[DeprecationRow]]:
        return self.evidence.doc_deprecations

    @property
    def chunk_deprecations(self) -> dict[str, list[DeprecationRow]]:
        return self.evidence.chunk_deprecations

    @property
    def content_risks(self) -> dict[str, list[RiskRow]]:
        return self.evidence.content_risks

    def version_rows(self, i: int) -> dict[str, list[VersionRow]]:
        return self.evidence.version_rows(i)

    def superseding_rows(self, i: int) -> dict[str, list[VersionRow]] | None:
        return self.evidence.superseding_rows(i)

    def content_risk_rows(self, i: int) -> list[RiskRow]:
        return self.evidence.content_risk_rows(i)

    def deprecation_rows(self, i: int) -> list[DeprecationRow]:
        return self.evidence.deprecation_rows(i)

    def version_folder(self, i: int) -> str | None:
        return self.evidence.version_folder(i)

    def newer_older_versions(self, i: int) -> int:
        return self.evidence.newer_older_versions(i)


def _rows_checked(path: Path, rows: int | None, where: str) -> pq.ParquetFile:
    """The table's file, opened, its footer's row count checked against the manifest's before a row is decoded: a
    small file can expand to far more rows than the build wrote (a hostile export's table would take the memory
    before any other check)."""
    f = pq.ParquetFile(path)
    if rows is not None and f.metadata.num_rows != rows:
        raise SnapshotError(f"{where}: {path.name} holds {f.metadata.num_rows} rows, the manifest says {rows}")
    return f


def _read(path: Path, skip: tuple[str, ...] = (), rows: int | None = None, where: str = "") -> pa.Table:
    f = _rows_checked(path, rows, where)
    if not skip:
        return f.read()
    return f.read(columns=[c for c in f.schema_arrow.names if c not in skip])
