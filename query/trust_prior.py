"""The query-independent part of every passage's trust, as one array per (policy, day).

Every factor of schemas/trust_factors.py that does not depend on the query gives its multiplier for every passage
at once (its ``prior`` in query/trust_factors/), so they are multiplied once per (policy, day) and a search only
looks up its candidates' rows; version_match depends on the query's targets and stays per candidate
(``query.index``).  The explanations (each factor's ``explain``) are built for the returned hits only; each
factor's two halves sit side by side in one module, and tests/query/test_trust_prior.py checks that every passage's
prior equals the product of its explained multipliers.

At 100k passages this takes the per-candidate Python work of a search from ~10 ms to ~0.1 ms (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from trustindex.query.trust_factors import MODULES
from trustindex.query.trust_factors.attribution import attribution_multipliers
from trustindex.query.trust_factors.base import PassagesContext, Prior
from trustindex.query.trust_factors.freshness import freshness_multipliers
from trustindex.schemas.policy import Policy

__all__ = ["TrustPrior", "attribution_multipliers", "freshness_multipliers"]


class TrustPrior:
    """``base[row]``: the product of the query-independent factors of passage ``row``, in the registry's order
    (``for_targets(True)``: with a docs target, which lifts the legacy-version doubt); the factors' marks
    (``excluded``, ``flagged``, ``deprecated``, ``legacy``, ``older``) as boolean arrays per passage."""

    def __init__(self, data, policy: Policy, today: datetime):
        self.key = (policy.policy_id, today)
        passages = PassagesContext(data, policy, today)
        priors: list[Prior] = [p for p in (m.prior(passages) for m in MODULES) if p is not None]
        base = np.ones(len(passages.rows), dtype=np.float64)
        targeted = base
        marks: dict[str, np.ndarray] = {}
        for p in priors:
            base = base * p.multiplier
            targeted = targeted * (p.multiplier if p.docs_targeted is None else p.docs_targeted)
            marks.update(p.marks)
        has_doc = passages.rows >= 0
        self.base = np.where(has_doc, base, 0.0)
        self.base_docs_targeted = np.where(has_doc, targeted, 0.0)
        self.excluded, self.flagged = marks["excluded"], marks["flagged"]
        self.flagged_rows = np.flatnonzero(self.flagged)
        self.deprecated, self.legacy, self.older = marks["deprecated"], marks["legacy"], marks["older"]

    def for_targets(self, docs_targeted: bool) -> np.ndarray:
        return self.base_docs_targeted if docs_targeted else self.base
