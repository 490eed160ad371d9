"""A snapshot's evidence by document and by passage: verifications, version constraints, deprecations and
content-risk findings (small tables: rows per document, not per passage), read once when the snapshot opens.

Version constraints are handed out typed (``VersionRow``, the version_targets table's columns): the version match
(query/target_match.py), the docs version names and the listing read their fields by name, checked by mypy.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import pyarrow as pa

from trustindex.query.columns import Columns
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.docs_versions import CURRENT, LATEST, names_of, version_folder


@dataclass(frozen=True, slots=True)
class VersionRow:
    """One stored version constraint: a row of the version_targets table (schemas/tables.py ``VERSION_TARGETS``)."""

    doc_id: str
    chunk_id: str | None  # None: the constraint holds for the whole document
    component: str
    constraint: str
    intervals: str | None  # the parsed constraint (schemas/versions.py ConstraintSet JSON), when status is parsed
    origin: str
    status: str
    detail: str | None

    @classmethod
    def of(cls, row: dict) -> VersionRow:
        return cls(**{name: row[name] for name in VERSION_ROW_FIELDS})


VERSION_ROW_FIELDS = tuple(VersionRow.__dataclass_fields__)


class SnapshotEvidence:
    """The evidence part of ``SnapshotData`` (query/reader.py), grouped by document and by passage."""

    n: int
    chunk_ids: list[str]
    chunk_doc: list[str]
    chunks: Columns

    def _group_evidence(self, t: dict[str, pa.Table]) -> None:
        self._version_folders: dict[str, str | None] = {}  # by document: its passages share its path
        self.verifications: dict[str, list[dict]] = defaultdict(list)
        for r in _rows(t, "verifications"):
            self.verifications[r["doc_id"]].append(r)
        self.doc_versions: dict[str, list[VersionRow]] = defaultdict(list)
        self.chunk_versions: dict[str, list[VersionRow]] = defaultdict(list)
        self.components: dict[str, set[str]] = defaultdict(set)
        for v in map(VersionRow.of, _rows(t, "version_targets")):
            (self.chunk_versions[v.chunk_id] if v.chunk_id else self.doc_versions[v.doc_id]).append(v)
            self.components[v.component].add(v.constraint)
        self.doc_deprecations: dict[str, list[dict]] = defaultdict(list)
        self.chunk_deprecations: dict[str, list[dict]] = defaultdict(list)
        for r in _rows(t, "deprecations"):
            (self.chunk_deprecations[r["chunk_id"]] if r["chunk_id"] else self.doc_deprecations[r["doc_id"]]).append(r)
        # Content-risk findings by passage (a snapshot built before content risk was read has none).
        self.content_risks: dict[str, list[dict]] = defaultdict(list)
        for r in _rows(t, "content_risk"):
            self.content_risks[r["chunk_id"]].append(r)

    def version_rows(self, i: int) -> dict[str, list[VersionRow]]:
        """Passage ``i``'s constraints by component; chunk-scoped ones override document-scoped ones."""
        out: dict[str, list[VersionRow]] = defaultdict(list)
        for r in self.doc_versions.get(self.chunk_doc[i], []):
            out[r.component].append(r)
        chunk_rows = self.chunk_versions.get(self.chunk_ids[i], [])
        # first-seen order, not a set's: the response lists the components in this order, and a set of strings
        # iterates in an order that changes with each process's hash seed
        for comp in dict.fromkeys(r.component for r in chunk_rows):
            out[comp] = [r for r in chunk_rows if r.component == comp]
        return out

    def content_risk_rows(self, i: int) -> list[dict]:
        return self.content_risks.get(self.chunk_ids[i], [])

    def deprecation_rows(self, i: int) -> list[dict]:
        return self.chunk_deprecations.get(self.chunk_ids[i], []) + self.doc_deprecations.get(self.chunk_doc[i], [])

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
            named = names_of(r.intervals or "") if r.component == DOCS_COMPONENT else None
            if named and (named[0] == CURRENT or CURRENT in named[1] or LATEST in named[1]):
                return None
            if r.component == DOCS_COMPONENT and r.constraint == CURRENT:
                return None
        return version_folder(self.chunks.value("path", i))


def _rows(t: dict[str, pa.Table], name: str) -> list[dict]:
    return t[name].to_pylist() if name in t else []
