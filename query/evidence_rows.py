"""A snapshot's small evidence tables, typed: one frozen row type per table (verifications, deprecations, content
risk), read once when the snapshot opens (query/evidence.py) and read by field by the trust factors and the
passage listing.  ``of`` also takes a row as a dict (a table's ``to_pylist``), as tests and tools hand them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from trustindex.schemas.hit_factors import DeprecationMarker, RiskFinding
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, OPERATOR

_CLASS_OF_METHOD = {"signature": AUTHENTICATED, "ledger": OPERATOR}


class _Row:
    """A stored row read by its type's field names."""

    __slots__ = ()

    @classmethod
    def of(cls, row: dict | Self) -> Self:
        if isinstance(row, cls):
            return row
        values: dict[str, Any] = {name: row.get(name) for name in cls.__dataclass_fields__}  # type: ignore[attr-defined,union-attr]
        return cls(**values)


@dataclass(frozen=True, slots=True)
class VerificationRow(_Row):
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
class DeprecationRow(_Row):
    """One deprecation marker: a row of the deprecations table (``DEPRECATIONS``; no chunk_id: the document's)."""

    doc_id: str
    chunk_id: str | None
    scope: str
    reason: str
    marker: str

    def shown(self) -> DeprecationMarker:
        return DeprecationMarker(self.scope, self.reason, self.marker)


@dataclass(frozen=True, slots=True)
class RiskRow(_Row):
    """One content-risk finding: a row of the content_risk table (``CONTENT_RISK``)."""

    doc_id: str
    chunk_id: str
    kind: str
    rule: str
    reason: str
    start_line: int
    end_line: int
    start_char: int
    end_char: int
    detail: str | None

    def shown(self) -> RiskFinding:
        span = [self.start_char, self.end_char]
        return RiskFinding(self.kind, self.rule, self.reason, self.start_line, self.end_line, span, self.detail or None)
