"""Trust: the product of the seven factors of schemas/trust_factors.py, clamped to [0, 1] after the product.

trust = attribution × verification × freshness × page_kind × deprecation × version_match × content_risk.  Each factor is
defined once, its explanation beside its vectorised prior, in query/trust_factors/<name>.py; every number comes
from the policy read at query time, so editing it changes scores without a rebuild.  This module keeps the
product, the reference day, and the factors' explanations under their historical names.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from trustindex.query.trust_factors.attribution import attribution_factor
from trustindex.query.trust_factors.content_risk import content_risk_factor
from trustindex.query.trust_factors.deprecation import deprecation_factor
from trustindex.query.trust_factors.freshness import freshness_factor
from trustindex.query.trust_factors.page_kind import page_kind_factor, page_kind_multiplier
from trustindex.query.trust_factors.verification import (
    evidence_class_of,
    home_tier_of,
    lent_tier,
    verification_factor,
)
from trustindex.schemas.hit_factors import Factor

__all__ = [
    "attribution_factor",
    "combine",
    "content_risk_factor",
    "deprecation_factor",
    "evidence_class_of",
    "freshness_factor",
    "home_tier_of",
    "lent_tier",
    "page_kind_factor",
    "page_kind_multiplier",
    "reference_day",
    "verification_factor",
]


def combine(factors: dict[str, Factor[Any]]) -> float:
    product = 1.0
    for f in factors.values():
        product *= f.multiplier
    return min(1.0, max(0.0, product))


def reference_day(now: datetime | None = None) -> datetime:
    """Freshness is measured from the start of today (UTC): stable within a day."""
    now = now or datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)
