"""The five trust factors: multiplier, status and evidence, from stored evidence and the policy.

trust = attribution × verification × freshness × deprecation × version_match,
clamped to [0, 1] after the product.  Every number comes from the policy read
at query time, so editing it changes scores without a rebuild.
"""

from __future__ import annotations

from datetime import UTC, datetime

from trustindex.schemas.docs_versions import LEGACY_MARKER, superseded_by
from trustindex.schemas.policy import TIERS, Policy
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, OPERATOR

_TIER_RANK = {t: i for i, t in enumerate(TIERS)}  # foundation first: a lower rank is a higher tier
_UNKNOWN_RANK = _TIER_RANK["unknown"]
_CLASS_OF_METHOD = {"signature": AUTHENTICATED, "ledger": OPERATOR}


def attribution_factor(attr: dict | None, policy: Policy) -> dict:
    if attr is None:
        return {
            "multiplier": policy.attribution.tiers.unknown,
            "status": "unknown_publisher",
            "evidence": {"publisher": None, "tier": "unknown"},
        }
    tier = attr["tier"]
    return {
        "multiplier": policy.attribution.tiers.get(tier, policy.attribution.tiers.unknown),
        "status": "attributed" if tier != "unknown" else "unknown_publisher",
        "evidence": {
            "publisher": attr["publisher"],
            "publisher_name": attr["publisher_name"],
            "tier": tier,
            "origin": attr["origin"],
            "last_author": attr["author_name"] or None,
            "last_author_publisher": attr["author_publisher"] or None,
        },
    }


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
            "date": _iso(l["date"]),
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


def freshness_factor(doc: dict, policy: Policy, today: datetime) -> dict:
    f = policy.freshness
    sub = doc["last_substantive_change"]
    age = max(0.0, (today - sub).total_seconds() / 86400.0)
    mult = f.floor + (1.0 - f.floor) * 0.5 ** (age / f.half_life_days)
    return {
        "multiplier": mult,
        "status": "dated",
        "evidence": {
            "last_modified": _iso(doc["last_modified"]),
            "last_substantive_change": _iso(sub),
            "substantive_commit": doc["last_substantive_commit"],
            "age_days": round(age, 1),
            "half_life_days": f.half_life_days,
            "reference_date": _iso(today),
        },
    }


def deprecation_factor(
    marks: list[dict], policy: Policy, docs_targeted: bool = False, folder: str | None = None
) -> dict:
    """Deprecated content takes the deprecation multiplier; a legacy docs version's page takes the legacy one
    too, unless the query names a docs version (then it competes as that version).  ``folder``: the released
    version folder of a page no docs config labels (SnapshotData.version_folder), a milder doubt than legacy."""
    dp = policy.deprecation
    legacy = [m for m in marks if m["marker"] == LEGACY_MARKER]
    other = len(legacy) < len(marks)
    if not marks and folder is None:
        return {"multiplier": 1.0, "status": "not_deprecated", "evidence": {}}
    older = dp.legacy_docs_multiplier if legacy else (dp.version_folder_multiplier if folder else 1.0)
    mult = (dp.multiplier if other else 1.0) * (older if not docs_targeted else 1.0)
    evidence: dict = {"markers": [{"scope": m["scope"], "reason": m["reason"], "marker": m["marker"]} for m in marks]}
    if legacy:
        evidence["superseded_by"] = superseded_by(legacy[0]["reason"])
        evidence["legacy_lifted_by_docs_target"] = docs_targeted
    elif folder:
        evidence["version_folder"] = folder
        evidence["version_folder_lifted_by_docs_target"] = docs_targeted
    if other:
        status = "deprecated"
    elif legacy:
        status = "legacy_docs_version_targeted" if docs_targeted else "legacy_docs_version"
    else:
        status = "unlabelled_docs_version_targeted" if docs_targeted else "unlabelled_docs_version"
    return {"multiplier": mult, "status": status, "evidence": evidence}


def content_risk_factor(findings: list[dict], policy: Policy) -> dict:
    """Each kind of finding the passage has takes its multiplier once; an excluded kind keeps it out of answers."""
    if not findings:
        return {"multiplier": 1.0, "status": "no_findings", "evidence": {}}
    cr = policy.content_risk
    kinds = sorted({f["kind"] for f in findings})
    mult = 1.0
    for k in kinds:
        mult *= cr.multiplier(k)
    return {
        "multiplier": mult,
        "status": "excluded" if any(k in cr.exclude for k in kinds) else "flagged",
        "evidence": {
            "kinds": kinds,
            "findings": [
                {
                    "kind": f["kind"],
                    "rule": f["rule"],
                    "reason": f["reason"],
                    "start_line": f["start_line"],
                    "end_line": f["end_line"],
                    "span": [f["start_char"], f["end_char"]],
                    **({"detail": f["detail"]} if f["detail"] else {}),
                }
                for f in findings
            ],
        },
    }


def combine(factors: dict[str, dict]) -> float:
    product = 1.0
    for f in factors.values():
        product *= f["multiplier"]
    return min(1.0, max(0.0, product))


def reference_day(now: datetime | None = None) -> datetime:
    """Freshness is measured from the start of today (UTC): stable within a day."""
    now = now or datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


def _iso(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        return v.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return str(v)
