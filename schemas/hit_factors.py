"""A hit's trust factors as types: one frozen type per factor of schemas/trust_factors.py, each with its evidence.

The factor modules (query/trust_factors/<name>.py) explain a hit as JSON; ``Factors.from_json`` reads it into
these types once, and ``to_json`` writes it back key for key (schemas/shape.py).  ``Factor[AttributionEvidence]``
and its six siblings are the factors' types: one generic shape, each with its own evidence type.  ``Factors``'
fields are the registry's names in its order (tests/schemas/test_hit_types.py checks them against ``FACTOR_NAMES``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

from trustindex.schemas.shape import Shape, absent_keys, optional

E = TypeVar("E", bound=Shape)  # a factor's evidence type


@dataclass(frozen=True, slots=True)
class AttributionEvidence(Shape):
    publisher: str | None
    publisher_name: str | None = optional()
    tier: str = "unknown"
    origin: str | None = optional()
    last_author: str | None = optional()
    last_author_publisher: str | None = optional()
    absent: frozenset[str] = absent_keys()


@dataclass(frozen=True, slots=True)
class VerificationLink(Shape):
    """One link of a document's verification chain, and the tier it lends (``lends_tier``, and why: ``note``)."""

    verifier: str
    publisher: str | None
    tier: str
    method: str
    evidence_class: str
    lends_tier: str
    commit: str | None
    date: str | None
    stale: bool
    detail: str | None
    note: str | None = optional()


@dataclass(frozen=True, slots=True)
class BestLink(Shape):
    """The link that lends the document its tier (a row written before evidence classes shows no class)."""

    verifier: str
    tier: str
    lends_tier: str
    evidence_class: str | None = optional()
    method: str = ""
    commit: str | None = None
    note: str | None = optional()


@dataclass(frozen=True, slots=True)
class VerificationEvidence(Shape):
    best: BestLink | None = optional()
    chain: tuple[VerificationLink, ...] = ()
    note: str | None = optional()


@dataclass(frozen=True, slots=True)
class FreshnessEvidence(Shape):
    last_modified: str | None
    last_substantive_change: str | None
    substantive_commit: str | None
    age_days: float
    half_life_days: float
    reference_date: str | None


@dataclass(frozen=True, slots=True)
class PageKindEvidence(Shape):
    page_kind: str
    reason: str
    # a changelog's only: whether the question asked about versions or changes (then it weighs as release notes)
    asked_about_changes: bool | None = optional()
    # a page in another language than most of its source's only (query/page_languages.py): the two languages, and
    # whether the question is written in the page's (then it weighs as its built kind, not other_language)
    language: str | None = optional()
    source_language: str | None = optional()
    asked_in_its_language: bool | None = optional()


@dataclass(frozen=True, slots=True)
class DeprecationMarker(Shape):
    scope: str
    reason: str
    marker: str


@dataclass(frozen=True, slots=True)
class DeprecationEvidence(Shape):
    """The markers, and a legacy page's (or an unlabelled version folder's) doubt and what lifted it."""

    markers: tuple[DeprecationMarker, ...] | None = optional()
    superseded_by: str | None = optional()
    legacy_lifted_by_docs_target: bool | None = optional()
    legacy_lifted_by_version_targets: list[str] | None = optional()
    version_folder: str | None = optional()
    version_folder_lifted_by_docs_target: bool | None = optional()
    version_folder_lifted_by_version_targets: list[str] | None = optional()
    # how many of the site's older docs versions are newer than this page's: the doubt applied once more for each
    newer_older_versions: int | None = optional()
    absent: frozenset[str] = absent_keys()

    @property
    def lifted_by(self) -> list[str] | None:
        """The version targets that lifted the doubt (the page's own evidence satisfies them)."""
        return self.legacy_lifted_by_version_targets or self.version_folder_lifted_by_version_targets


@dataclass(frozen=True, slots=True)
class DeclaredVerdict(Shape):
    status: str
    constraint: str | None
    origin: str | None


@dataclass(frozen=True, slots=True)
class Contradiction(Shape):
    constraint: str | None
    origin: str | None
    detail: str | None


@dataclass(frozen=True, slots=True)
class TargetVerdict(Shape):
    """One version target's verdict on the passage (query/target_match.py)."""

    component: str
    target: str
    status: str
    level: str | None
    distance: int | None
    detail: str | None
    constraint: str | None
    origin: str | None
    declared: DeclaredVerdict | None = optional()  # the declared constraints' verdict beside a compiled one
    inferred: bool | None = optional()  # true: the version is inferred from the docs version
    contradicted_by: Contradiction | None = optional()
    strict: str | None = optional()  # strict mode's word on an inferred version


@dataclass(frozen=True, slots=True)
class CompileResult(Shape):
    compiler: str
    passed: bool
    detail: str | None


@dataclass(frozen=True, slots=True)
class VersionEvidence(Shape):
    """With targets, each one's verdict; without, the passage's own constraints and compile results."""

    targets: tuple[TargetVerdict, ...] | None = optional()
    constraints: dict[str, list[str]] | None = optional()
    compiled: tuple[CompileResult, ...] | None = optional()


@dataclass(frozen=True, slots=True)
class RiskFinding(Shape):
    kind: str
    rule: str
    reason: str
    start_line: int
    end_line: int
    span: list[int]
    detail: str | None = optional()


@dataclass(frozen=True, slots=True)
class ContentRiskEvidence(Shape):
    kinds: list[str] | None = optional()
    findings: tuple[RiskFinding, ...] | None = optional()


@dataclass(frozen=True, slots=True)
class Factor(Shape, Generic[E]):
    """One trust factor of a hit: its multiplier, its status, and its evidence (of the factor's own type)."""

    multiplier: float
    status: str
    evidence: E


VersionFactor = Factor[VersionEvidence]  # the query's own factor: worked out per search when it has targets


@dataclass(frozen=True, slots=True)
class Factors(Shape):
    """A hit's factors, in the registry's order (the order ``trust`` multiplies them in)."""

    attribution: Factor[AttributionEvidence]
    verification: Factor[VerificationEvidence]
    freshness: Factor[FreshnessEvidence]
    page_kind: Factor[PageKindEvidence] | None = optional()  # a snapshot built before pages had a kind shows none
    deprecation: Factor[DeprecationEvidence] | None = None
    version_match: Factor[VersionEvidence] | None = None
    content_risk: Factor[ContentRiskEvidence] | None = optional()  # one built before content risk shows none

    def shown(self) -> dict[str, Factor[Any]]:
        """The factors present, by name, in order."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}

    def multiplier(self, name: str) -> float:
        """A factor's multiplier (1.0 for one the hit does not show)."""
        factor = getattr(self, name)
        return 1.0 if factor is None else factor.multiplier

    @property
    def trust(self) -> float:
        """The product of the multipliers, clamped to [0, 1] (query/trust.py's ``combine``)."""
        return min(1.0, max(0.0, math.prod(f.multiplier for f in self.shown().values())))


FACTOR_FIELDS = tuple(f.name for f in fields(Factors))
