"""Stored verification links, typed: one ``VerificationRow`` per row of the verifications table, grouped by document
when the snapshot opens (query/evidence.py), read by field by the verification factor and the passage listing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, OPERATOR

_CLASS_OF_METHOD = {"signature": AUTHENTICATED, "ledger": OPERATOR}


@dataclass(frozen=True, slots=True)
class VerificationRow:
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

    @classmethod
    def of(cls, row: dict | VerificationRow) -> VerificationRow:
        if isinstance(row, VerificationRow):
            return row
        values: dict[str, Any] = {name: row.get(name) for name in VERIFICATION_ROW_FIELDS}
        values["evidence_class"] = values["evidence_class"] or _CLASS_OF_METHOD.get(values["method"], CLAIMED)
        return cls(**values)


VERIFICATION_ROW_FIELDS = tuple(VerificationRow.__dataclass_fields__)
