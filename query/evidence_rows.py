"""A snapshot's small evidence tables, typed: one frozen row type per table (verifications, deprecations, content
risk), read once when the snapshot opens (query/evidence.py) and read by field by the trust factors and the
passage listing.  ``of`` also takes a row as a dict (a table's ``to_pylist``), as tests and tools hand them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from trustindex.schemas.hit_factors import DeprecationMarker, RiskFinding
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, OPERATOR

_CLASS_OF_METHOD = {"signature": AUTHENTICATED, "ledger": OPERATOR}


class StoredRow:
    """A stored row read by its type's field names."""

    __slots__ = ()

    @classmethod
    def of(cls, row: dict | Self) -> Self:
        if isinstance(row, cls):
            return row
        values: dict[str, Any] = {name: row.get(name) for name in cls.__dataclass_fields__}  # type: ignore[attr-defined,union-attr]
        return cls(**values)


@dataclass(frozen=True, slots=True)
class VerificationRow(StoredRow):
    """One verification link: a row of the verifications table (schemas/tables.py ``VERIFICATIONS``)."""

    doc_id: str
    verifier: str
    publisher: str | None
    tier: str
    method: str
    commit: str | None
    date: Any  # a timestamp as stored (query/trust_factors/base.py ``iso`` writes it)
    stale: bool
    detail: str | None
    evidence_class: str  # rows written before the column existed get the class of their method

    def __post_init__(self) -> None:
        if not self.evidence_class:
            object.__setattr__(self, "evidence_class", _CLASS_OF_METHOD.get(self.method, CLAIMED))


@dataclass(frozen=True, slots=True)
class DeprecationRow(StoredRow):
    """One deprecation marker: a row of the deprecations table (``DEPRECATIONS``; no chunk_id: the document's)."""

    doc_id: str
    chunk_id: str | None
    scope: str
    reason: str
    marker: str

    def shown(self) -> DeprecationMarker:
        return DeprecationMarker(self.scope, self.reason, self.marker)


@dataclass(frozen=True, slots=True)
class RiskRow:
    """One content-risk finding: a row of the content_risk table (``CONTENT_RISK``), kept as the hit shows it."""

    chunk_id: str  # "" in a finding handed as a dict without one (a test's)
    finding: RiskFinding

    @property
    def kind(self) -> str:
        return self.finding.kind

    @classmethod
    def of(cls, row: dict[str, Any] | RiskRow) -> RiskRow:
        if isinstance(row, RiskRow):
            return row
        lines = {name: row[name] for name in _FINDING_COLUMNS}
        span = [row["start_char"], row["end_char"]]
        return cls(row.get("chunk_id", ""), RiskFinding(**lines, span=span, detail=row["detail"] or None))


_FINDING_COLUMNS = ("kind", "rule", "reason", "start_line", "end_line")  # as stored and as shown
