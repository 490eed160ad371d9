"""Page kind: what the page is (extractors/page_kind.py: from its path, front matter and the site config), weighted
by the operator's ``[page_kind]`` table.  A changelog's doubt yields to a question about versions or changes
(schemas/question_form.py ``asks_about_changes``): there it weighs as release notes do."""

from __future__ import annotations

import numpy as np

from trustindex.query.snapshot_pages import DocumentRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior
from trustindex.schemas.hit_factors import Factor, PageKindEvidence
from trustindex.schemas.page_kinds import CHANGELOG, RELEASE_NOTES, UNKNOWN
from trustindex.schemas.policy import Policy


def page_kind_multiplier(kind: str | None, policy: Policy) -> float:
    """The policy's multiplier for a page kind (a snapshot without page kinds reads ``unknown``)."""
    return policy.page_kind.of(kind)


def page_kind_factor(row: DocumentRow | dict, policy: Policy, changes_asked: bool = False) -> Factor[PageKindEvidence]:
    """The status is the kind, the evidence the rule that named it (and, for a changelog, whether the question asked
    about changes, which lifts its doubt)."""
    doc = DocumentRow.of(row)
    kind = doc.page_kind or UNKNOWN
    reason = doc.page_kind_reason or "the snapshot was built before pages had a kind"
    if kind != CHANGELOG:
        return Factor(page_kind_multiplier(kind, policy), kind, PageKindEvidence(kind, reason))
    lifted = RELEASE_NOTES if changes_asked else kind
    return Factor(page_kind_multiplier(lifted, policy), kind, PageKindEvidence(kind, reason, changes_asked))


def explain(hit: HitContext) -> Factor[PageKindEvidence]:
    return page_kind_factor(hit.document, hit.policy, hit.lifts.changes_asked)


def prior(passages: PassagesContext) -> Prior:
    docs = passages.data.docs.table
    kinds = docs.column("page_kind").to_pylist() if "page_kind" in docs.schema.names else [None] * passages.n_docs
    per_doc = np.array([page_kind_multiplier(k, passages.policy) for k in kinds], dtype=np.float64)
    asked = [RELEASE_NOTES if k == CHANGELOG else k for k in kinds]
    lifted = np.array([page_kind_multiplier(k, passages.policy) for k in asked], dtype=np.float64)
    return Prior(passages.per_passage(per_doc), changes_asked=passages.per_passage(lifted))
