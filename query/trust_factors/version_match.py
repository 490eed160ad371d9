"""Version match: how a passage's versions meet the query's targets (query/target_match.py works it out).

It depends on the query, so it has no prior: the search works it out per candidate when the query has targets
(query/index.py), and a hit without targets shows the passage's own constraints.
"""

from __future__ import annotations

from trustindex.query.target_match import version_factor
from trustindex.query.trust_factors.base import HitContext, PassagesContext
from trustindex.schemas.hit_factors import Factor, VersionEvidence


def explain(hit: HitContext) -> Factor[VersionEvidence]:
    if hit.version is not None:
        return hit.version
    factor, _excluded = version_factor(hit.data.version_rows(hit.row), hit.targets, hit.policy, hit.strict)
    return factor


def prior(passages: PassagesContext) -> None:
    return None
