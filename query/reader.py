"""Open a snapshot for serving: verify it, then load its tables and indexes.

Loading refuses a corrupt or mismatched snapshot with a clear error: every
file is checked against the manifest's sha256, and the embedding matrix must
agree with the manifest's model dimensions and the chunk count.

Tables stay Arrow in memory; Python objects are made only for the rows a query
returns (``RowMap``, ``Columns``): converting 100k passages to Python lists and
dicts at open took ~0.3 s of a cold query and ~200 MiB, and a search needs a few
hundred rows.  The passage text, most of the chunks table's bytes, is not loaded
with it: ``query.passage_text`` reads it from a temporary copy when a search
asks for rows (``texts``, ``chunks["text"]``); columns only a build reads are left
out.  The trust prior (``query.trust_prior``) works on the Arrow columns and
``chunk_doc_row``, each chunk's row in the documents table.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trustindex.query.dense import drop_mapped_pages
from trustindex.query.lexical import LexicalIndex
from trustindex.query.pages import TermPages, page_term_coverage, pool_term_coverage, stored_page_by_page
from trustindex.query.passage_text import TEXT_COLUMN, PassageTexts
from trustindex.query.unpublished import unpublished_mask
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.docs_versions import CURRENT, LATEST, names_of, version_folder
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.lexical import tokenize
from trustindex.schemas.snapshot import (
    BM25_DIR,
    BM25_FIELDS_DIR,
    COMPONENTS,
    EMBEDDINGS,
    TABLE_FILES,
    Manifest,
    verify_snapshot,
)


class RowMap:
    """A read-only ``{key: row dict}`` over an Arrow table; a row becomes a dict when first asked for."""

    def __init__(self, table: pa.Table, key: str):
        self.table = table
        keys = table.column(key).to_pylist()
        self._row = {k: i for i, k in enumerate(keys)}  # the last row of a repeated key wins, as dict() would
        self._cache: dict[str, dict] = {}

    def row_of(self, key) -> int | None:
        return self._row.get(key)

    def __getitem__(self, key) -> dict:
        hit = self._cache.get(key)
        if hit is None:
            i = self._row[key]  # KeyError for an unknown key, as a dict
            hit = self._cache[key] = self.table.slice(i, 1).to_pylist()[0]
        return hit

    def get(self, key, default=None):
        return self[key] if key in self._row else default

    def __contains__(self, key) -> bool:
        return key in self._row

    def __len__(self) -> int:
        return len(self._row)

    def __iter__(self):
        return iter(self._row)

    def keys(self):
        return self._row.keys()

    def items(self):
        return ((k, self[k]) for k in self._row)

    def values(self):
        return (self[k] for k in self._row)


class Columns:
    """``chunks[column][row]`` as before, with each column converted to a Python list on first use; ``lazy``
    columns (the text) are read by row from their own store and never converted whole."""

    def __init__(self, table: pa.Table, lazy: dict[str, PassageTexts] | None = None):
        self.table = table
        self._lists: dict[str, list] = {}
        self._lazy = lazy or {}

    def __getitem__(self, name: str) -> list:
        if name in self._lazy:
            return self._lazy[name]  # type: ignore[return-value]  # a read-only sequence, read by row
        col = self._lists.get(name)
        if col is None:
            col = self._lists[name] = self.table.column(name).to_pylist()
        return col

    def shared_strings(self, name: str) -> list:
        """``self[name]`` with one Python string per distinct value (a document's id once, not once per passage:
        ~60 MiB less at 1M passages of 8 per page)."""
        col = self._lists.get(name)
        if col is None:
            column = self.table.column(name)
            if column.null_count or not len(column):
                return self[name]
            enc = pc.dictionary_encode(column).combine_chunks()
            values = enc.dictionary.to_pylist()
            col = self._lists[name] = [values[c] for c in enc.indices.to_numpy().tolist()]
        return col

    def value(self, name: str, row: int):
        """One value, without converting the column."""
        if name in self._lazy:
            return self._lazy[name][row]
        if name in self._lists:
            return self._lists[name][row]
        return self.table.column(name)[row].as_py()

    def take(self, name: str, rows) -> list:
        """The values of ``rows`` (any order) without converting the whole column."""
        if name in self._lazy:
            return self._lazy[name].take(rows)
        if name in self._lists:
            col = self._lists[name]
            return [col[i] for i in rows]
        return self.table.column(name).take(pa.array(np.asarray(rows, dtype=np.int64))).to_pylist()


PASSAGE_TERMS_KEPT = TEXTS_KEPT = 8192
PROVENANCE_COLUMNS = ("start_line", "end_line", "heading_path", "symbol_path")  # query/response.py provenance
# Rows from which warm() leaves the provenance columns in Arrow: as Python objects they cost more memory than their
# scalar reads cost time (heading_path alone: ~160 MiB at 1M passages, against ~15 µs a read for the ten hits).
PROVENANCE_LISTS_BELOW = 200_000
# Page vectors at warm-up: the embeddings' mapped pages are dropped every so many pages (~150 MB of rows at 1M).
RELEASE_EVERY_PAGES = 50_000
# Chunks columns a search never reads: the embedding cache key and the chunker's token count (build only).
BUILD_ONLY_COLUMNS = ("content_sha256", "token_count")


class SnapshotData:
    def __init__(self, directory: Path, verify: bool = True):
        self.dir = Path(directory)
        self._page_rows: dict[str, np.ndarray] | None = None
        self._page_row_sets: list[np.ndarray] | None = None
        self._text_groups: np.ndarray | None = None
        self._chunk_page: np.ndarray | None = None
        self._chunk_id_rank: np.ndarray | None = None
        self._page_vectors: np.ndarray | None = None
        self._term_pages: TermPages | None = None
        self._page_by_page: bool | None = None  # stored_page_by_page()
        self._unpublished: np.ndarray | None = None  # unpublished_rows()
        self._passage_terms: dict[int, frozenset[str]] = {}
        self._texts: dict[int, str] = {}
        self._version_folders: dict[str, str | None] = {}  # by document: its passages share its path
        self.manifest: Manifest = verify_snapshot(self.dir, checksums=verify)
        self.checksums_verified = bool(verify)
        self.signed_by: str | None = None  # the trusted key that signed the manifest (Index.open), None: unsigned
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
        self._group_evidence(t)
        self.sources = {r["source"]: r for r in t["sources"].to_pylist()} if "sources" in t else {}
        registry_file = self.dir / COMPONENTS
        self.registry = (
            ComponentRegistry.from_json(registry_file.read_text(encoding="utf-8"))
            if registry_file.is_file()
            else ComponentRegistry()
        )
        self._open_arrays()

    def _group_evidence(self, t: dict[str, pa.Table]) -> None:
        """The evidence tables by document and by passage (small: rows per document, not per passage)."""
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
        # Content-risk findings by passage (a snapshot built before content risk was read has none).
        self.content_risks: dict[str, list[dict]] = defaultdict(list)
        for r in t.get("content_risk", _empty()).to_pylist():
            self.content_risks[r["chunk_id"]].append(r)

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

    def texts(self, rows) -> list[str]:
        """The passages' texts, the last TEXTS_KEPT asked for kept (an Arrow take of a search's ten hits from
        the text store costs more than a dict lookup)."""
        return _memoised(self._texts, [int(r) for r in rows], TEXTS_KEPT, self.passage_texts.take)

    def passage_terms(self, rows: list[int]) -> list[frozenset[str]]:
        """Each passage's distinct lexical terms (schemas/lexical.py ``tokenize`` of its text), kept for the last
        PASSAGE_TERMS_KEPT passages asked for: the answer signals read the top hits' terms on every search."""
        return _memoised(
            self._passage_terms, rows, PASSAGE_TERMS_KEPT, lambda m: [frozenset(tokenize(t)) for t in self.texts(m)]
        )

    def text_groups(self) -> np.ndarray:
        """Per row, the first row with the same text (identical passages share it): a search collapses them
        by this number instead of comparing texts (the texts are compared by digest, never held in memory)."""
        groups = self._text_groups
        if groups is None:
            first: dict[bytes | None, int] = {}
            digests = self.passage_texts.digests()
            groups = np.array([first.setdefault(t, i) for i, t in enumerate(digests)], dtype=np.int64)
            self._text_groups = groups
        return groups

    def page_rows(self) -> dict[str, np.ndarray]:
        """Per document, the rows of its passages (built on first use; a search's page-level channel reads it).
        Pages are numbered in this order (``chunk_page``)."""
        pr = self._page_rows
        if pr is None:
            pr = self._page_rows = _rows_by_value(self.chunks.table.column("doc_id"))
        return pr

    def page_row_sets(self) -> list[np.ndarray]:
        """``page_rows``' values by page number (``chunk_page``)."""
        if self._page_row_sets is None:
            self._page_row_sets = list(self.page_rows().values())
        return self._page_row_sets

    def unit_mean(self, rows: np.ndarray) -> np.ndarray:
        """The unit mean vector of some passages (a page without its withheld passages, query/score.py); zero
        for none."""
        if not rows.size:
            return np.zeros(self.embeddings.shape[1], dtype=np.float32)
        return self._unit_means([rows])[0]

    def chunk_id_rank(self) -> np.ndarray:
        """Per passage, its chunk id's place among the sorted chunk ids (a search breaks ties by chunk id)."""
        rank = self._chunk_id_rank
        if rank is None:
            ids = self.chunk_ids
            rank = np.empty(self.n, dtype=np.int64)
            rank[sorted(range(self.n), key=ids.__getitem__)] = np.arange(self.n, dtype=np.int64)
            self._chunk_id_rank = rank
        return rank

    def chunk_page(self) -> np.ndarray:
        """Per passage, the number of its page (its document's place in ``page_rows``)."""
        cp = self._chunk_page
        if cp is None:
            cp = np.empty(self.n, dtype=np.int64)
            for j, rows in enumerate(self.page_rows().values()):
                cp[rows] = j
            self._chunk_page = cp
        return cp

    def page_vectors(self, pages: np.ndarray) -> np.ndarray:
        """Each page's unit mean passage vector (the page as one vector), one row per page number of ``pages``."""
        matrix = self._page_vectors
        if matrix is not None:  # warm: every page's vector computed once
            return matrix[pages]
        rows = list(self.page_rows().values())
        return self._unit_means([rows[p] for p in pages.tolist()])

    def stored_page_by_page(self) -> bool:
        """Whether this snapshot's passages are stored page by page (query/pages.py), checked once."""
        if self._page_by_page is None:
            self._page_by_page = stored_page_by_page(self.chunk_doc_row)
        return self._page_by_page

    def unpublished_rows(self) -> np.ndarray:
        """Per passage, whether its page is one the docs site does not serve (query/unpublished.py), worked out once."""
        if self._unpublished is None:
            self._unpublished = unpublished_mask(self.docs.table.column("path").to_pylist(), self.chunk_doc_row)
        return self._unpublished

    def page_term_coverage(self, tokens: list[str], pages: np.ndarray) -> np.ndarray:
        """Per entry of ``pages`` (rows of the documents table), the idf-weighted share of the query's terms the page
        holds (query/pages.py): read from the candidates' pages when the snapshot stores passages page by page (every
        build does; checked once), else from every term's pages, memoised."""
        if self.stored_page_by_page():
            return pool_term_coverage(self.lexical, tokens, self.chunk_doc_row, pages)
        if self._term_pages is None:
            self._term_pages = TermPages(self.lexical, self.chunk_doc_row)
        return page_term_coverage(self.lexical, tokens, self.chunk_doc_row, len(self.docs), self._term_pages)[pages]

    def _unit_means(self, row_sets: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(row_sets), self.embeddings.shape[1]), dtype=np.float32)
        emb = np.asarray(self.embeddings)  # a plain view: np.memmap's subclass hooks cost on every gather
        for j, rows in enumerate(row_sets):
            mean = np.asarray(emb[rows], dtype=np.float32).sum(axis=0)
            out[j] = mean / max(float(np.linalg.norm(mean)), 1e-12)
            if j % RELEASE_EVERY_PAGES == RELEASE_EVERY_PAGES - 1:
                self.release_embeddings()  # a warm-up over every page would otherwise map in the whole file
        return out

    def _warm_page_vectors(self) -> None:
        """Every page's vector at once, for a long-lived process: a search reads ~100 pages', and summing their
        passages' rows each time was a quarter of a warm search's CPU (a one-shot query computes its own)."""
        if self._page_vectors is None:
            matrix = self._unit_means(list(self.page_rows().values()))
            matrix.flags.writeable = False
            self._page_vectors = matrix

    def release_embeddings(self) -> None:
        """Drop the embeddings file's pages from this process's resident memory once warm-up has read them all (the
        page vectors, the int8 prefilter): a search then reads a few hundred rows (query/dense.py)."""
        drop_mapped_pages(self.embeddings)

    def warm(self) -> None:
        """What every search reads, prepared once for a long-lived process: the passage text's temporary copy, the
        text groups, pages and chunk-id order, every page's vector and, below PROVENANCE_LISTS_BELOW rows, as Python
        lists, the columns each hit's provenance reads (a scalar read from Arrow costs ~15 µs)."""
        self.passage_texts.build()
        self.text_groups()
        self.chunk_page()
        self.chunk_id_rank()
        self._warm_page_vectors()
        self.stored_page_by_page()
        if self.n < PROVENANCE_LISTS_BELOW:
            for name in PROVENANCE_COLUMNS:
                if name in self.chunks.table.column_names:
                    self.chunks[name]
        pa.default_memory_pool().release_unused()  # what decoding the text and the lists left behind

    def version_rows(self, i: int) -> dict[str, list[dict]]:
        """Chunk-scoped constraints override document-scoped ones per component."""
        out: dict[str, list[dict]] = defaultdict(list)
        for r in self.doc_versions.get(self.chunk_doc[i], []):
            out[r["component"]].append(r)
        chunk_rows = self.chunk_versions.get(self.chunk_ids[i], [])
        # first-seen order, not a set's: the response lists the components in this order, and a set of strings
        # iterates in an order that changes with each process's hash seed
        for comp in dict.fromkeys(r["component"] for r in chunk_rows):
            out[comp] = [r for r in chunk_rows if r["component"] == comp]
        return out

    def content_risk_rows(self, i: int) -> list[dict]:
        return self.content_risks.get(self.chunk_ids[i], [])

    def version_folder(self, i: int) -> str | None:
        """The released docs version folder of passage ``i``'s page when that version is neither the current docs
        nor the one served by default (``latest``), else None (schemas/docs_versions.py ``version_folder``).
        Legacy pages have their own marker; this covers versions whose standing the snapshot cannot tell (no
        versions file indexed), which still are frozen copies of an earlier release."""
        doc = self.chunk_doc[i]
        if doc not in self._version_folders:  # the trust prior asks for every row: once per document
            self._version_folders[doc] = self._version_folder(doc, i)
        return self._version_folders[doc]

    def _version_folder(self, doc: str, i: int) -> str | None:
        for r in self.doc_versions.get(doc, []):
            named = names_of(r["intervals"]) if r["component"] == DOCS_COMPONENT else None
            if named and (named[0] == CURRENT or CURRENT in named[1] or LATEST in named[1]):
                return None
            if r["component"] == DOCS_COMPONENT and r["constraint"] == CURRENT:
                return None
        return version_folder(self.chunks.value("path", i))

    def deprecation_rows(self, i: int) -> list[dict]:
        return self.chunk_deprecations.get(self.chunk_ids[i], []) + self.doc_deprecations.get(self.chunk_doc[i], [])


