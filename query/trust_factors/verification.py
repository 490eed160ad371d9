"""Verification: the tier multiplier of the best live link that vouches for the document's current content."""

from __future__ import annotations

import numpy as np

from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior, iso
from trustindex.schemas.policy import TIERS, Policy
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, OPERATOR

_TIER_RANK = {t: i for i, t in enumerate(TIERS)}  # foundation first: a lower rank is a higher tier
_UNKNOWN_RANK = _TIER_RANK["unknown"]
_CLASS_OF_METHOD = {"signature": AUTHENTICATED, "ledger": OPERATOR}


def home_tier_of(attr: dict | None) -> str | None:
    """The tier of the document's attributed publisher: what claimed evidence may lend at most."""
    return attr["tier"] if attr else None


def evidence_class_of(link: dict) -> str:
    """The link's evidence class; rows written before the column existed get the class of their method."""
    return link.get("evidence_class") or _CLASS_OF_METHOD.get(link["method"], CLAIMED)


def lent_tier(link: dict, home_tier: str | None, policy: Policy) -> tuple[str, str | None]:
    """The tier a link lends the document, and why it is not the verifier's own tier.

    Claimed evidence is only what the repository says, so it never crosses publishers: it lends at most the
    tier of the publisher the operator attributes the document to (``home_tier``), and nothing at all under
    ``verification.require_authenticated``.  Authenticated and operator links lend the verifier's tier.
    """
    tier = link["tier"]
    if tier == "unknown" or evidence_class_of(link) != CLAIMED:
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


def verification_factor(links: list[dict], policy: Policy, home_tier: str | None) -> dict:
    """The best live link's tier multiplier; ``home_tier`` is the tier of the document's attributed publisher
    (None: unattributed), the cap on what claimed evidence lends."""
    v = policy.verification
    allowed = set(v.methods)
    lent = [lent_tier(l, home_tier, policy) for l in links]
    chain = []
    for l, (tier, note) in zip(links, lent, strict=True):
        entry = {
            "verifier": l["verifier"],
            "publisher": l["publisher"] or None,
            "tier": l["tier"],
            "method": l["method"],
            "evidence_class": evidence_class_of(l),
            "lends_tier": tier,
            "commit": l["commit"],
            "date": iso(l["date"]),
            "stale": bool(l["stale"]),
            "detail": l["detail"],
        }
        if note:
            entry["note"] = note
        chain.append(entry)
    counting = [(l, c) for l, c in zip(links, chain, strict=True) if c["lends_tier"] != "unknown"]
    counting = [(l, c) for l, c in counting if l["method"] in allowed]
    live = [c for l, c in counting if not l["stale"]]
    if live:
        best = max(live, key=lambda c: v.tiers.get(c["lends_tier"], 0.0))
        return {
            "multiplier": v.tiers.get(best["lends_tier"], 0.0),
            "status": "verified",
            "evidence": {
                "best": {
                    k: best[k]
                    for k in ("verifier", "tier", "lends_tier", "evidence_class", "method", "commit", "note")
                    if k in best
                },
                "chain": chain,
            },
        }
    if counting:
        return {
            "multiplier": v.stale,
            "status": "stale",
            "evidence": {"chain": chain, "note": "content changed after every verification: no boost"},
        }
    return {"multiplier": v.unverified, "status": "unverified", "evidence": {"chain": chain}}


def explain(hit: HitContext) -> dict:
    d = hit.data
    return verification_factor(d.verifications.get(hit.doc_id, []), hit.policy, home_tier_of(hit.attribution))


def prior(passages: PassagesContext) -> Prior:
    """Per passage: its document's verification multiplier (a document without links is unverified)."""
    d, policy = passages.data, passages.policy
    per_doc = np.full(passages.n_docs, policy.verification.unverified, dtype=np.float64)
    for doc, links in d.verifications.items():
        r = d.docs.row_of(doc)
        if r is not None and links:
            per_doc[r] = verification_factor(links, policy, passages.doc_tiers[r])["multiplier"]
    return Prior(passages.per_passage(per_doc))
