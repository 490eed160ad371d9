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
    """``base[row]``: the product of the query-independent factors of passage ``row``, in the registry's order; a
    factor's doubt that a query's own words lift is a variant of it (``for_targets``: a docs target lifts the
    legacy-version doubt, a question about changes the changelog's, a question's language the doubt of its pages
    in another language than their source's); the factors' marks (``excluded``, ``flagged``, ``deprecated``,
    ``legacy``, ``older``) as boolean arrays per passage.  A language's variant is built on its first question
    (query/page_languages.py: a snapshot with no page in another language than its source's has none, and keeps no
    factor's arrays for them)."""

    def __init__(self, data, policy: Policy, today: datetime):
        self.key = (policy.policy_id, today)
        passages = PassagesContext(data, policy, today)
        self._priors: list[Prior] = [p for p in (m.prior(passages) for m in MODULES) if p is not None]
        self._has_doc = passages.rows >= 0
        marks: dict[str, np.ndarray] = {}
        for p in self._priors:
            marks.update(p.marks)
        self._variants: dict[tuple[bool, bool, str | None], np.ndarray] = {}
        for docs_targeted in (False, True):
            for changes_asked in (False, True):
                self._variant(docs_targeted, changes_asked, None)
        self.base = self._variants[False, False, None]
        self._lifting = frozenset(lang for p in self._priors for lang in p.languages)
        if not self._lifting:  # no language variant will ever be built: the factors' arrays need not be kept
            self._priors = []
        self.excluded, self.flagged = marks["excluded"], marks["flagged"]
        self.flagged_rows = np.flatnonzero(self.flagged)
        self.deprecated, self.legacy, self.older = marks["deprecated"], marks["legacy"], marks["older"]

    def _variant(self, docs_targeted: bool, changes_asked: bool, language: str | None) -> np.ndarray:
        key = (docs_targeted, changes_asked, language)
        got = self._variants.get(key)
        if got is None:  # a question's language: built on its first question, then kept (a few per snapshot)
            base = np.ones(len(self._has_doc), dtype=np.float64)
            for p in self._priors:
                base = base * p.for_query(docs_targeted, changes_asked, language)
            got = self._variants[key] = np.where(self._has_doc, base, 0.0)
        return got

    def for_targets(self, docs_targeted: bool, changes_asked: bool = False, language: str | None = None) -> np.ndarray:
        return self._variant(docs_targeted, changes_asked, language if language in self._lifting else None)
