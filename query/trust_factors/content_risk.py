"""Content risk: a passage the content-risk rules flagged takes each of its kinds' multipliers once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from trustindex.query.columns import row_positions
from trustindex.query.evidence_rows import RiskRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior
from trustindex.schemas.hit_factors import ContentRiskEvidence, Factor
from trustindex.schemas.policy import Policy


def content_risk_factor(findings: Sequence[dict | RiskRow], policy: Policy) -> Factor[ContentRiskEvidence]:
    """Each kind of finding the passage has takes its multiplier once; an excluded kind keeps it out of answers."""
    if not findings:
        return Factor(1.0, "no_findings", ContentRiskEvidence())
    cr = policy.content_risk
    rows = [RiskRow.of(f) for f in findings]
    kinds = sorted({f.kind for f in rows})
    mult = 1.0
    for k in kinds:
        mult *= cr.multiplier(k)
    evidence = ContentRiskEvidence(kinds, tuple(f.finding for f in rows))
    status = "excluded" if any(k in cr.exclude for k in kinds) else "flagged"
    return Factor(mult, status, evidence)


def explain(hit: HitContext) -> Factor[ContentRiskEvidence]:
    return content_risk_factor(hit.data.content_risk_rows(hit.row), hit.policy)


def prior(passages: PassagesContext) -> Prior:
    """Per passage: its multiplier; marks ``excluded`` (a kind the policy excludes) and ``flagged`` (any finding:
    such a passage lends no page-level relevance to its page-mates, query/score.py)."""
    d, n = passages.data, len(passages.rows)
    risk = np.ones(n, dtype=np.float64)
    excluded, flagged = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    chunk_ids = list(d.content_risks)
    if chunk_ids:
        at = row_positions(pa.array(chunk_ids, pa.string()), d.chunks.table.column("chunk_id")).tolist()
        for chunk_id, r in zip(chunk_ids, at, strict=True):
            if r >= 0:
                f = content_risk_factor(d.content_risks[chunk_id], passages.policy)
                risk[r], excluded[r] = f.multiplier, f.status == "excluded"
                flagged[r] = f.status != "no_findings"
    return Prior(risk, marks={"excluded": excluded, "flagged": flagged})
