"""Attribution: the multiplier of the tier of the publisher the operator attributes the document to."""

from __future__ import annotations

import numpy as np

from trustindex.query.snapshot_pages import AttributionRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior
from trustindex.schemas.hit_factors import AttributionEvidence, Factor
from trustindex.schemas.policy import Policy

# an unattributed document shows its publisher (None) and tier only
_UNATTRIBUTED = AttributionEvidence(
    None, tier="unknown", absent=frozenset({"publisher_name", "origin", "last_author", "last_author_publisher"})
)


def attribution_factor(row: AttributionRow | dict | None, policy: Policy) -> Factor[AttributionEvidence]:
    if row is None:
        return Factor(policy.attribution.tiers.unknown, "unknown_publisher", _UNATTRIBUTED)
    attr = AttributionRow.of(row)
    tier = attr.tier
    evidence = AttributionEvidence(
        publisher=attr.publisher,
        publisher_name=attr.publisher_name,
        tier=tier,
        origin=attr.origin,
        last_author=attr.author_name or None,
        last_author_publisher=attr.author_publisher or None,
    )
    return Factor(
        policy.attribution.tiers.of(tier), "attributed" if tier != "unknown" else "unknown_publisher", evidence
    )


def attribution_multipliers(tiers: list[str | None], policy: Policy) -> np.ndarray:
    """Per document: its publisher tier's multiplier (a document without attribution is ``unknown``)."""
    table = policy.attribution.tiers
    return np.array([table.of(t) for t in tiers], dtype=np.float64)


def explain(hit: HitContext) -> Factor[AttributionEvidence]:
    return attribution_factor(hit.attribution, hit.policy)


def prior(passages: PassagesContext) -> Prior:
    return Prior(passages.per_passage(attribution_multipliers(passages.doc_tiers, passages.policy)))
