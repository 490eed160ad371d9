"""Stored version constraints, typed: one ``VersionRow`` per row of the version_targets table, and the rows a
page inherits from its docs version (``InferredRow``, query/version_inference.py; never stored)."""

from __future__ import annotations

from dataclasses import dataclass


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


@dataclass(frozen=True, slots=True)
class InferredRow(VersionRow):
    """What a page inherits from its docs version's map (origin ``inferred``); ``page``: the page's own
    chunk-scoped rows of the same component, which a match reads as possible contradictions."""

    page: tuple[VersionRow, ...] = ()
