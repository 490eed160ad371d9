"""What every trust factor is given: one hit to explain, or every passage of a snapshot to price at once.

A factor module (one per row of schemas/trust_factors.py) defines ``explain(hit) -> Factor[its evidence]``
(schemas/hit_factors.py: multiplier, status, evidence: what the hit shows, its multiplier exact, rounded only when
shown) and ``prior(passages) -> Prior | None`` (the same multipliers for every passage, vectorised; None for a factor
that depends on the query).  tests/query/test_trust_prior.py checks that the two agree
bit for bit on every passage of the demo corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import numpy as np

from trustindex.query.columns import row_positions
from trustindex.query.snapshot_pages import AttributionRow, DocumentRow
from trustindex.schemas.hit_factors import VersionFactor
from trustindex.schemas.policy import Policy


@dataclass(frozen=True)
class Lifts:
    """What a query lifts of a hit's doubts: a docs target (the legacy doubt), the targets the hit's own evidence
    satisfies (the same), a question about versions or changes (a changelog's), the language the question is
    written in (a page in that language, other than its source's: query/page_languages.py)."""

    docs_targeted: bool = False
    version_targeted: tuple[str, ...] = ()
    changes_asked: bool = False
    language: str | None = None


NO_LIFTS = Lifts()


@dataclass(frozen=True)
class HitContext:
    """One passage (``row``) to explain under a policy and reference day, and what the query lifts of its doubts
    (``lifts``).  ``targets``/``strict``: the query's version targets (none: the passage's own constraints are
    shown); ``version``: a version match the search already worked out for this row, used as it is."""

    data: Any  # query.reader.SnapshotData
    policy: Policy
    today: datetime
    row: int
    lifts: Lifts = NO_LIFTS
    targets: list = field(default_factory=list)
    strict: bool = False
    version: VersionFactor | None = None

    @property
    def doc_id(self) -> str:
        return self.data.chunk_doc[self.row]

    @property
    def document(self) -> DocumentRow:
        return self.data.pages.document(self.doc_id)

    @property
    def attribution(self) -> AttributionRow | None:
        return self.data.pages.attribution_of(self.doc_id)


class PassagesContext:
    """Every passage of a snapshot under a policy and reference day (what a prior is computed over)."""

    def __init__(self, data: Any, policy: Policy, today: datetime):
        self.data, self.policy, self.today = data, policy, today
        self.rows = data.chunk_doc_row  # per passage: its document's row (-1: none)

    @cached_property
    def doc_tiers(self) -> list[str | None]:
        """Per document: its attributed publisher's tier (None: unattributed)."""
        docs, attr = self.data.docs.table, self.data.attribution.table
        tiers = attr.column("tier").to_pylist()
        at = row_positions(docs.column("doc_id"), attr.column("doc_id")).tolist()
        return [tiers[r] if r >= 0 else None for r in at]

    @property
    def n_docs(self) -> int:
        return int(self.data.docs.table.num_rows)

    def per_passage(self, per_doc: np.ndarray) -> np.ndarray:
        """A per-document array read per passage (a passage without a document reads 0; the prior zeroes it)."""
        if not self.n_docs:
            return np.zeros(len(self.rows), dtype=np.float64)
        return per_doc[np.maximum(self.rows, 0)]


@dataclass(frozen=True)
class Prior:
    """A factor's multiplier per passage; ``docs_targeted``: its multiplier when the query names a docs version,
    ``changes_asked``: when the question asks about versions or changes (None: the same); ``languages``: per
    language a question may be written in, the pair (multiplier, changes_asked multiplier) with that language's
    pages lifted; ``marks``: boolean masks per passage the search reads (e.g. ``excluded``)."""

    multiplier: np.ndarray
    docs_targeted: np.ndarray | None = None
    marks: dict[str, np.ndarray] = field(default_factory=dict)
    changes_asked: np.ndarray | None = None
    languages: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def for_query(self, docs_targeted: bool, changes_asked: bool, language: str | None = None) -> np.ndarray:
        """The multiplier under what the query lifts (one factor lifts by a docs target, or by the question's
        changes and language)."""
        if docs_targeted and self.docs_targeted is not None:
            return self.docs_targeted
        if language is not None and language in self.languages:
            return self.languages[language][changes_asked]
        if changes_asked and self.changes_asked is not None:
            return self.changes_asked
        return self.multiplier


def iso(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        return v.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return str(v)
