"""A snapshot's evidence by document and by passage: verifications, version constraints, deprecations and
content-risk findings (small tables: rows per document, not per passage), read once when the snapshot opens.

Version constraints are handed out typed (``VersionRow``, the version_targets table's columns): the version match
(query/target_match.py), the docs version names and the listing read their fields by name, checked by mypy.  Their
component names are merged as they are read (query/component_names.py: one name per component, the stored name
kept in the detail), and each page gets the rows its docs version's map infers for it (query/version_inference.py).
"""

from __future__ import annotations

from collections import defaultdict
from copy import copy
from dataclasses import replace

import pyarrow as pa

from trustindex.query.component_names import snapshot_names
from trustindex.query.evidence_rows import DeprecationRow, RiskRow, VerificationRow
from trustindex.query.snapshot_passages import Passages
from trustindex.query.target_match import docs_names
from trustindex.query.version_inference import inferred_rows, pages_of
from trustindex.query.version_rows import VERSION_ROW_FIELDS, InferredRow, VersionRow
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.docs_versions import (
    CURRENT,
    LATEST,
    LEGACY_MARKER,
    folder_version_key,
    names_of,
    superseded_by,
    version_folder,
)
from trustindex.schemas.tables import doc_id_of

__all__ = ["VERSION_ROW_FIELDS", "Evidence", "InferredRow", "VersionRow"]


