"""The trust factors, one module each (schemas/trust_factors.py lists them): ``explain`` and ``prior`` side by side.

``MODULES`` holds them in the registry's order; a factor named there without a module here fails on import.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from trustindex.query.trust_factors import (
    attribution,
    content_risk,
    deprecation,
    freshness,
    page_kind,
    verification,
    version_match,
)
from trustindex.query.trust_factors.base import NO_LIFTS, HitContext, Lifts
from trustindex.schemas.hit_factors import Factor
from trustindex.schemas.trust_factors import FACTOR_NAMES

__all__ = ["NO_LIFTS", "HitContext", "Lifts", "MODULES", "explain"]

_BY_NAME: dict[str, ModuleType] = {
    "attribution": attribution,
    "verification": verification,
    "freshness": freshness,
    "page_kind": page_kind,
    "deprecation": deprecation,
    "version_match": version_match,
    "content_risk": content_risk,
}
MODULES: tuple[ModuleType, ...] = tuple(_BY_NAME[name] for name in FACTOR_NAMES)
assert set(_BY_NAME) == set(FACTOR_NAMES), "every factor of schemas/trust_factors.py has one module here"


def explain(hit: HitContext) -> dict[str, Factor[Any]]:
    """Every factor of one hit, in the registry's order (the order ``combine`` multiplies them in)."""
    return {name: module.explain(hit) for name, module in zip(FACTOR_NAMES, MODULES, strict=True)}