def row_positions(values: pa.ChunkedArray, keys: pa.ChunkedArray) -> np.ndarray:
    """For each value, its row in ``keys`` (-1 where absent)."""
    idx = pc.index_in(values, value_set=keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys)
    return np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _rows_by_value(column: pa.ChunkedArray) -> dict[str, np.ndarray]:
    """Per value, the rows holding it (ascending), values in order of first appearance."""
    if column.null_count:  # not in a valid snapshot; grouped one by one as before
        lists: dict = defaultdict(list)
        for i, v in enumerate(column.to_pylist()):
            lists[v].append(i)
        return {v: np.asarray(rows, dtype=np.int64) for v, rows in lists.items()}
    if len(column) == 0:
        return {}
    enc = pc.dictionary_encode(column).combine_chunks()  # codes in order of first appearance
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(enc.dictionary)))[:-1]
    return dict(zip(enc.dictionary.to_pylist(), np.split(order, bounds), strict=True))


def _read(path: Path, skip: tuple[str, ...] = (), rows: int | None = None, where: str = "") -> pa.Table:
    f = pq.ParquetFile(path)
    # the footer's row count against the manifest's, before a row is decoded: a small file can expand to far more
    # rows than the build wrote (a hostile export's table would take the memory before any other check)
    if rows is not None and f.metadata.num_rows != rows:
        raise SnapshotError(f"{where}: {path.name} holds {f.metadata.num_rows} rows, the manifest says {rows}")
    if not skip:
        return f.read()
    return f.read(columns=[c for c in f.schema_arrow.names if c not in skip])


def _empty():
    return pa.table({})


def _memoised(memo: dict, rows: list[int], limit: int, compute) -> list:
    """Each row's value from ``memo``, the missing ones computed together by ``compute(rows)`` and kept; the memo
    is emptied when it would pass ``limit`` (bounded memory; a rare refill costs less than an LRU's bookkeeping)."""
    got = [memo.get(r) for r in rows]
    missing = [r for r, value in zip(rows, got, strict=True) if value is None]
    if missing:
        if len(memo) + len(missing) > limit:
            memo.clear()
        fresh = dict(zip(missing, compute(missing), strict=True))
        memo.update(fresh)
        got = [fresh[r] if value is None else value for r, value in zip(rows, got, strict=True)]
    return got