class Evidence:
    """The evidence of one snapshot's ``passages``, grouped by document and by passage, read from its tables ``t``
    (by table name) under the merged component names of its ``registry``."""

    def __init__(self, t: dict[str, pa.Table], registry: ComponentRegistry, passages: Passages):
        self.passages = passages
        self._version_folders: dict[str, str | None] = {}  # by document: its passages share its path
        self._newer_folders: dict[tuple[str, str], int] | None = None  # by (source, folder), built on first ask
        self._docs_names: dict[str, str] | None = None
        self.verifications: dict[str, list[VerificationRow]] = defaultdict(list)
        for link in map(VerificationRow.of, _rows(t, "verifications")):
            self.verifications[link.doc_id].append(link)
        self._group_versions(t, registry)
        self.doc_deprecations: dict[str, list[DeprecationRow]] = defaultdict(list)
        self.chunk_deprecations: dict[str, list[DeprecationRow]] = defaultdict(list)
        for m in map(DeprecationRow.of, _rows(t, "deprecations")):
            (self.chunk_deprecations[m.chunk_id] if m.chunk_id else self.doc_deprecations[m.doc_id]).append(m)
        # Content-risk findings by passage (a snapshot built before content risk was read has none).
        self.content_risks: dict[str, list[RiskRow]] = defaultdict(list)
        for f in map(RiskRow.of, _rows(t, "content_risk")):
            self.content_risks[f.chunk_id].append(f)

    def within(self, docs: set[str]) -> Evidence:
        """This evidence narrowed to the documents ``docs`` (a scoped view's): their version rows, the components and
        constraints they name, and the component names a request may use, resolve to or be offered (did you mean)."""
        scoped = copy(self)
        scoped._docs_names = None
        scoped.doc_versions = defaultdict(list, {d: rs for d, rs in self.doc_versions.items() if d in docs})
        scoped.chunk_versions = defaultdict(
            list, {c: rs for c, rs in self.chunk_versions.items() if rs and rs[0].doc_id in docs}
        )
        scoped.components = defaultdict(set)
        for rows in (scoped.doc_versions, scoped.chunk_versions):
            for rs in rows.values():
                for r in rs:
                    scoped.components[r.component].add(r.constraint)
        scoped.component_names = self.component_names.within(set(scoped.components))
        return scoped

    def docs_names(self) -> dict[str, str]:
        """The docs version names of the version rows (query/target_match.py ``docs_names``), worked out once."""
        names = self._docs_names
        if names is None:
            rows = [r for rs in (*self.doc_versions.values(), *self.chunk_versions.values()) for r in rs]
            names = self._docs_names = docs_names([r for r in rows if r.component == DOCS_COMPONENT])
        return names

    def _group_versions(self, t: dict[str, pa.Table], registry: ComponentRegistry) -> None:
        """Version rows by document and passage under merged names, then what each page's docs version infers."""
        stored = [VersionRow.of(r) for r in _rows(t, "version_targets")]
        self.component_names = snapshot_names(t, registry)
        self.doc_versions: dict[str, list[VersionRow]] = defaultdict(list)
        self.chunk_versions: dict[str, list[VersionRow]] = defaultdict(list)
        self.components: dict[str, set[str]] = defaultdict(set)
        by_doc_chunks: dict[str, list[VersionRow]] = defaultdict(list)
        for v in map(self._merged, stored):
            if v.chunk_id:
                self.chunk_versions[v.chunk_id].append(v)
                by_doc_chunks[v.doc_id].append(v)
            else:
                self.doc_versions[v.doc_id].append(v)
            self.components[v.component].add(v.constraint)
        documents = t["documents"].select(["doc_id", "source", "path"]).to_pylist() if "documents" in t else []
        pages = pages_of(documents, self.doc_versions)
        inferred = inferred_rows(pages, self.doc_versions, by_doc_chunks, self._folder_component)
        for doc_id, rows in inferred.items():
            self.doc_versions[doc_id].extend(rows)

    def _folder_component(self, folder: str) -> str:
        """The merged name of a release-notes folder's component (the registry's id when it knows the folder)."""
        return self.component_names.resolve(folder).component or folder

    def _merged(self, v: VersionRow) -> VersionRow:
        """A stored row under its merged component name; the detail keeps the name as stored."""
        name = self.component_names.of(v.component)
        if name == v.component:
            return v
        note = f"written as {v.component!r}"
        return replace(v, component=name, detail=f"{note}; {v.detail}" if v.detail else note)

    def version_rows(self, i: int) -> dict[str, list[VersionRow]]:
        """Passage ``i``'s constraints by component; chunk-scoped ones override document-scoped ones."""
        out: dict[str, list[VersionRow]] = defaultdict(list)
        for r in self.doc_versions.get(self.passages.chunk_doc[i], []):
            out[r.component].append(r)
        chunk_rows = self.chunk_versions.get(self.passages.chunk_ids[i], [])
        # first-seen order, not a set's: the response lists the components in this order, and a set of strings
        # iterates in an order that changes with each process's hash seed
        for comp in dict.fromkeys(r.component for r in chunk_rows):
            out[comp] = [r for r in chunk_rows if r.component == comp]
        return out

    def superseding_rows(self, i: int) -> dict[str, list[VersionRow]] | None:
        """The document-scoped rows (by component) of the current page a legacy passage ``i``'s page was copied to
        (its ``superseded_by``), or None when it has none."""
        for r in self.deprecation_rows(i):
            newer = superseded_by(r.reason) if r.marker == LEGACY_MARKER else None
            if newer:
                out: dict[str, list[VersionRow]] = defaultdict(list)
                for v in self.doc_versions.get(doc_id_of(self.passages.chunks.value("source", i), newer), []):
                    out[v.component].append(v)
                return out
        return None

    def content_risk_rows(self, i: int) -> list[RiskRow]:
        return self.content_risks.get(self.passages.chunk_ids[i], [])

    def deprecation_rows(self, i: int) -> list[DeprecationRow]:
        p = self.passages
        return self.chunk_deprecations.get(p.chunk_ids[i], []) + self.doc_deprecations.get(p.chunk_doc[i], [])

    def version_folder(self, i: int) -> str | None:
        """The released docs version folder of passage ``i``'s page when that version is neither the current docs
        nor the one served by default (``latest``), else None (schemas/docs_versions.py ``version_folder``).
        Legacy pages have their own marker; this covers versions whose standing the snapshot cannot tell (no
        versions file indexed), which still are frozen copies of an earlier release."""
        doc = self.passages.chunk_doc[i]
        if doc not in self._version_folders:  # the trust prior asks for every row: once per document
            self._version_folders[doc] = self._version_folder(doc, i)
        return self._version_folders[doc]

    def newer_older_versions(self, i: int) -> int:
        """How many released versions of passage ``i``'s docs (same source, same docs plugin) are newer than its
        page's and still older than the current docs (each a ``version_folder`` of some page): 0 for the newest of
        them.  A site that keeps many versions keeps near-copies of one page in each; the deprecation factor doubts
        a page once more for each such newer version, so the copies rank newest first and the oldest sink."""
        folder = self.version_folder(i)
        if folder is None:
            return 0
        if self._newer_folders is None:
            self._newer_folders = self._rank_folders()
        return self._newer_folders.get((self.passages.chunks.value("source", i), folder), 0)

    def _rank_folders(self) -> dict[tuple[str, str], int]:
        p = self.passages
        first_row = {doc: i for i, doc in reversed(list(enumerate(p.chunk_doc)))}  # one row per document
        by_plugin: dict[tuple[str, str], set[str]] = defaultdict(set)
        for i in first_row.values():
            if folder := self.version_folder(i):
                by_plugin[(p.chunks.value("source", i), folder_version_key(folder)[0])].add(folder)
        ranks = {}
        for (source, _), folders in by_plugin.items():
            for n, folder in enumerate(sorted(folders, key=folder_version_key, reverse=True)):
                ranks[(source, folder)] = n
        return ranks

    def _version_folder(self, doc: str, i: int) -> str | None:
        for r in self.doc_versions.get(doc, []):
            named = names_of(r.intervals or "") if r.component == DOCS_COMPONENT else None
            if named and (named[0] == CURRENT or CURRENT in named[1] or LATEST in named[1]):
                return None
            if r.component == DOCS_COMPONENT and r.constraint == CURRENT:
                return None
        return version_folder(self.passages.chunks.value("path", i))


def _rows(t: dict[str, pa.Table], name: str) -> list[dict]:
    return t[name].to_pylist() if name in t else []
