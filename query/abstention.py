"""Why a response abstained, in one phrase a reader can act on (issue 26).

An abstained response's header would otherwise read "answer confidence 0.99" over "ABSTAINED: evidence_floor"
without saying that the passage the query matched best is the one trust set aside.  The phrase names the most
relevant candidate's problem when trust demoted or excluded it (content risk, a version the targets rule out, a
deprecation), else the threshold the search fell below.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trustindex.schemas.answer_signals import LOW_CONFIDENCE
from trustindex.schemas.policy import Policy


class Outcome(NamedTuple):
    """What the note reads of one search: its whole candidate pool (excluded ones too) and its best numbers."""

    rows: np.ndarray  # every candidate's row, before exclusion
    relevance: np.ndarray  # their own relevance
    kept: np.ndarray  # bool: the candidates left after exclusion (content risk, version)
    best_confidence: float  # over the kept ones
    answer_confidence: float | None


def abstention_note(d, policy: Policy, prior, out: Outcome, reason: str | None) -> str | None:
    if reason is None:
        return None
    if reason == "no_candidates" and not out.rows.size:
        return "no passage matches the query"
    if reason == "version_unavailable":
        return "no passage satisfies the targets"
    if out.rows.size:
        j = int(np.argmax(out.relevance))
        row = int(out.rows[j])
        if prior.flagged[row]:
            kinds = sorted({f.kind for f in d.evidence.content_risk_rows(row)})
            how = "excluded" if prior.excluded[row] else "flagged"
            return f"best match {how}: " + ", ".join(k.replace("_", " ") for k in kinds)
        if not out.kept[j]:
            return "best match fails the version targets"
        if prior.deprecated[row]:
            return "best match is deprecated or a legacy version"
    if reason == LOW_CONFIDENCE and out.answer_confidence is not None:
        return (
            f"answer confidence {out.answer_confidence:.2f} is below the policy's "
            f"{policy.match.min_answer_confidence:.2f}"
        )
    if reason == "evidence_floor":
        return (
            f"best confidence {out.best_confidence:.2f} is below the evidence floor {policy.match.evidence_floor:.2f}"
        )
    return "no passage left to answer from"
