"""Verification: the tier multiplier of the best live link that vouches for the document's current content."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trustindex.query.evidence_rows import VerificationRow
from trustindex.query.snapshot_pages import AttributionRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior, iso
from trustindex.schemas.hit_factors import BestLink, Factor, VerificationEvidence, VerificationLink
from trustindex.schemas.policy import TIERS, Policy
from trustindex.schemas.tables import CLAIMED

_TIER_RANK = {t: i for i, t in enumerate(TIERS)}  # foundation first: a lower rank is a higher tier
_UNKNOWN_RANK = _TIER_RANK["unknown"]


def home_tier_of(attr: AttributionRow | dict | None) -> str | None:
    """The tier of the document's attributed publisher: what claimed evidence may lend at most."""
    return AttributionRow.of(attr).tier if attr else None


def evidence_class_of(link: dict | VerificationRow) -> str:
    """The link's evidence class; rows written before the column existed get the class of their method."""
    return VerificationRow.of(link).evidence_class


def lent_tier(link: dict | VerificationRow, home_tier: str | None, policy: Policy) -> tuple[str, str | None]:
    """The tier a link lends the document, and why it is not the verifier's own tier.

    Claimed evidence is only what the repository says, so it never crosses publishers: it lends at most the
    tier of the publisher the operator attributes the document to (``home_tier``), and nothing at all under
    ``verification.require_authenticated``.  Authenticated and operator links lend the verifier's tier.
    """
    row = VerificationRow.of(link)
    tier = row.tier
    if tier == "unknown" or row.evidence_class != CLAIMED:
        return tier, None
    if policy.verification.require_authenticated:
        return "unknown", "claimed evidence gives no boost: the policy requires authenticated verification"
    home = home_tier or "unknown"
    if _TIER_RANK.get(tier, _UNKNOWN_RANK) < _TIER_RANK.get(home, _UNKNOWN_RANK):
        return home, (
            f"claimed evidence (nothing signed) lends at most the tier of the document's own publisher: "
            f"counts as {home}, not {tier}"
        )
    return tier, None


def _shown_link(row: VerificationRow, home_tier: str | None, policy: Policy) -> VerificationLink:
    """A link of the chain as a hit shows it, with the tier it lends and why (``note``)."""
    tier, note = lent_tier(row, home_tier, policy)
    return VerificationLink(
        verifier=row.verifier,
        publisher=row.publisher or None,
        tier=row.tier,
        method=row.method,
        evidence_class=row.evidence_class,
        lends_tier=tier,
        commit=row.commit,
        date=iso(row.date),
        stale=bool(row.stale),
        detail=row.detail,
        note=note,
    )


def verification_factor(
    links: Sequence[dict | VerificationRow], policy: Policy, home_tier: str | None
) -> Factor[VerificationEvidence]:
    """The best live link's tier multiplier; ``home_tier`` is the tier of the document's attributed publisher
    (None: unattributed), the cap on what claimed evidence lends.  ``links``: rows of the verifications table."""
    v = policy.verification
    allowed = set(v.methods)
    chain = tuple(_shown_link(VerificationRow.of(link), home_tier, policy) for link in links)
    counting = [c for c in chain if c.lends_tier != "unknown" and c.method in allowed]
    live = [c for c in counting if not c.stale]
    if live:
        best = max(live, key=lambda c: v.tiers.get(c.lends_tier, 0.0))
        shown_best = BestLink(
            best.verifier, best.tier, best.lends_tier, best.evidence_class, best.method, best.commit, best.note
        )
        multiplier, status, evidence = (
            v.tiers.get(best.lends_tier, 0.0),
            "verified",
            VerificationEvidence(shown_best, chain),
        )
    elif counting:
        multiplier, status = v.stale, "stale"
        evidence = VerificationEvidence(chain=chain, note="content changed after every verification: no boost")
    else:
        multiplier, status, evidence = v.unverified, "unverified", VerificationEvidence(chain=chain)
    return Factor(multiplier, status, evidence)


def explain(hit: HitContext) -> Factor[VerificationEvidence]:
    d = hit.data
    return verification_factor(d.verifications.get(hit.doc_id, []), hit.policy, home_tier_of(hit.attribution))


def prior(passages: PassagesContext) -> Prior:
    """Per passage: its document's verification multiplier (a document without links is unverified)."""
    d, policy = passages.data, passages.policy
    per_doc = np.full(passages.n_docs, policy.verification.unverified, dtype=np.float64)
    for doc, links in d.verifications.items():
        r = d.docs.row_of(doc)
        if r is not None and links:
            per_doc[r] = verification_factor(links, policy, passages.doc_tiers[r]).multiplier
    return Prior(passages.per_passage(per_doc))
