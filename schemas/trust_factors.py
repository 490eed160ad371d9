"""The trust factors: one registry of their names, order, policy sections and what a hit's breakdown shows.

trust = the product of the factors' multipliers, in this order, clamped to [0, 1] after the product.  Each factor
is defined once in ``query/trust_factors/<name>.py``: its explanation of one hit (multiplier, status, evidence)
beside its vectorised prior over every passage.  Adding a factor: a row here, that module, and its policy section
(schemas/policy_sections.py); docs/architecture.md ("Adding a trust factor") walks through it.
"""

from __future__ import annotations

from dataclasses import dataclass

# What a factor's multiplier depends on besides the policy: the query's factors have no prior (they are worked out
# per candidate at search time); the others are multiplied once per (policy, day) for every passage.
DOCUMENT, PASSAGE, QUERY = "document", "passage", "query"


@dataclass(frozen=True)
class TrustFactor:
    name: str  # the key of ``hit["factors"]`` (schemas/response.schema.json)
    section: str  # the policy section that prices it (schemas/policy_sections.py)
    depends_on: str  # DOCUMENT, PASSAGE or QUERY
    column: str  # its column in the text table of hits (query/render.py)
    shows: str  # what its evidence shows in a hit's breakdown


FACTORS: tuple[TrustFactor, ...] = (
    TrustFactor("attribution", "attribution", DOCUMENT, "attr", "the publisher, its tier and the last author"),
    TrustFactor(
        "verification", "verification", DOCUMENT, "verif", "the best live verification link and the whole chain"
    ),
    TrustFactor("freshness", "freshness", DOCUMENT, "fresh", "the last substantive change and its age in days"),
    TrustFactor("page_kind", "page_kind", DOCUMENT, "page", "what the page is and the rule that named it"),
    TrustFactor(
        "deprecation", "deprecation", PASSAGE, "depr", "deprecation markers, a legacy or unlabelled docs version"
    ),
    TrustFactor("version_match", "version", QUERY, "vers", "how the passage's versions meet the query's targets"),
    TrustFactor("content_risk", "content_risk", PASSAGE, "risk", "the content-risk findings and their kinds"),
)
FACTOR_NAMES = tuple(f.name for f in FACTORS)
