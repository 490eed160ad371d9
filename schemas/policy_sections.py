"""The policy's sections: one frozen dataclass per ``[section]`` of ``policy.toml``, its ranges in field metadata.

A field's metadata holds its ``Rule`` (type, and min/max for a number); a field whose type is itself a section
(``attribution.tiers``) is a sub-table.  The field order is the order ``trustindex policy --show`` prints.  Loading,
validation and ``policy_id`` live in schemas/policy.py; call sites read ``policy.freshness.floor`` (mypy checks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trustindex.schemas.content_risk import AGENT_INSTRUCTION, CREDENTIAL_PHISHING, HIDDEN_TEXT
from trustindex.schemas.page_kinds import PAGE_KINDS, UNKNOWN

TIERS = ("foundation", "partner", "third_party", "community", "unknown")

NUMBER = (int, float)  # a TOML number: an int is read as a float


@dataclass(frozen=True)
class Rule:
    """What a key accepts: ``kind`` a type, ``NUMBER``, ``[element type]`` (a list) or ``{str: str}`` (a table of
    strings); ``lo``/``hi`` bound a number."""

    kind: Any
    lo: float | None = None
    hi: float | None = None


def number(default: float, lo: float, hi: float) -> Any:
    return field(default=float(default), metadata={"rule": Rule(NUMBER, lo, hi)})


def integer(default: int, lo: int, hi: int) -> Any:
    return field(default=default, metadata={"rule": Rule(int, lo, hi)})


def flag(default: bool) -> Any:
    return field(default=default, metadata={"rule": Rule(bool)})


def named_when_set(rule_field: Any) -> Any:
    """A key that ``policy_id`` hashes only when it differs from its default: a term added switched off (issue 43's
    page_focus) leaves every policy's id, and so every response, as it was until someone sets it."""
    return field(default=rule_field.default, metadata={**rule_field.metadata, "named_when_set": True})


def text(default: str) -> Any:
    return field(default=default, metadata={"rule": Rule(str)})


def strings(*default: str) -> Any:
    return field(default=tuple(default), metadata={"rule": Rule([str])})


def numbers() -> Any:
    return field(default=(), metadata={"rule": Rule([NUMBER])})


def integers() -> Any:
    return field(default=(), metadata={"rule": Rule([int])})


def string_table(**default: str) -> Any:
    return field(default_factory=lambda: dict(default), metadata={"rule": Rule({str: str})})


def sub_table(section: type) -> Any:
    return field(default_factory=section, metadata={"section": section})


@dataclass(frozen=True)
class TierMultipliers:
    """One multiplier per publisher tier (TIERS); a name no tier has reads as ``default``."""

    foundation: float = number(1.0, 0.0, 2.0)
    partner: float = number(0.9, 0.0, 2.0)
    third_party: float = number(0.75, 0.0, 2.0)
    community: float = number(0.65, 0.0, 2.0)
    unknown: float = number(0.45, 0.0, 2.0)

    def get(self, tier: str | None, default: float) -> float:
        return float(getattr(self, tier)) if tier in TIERS else default

    def of(self, tier: str | None) -> float:
        """The tier's multiplier; ``None`` (no attribution) and a name no tier has read as ``unknown``."""
        return self.get(tier, self.unknown)


@dataclass(frozen=True)
class VerificationTiers(TierMultipliers):
    foundation: float = number(1.0, 0.0, 2.0)
    partner: float = number(0.98, 0.0, 2.0)
    third_party: float = number(0.95, 0.0, 2.0)
    community: float = number(0.93, 0.0, 2.0)
    unknown: float = number(0.9, 0.0, 2.0)


assert tuple(TierMultipliers.__dataclass_fields__) == TIERS == tuple(VerificationTiers.__dataclass_fields__)


@dataclass(frozen=True)
class Attribution:
    tiers: TierMultipliers = sub_table(TierMultipliers)


@dataclass(frozen=True)
class Verification:
    unverified: float = number(0.9, 0.0, 2.0)
    stale: float = number(0.9, 0.0, 2.0)
    tiers: VerificationTiers = sub_table(VerificationTiers)
    methods: tuple[str, ...] = strings("trailer", "merge", "signature", "ledger")
    # true: claimed links (unsigned trailers and merges) give no boost; only authenticated and ledger links do
    require_authenticated: bool = flag(False)


@dataclass(frozen=True)
class Freshness:
    half_life_days: float = number(365.0, 1.0, 36500.0)
    # The multiplier of a page whose last substantive change is long past: 0.9 keeps freshness a tie-breaker between
    # pages about the same thing; at 0.6 a stable reference page edited two years ago (0.7) lost to any page edited
    # last month (0.98) whatever either said.  React's docs with their real history (issue 43's second corpus),
    # dev half nDCG@10: floor 0.6 0.847, 0.8 0.900, 0.9 0.907, 0.95 0.902, 1.0 0.902; test confirmed 0.808 -> 0.859.
    # (The Midnight bench corpus is one commit: every page has the same age, so its order does not move.)
    floor: float = number(0.9, 0.0, 1.0)
    bulk_min_files: int = integer(10, 1, 1_000_000)
    bulk_share: float = number(0.3, 0.0, 1.0)


@dataclass(frozen=True)
class Deprecation:
    multiplier: float = number(0.35, 0.0, 1.0)
    # A page of a legacy docs version (Docusaurus: older than lastVersion) with no docs target in the query;
    # a query naming a docs version lifts it (legacy pages then compete as that version).  0.9, the unlabelled
    # folder's doubt: at 0.5 a legacy page fell out of every answer, also where it is the only page that answers
    # (the real repository's dev half: 0.5 0.807, 0.8 0.855, 0.9 0.867, 0.95 0.868; docs/architecture.md).
    legacy_docs_multiplier: float = number(0.9, 0.0, 1.0)
    # A page in a released version's folder (``*versioned_docs/version-X/``) that no docs config labels: a
    # frozen copy of an earlier release whose standing is unknown, so a milder doubt than legacy; lifted like
    # legacy by a docs target.  Real docs, dev half: 0.9 ranked files better (docs/benchmarks.md).
    version_folder_multiplier: float = number(0.9, 0.0, 1.0)
    path_patterns: tuple[str, ...] = strings("**/*-deprecated/**", "**/deprecated/**")


@dataclass(frozen=True)
class Version:
    satisfies: float = number(1.1, 0.0, 2.0)
    unknown: float = number(1.0, 0.0, 2.0)
    silent: float = number(1.0, 0.0, 2.0)
    patch_step: float = number(0.05, 0.0, 1.0)
    minor_step: float = number(0.2, 0.0, 1.0)
    near_miss_floor: float = number(0.5, 0.0, 1.0)
    # A version a page inherits from its docs version's map (query/version_inference.py) is weaker than its own:
    # satisfying by inference lifts less than satisfies, and an inferred break demotes instead of excluding
    # (strict mode keeps only satisfies either way, and an inferred one only where nothing contradicts it).
    inferred_satisfies: float = number(1.05, 0.0, 2.0)
    inferred_breaking: float = number(0.5, 0.0, 1.0)
    npm_allowlist: tuple[str, ...] = strings("@midnight-ntwrk/*", "@midnightntwrk/*")
    cargo_allowlist: tuple[str, ...] = strings("midnight-*")
    front_matter_fields: Mapping[str, str] = string_table(
        language_version="compact-language", compiler_version="compact-compiler"
    )


@dataclass(frozen=True)
class ContentRisk:
    """A passage flagged by the content-risk rules (schemas/content_risk_rules.toml) takes its kinds' multipliers;
    a kind named in ``exclude`` keeps its passages out of every answer.  One field per kind (KINDS)."""

    agent_instruction: float = number(0.3, 0.0, 1.0)
    # the characters are removed from what is served and embedded: what is left is a smaller doubt
    hidden_text: float = number(0.85, 0.0, 1.0)
    credential_phishing: float = number(0.1, 0.0, 1.0)
    exclude: tuple[str, ...] = strings()

    def multiplier(self, kind: str) -> float:
        """The kind's multiplier; a kind the policy does not know leaves the passage alone."""
        return float(getattr(self, kind)) if kind in _RISK_KINDS else 1.0


_RISK_KINDS = (AGENT_INSTRUCTION, HIDDEN_TEXT, CREDENTIAL_PHISHING)
assert _RISK_KINDS == tuple(ContentRisk.__dataclass_fields__)[:-1]


@dataclass(frozen=True)
class PageKind:
    """What a page is (schemas/page_kinds.py; read from paths, front matter and the site config at build time): each
    kind's trust multiplier.  Content written to steer AI agents (AGENTS.md, CLAUDE.md, skills, plugin prompts)
    yields to the reference written for people unless the operator raises it, and so do a page that says an AI
    model wrote it (ai_written), a changelog unless the question asks about changes, and a page in another language
    than its source's (docs/architecture.md).  One field per kind (PAGE_KINDS); measured on the judged queries
    (docs/benchmarks.md); "unknown" is a snapshot built before pages had a kind (unrouted: fusion.unrouted_yields)."""

    reference: float = number(1.0, 0.0, 2.0)
    guide: float = number(1.0, 0.0, 2.0)
    blog: float = number(1.0, 0.0, 2.0)
    release_notes: float = number(1.0, 0.0, 2.0)
    changelog: float = number(0.7, 0.0, 2.0)
    agent_instructions: float = number(0.5, 0.0, 2.0)
    ai_written: float = number(0.5, 0.0, 2.0)
    draft: float = number(1.0, 0.0, 2.0)
    code: float = number(1.0, 0.0, 2.0)
    other_language: float = number(0.5, 0.0, 2.0)  # unless the question is written in the page's language
    unknown: float = number(1.0, 0.0, 2.0)

    def of(self, kind: str | None) -> float:
        """The kind's multiplier; none (a snapshot without page kinds) and a name no kind has read as ``unknown``."""
        return float(getattr(self, kind or UNKNOWN)) if (kind or UNKNOWN) in PAGE_KINDS else self.unknown


assert tuple(PageKind.__dataclass_fields__) == PAGE_KINDS


@dataclass(frozen=True)
class Confidence:
    trust_weight: float = number(1.0, 0.0, 10.0)
    relevance_weight: float = number(1.0, 0.0, 10.0)


@dataclass(frozen=True)
class Relevance:
    # Raw cosine maps linearly from cosine_floor (0) to cosine_ceiling (1).
    cosine_floor: float = number(0.25, -1.0, 1.0)
    cosine_ceiling: float = number(0.75, -1.0, 1.0)
    # BM25 saturates as s / (s + bm25_half): a score of bm25_half gives 0.5.
    bm25_half: float = number(8.0, 0.001, 1000.0)
    # Lexical above dense: on the real-docs judged set (bench/bench_retrieval.py, dev half) 0.3/0.7 ranked
    # files better than 0.7/0.3 (nDCG@10 +0.020 dev, +0.033 test; docs/benchmarks.md).
    dense_weight: float = number(0.3, 0.0, 1.0)
    lexical_weight: float = number(0.7, 0.0, 1.0)
    # Field-aware lexical scoring: BM25 over title, headings and file name, added at this weight to the
    # passage's BM25 (query/lexical_signals.py); 0 searches the passage text alone.
    field_weight: float = number(0.0, 0.0, 10.0)
    # The query's identifiers (CamelCase, snake_case, error codes) as their own share of relevance.  Real docs,
    # dev half (244 queries): 0.2 ranked files better than 0 (nDCG@10 0.8311 -> 0.8381 dev, 0.8175 -> 0.8227
    # test; 0.1 / 0.3 / 0.4 / 0.5: 0.8339 / 0.8379 / 0.8359 / 0.8350 dev).
    identifier_weight: float = number(0.2, 0.0, 1.0)


@dataclass(frozen=True)
class Fusion:
    rrf_k: int = integer(60, 1, 10_000)
    dense_weight: float = number(1.0, 0.0, 10.0)
    lexical_weight: float = number(1.0, 0.0, 10.0)
    identifier_weight: float = number(1.0, 0.0, 10.0)
    # Passage -> page aggregation (query/pages.py): a passage's order key gains page_weight x the keys of
    # its page's next page_passages best candidates; 0 orders passages alone.
    page_weight: float = number(0.3, 0.0, 10.0)
    page_passages: int = integer(1, 0, 100)
    # Page-level dense channel (query/pages.py with_page_vector): the order key gains page_vector_weight x the
    # dense relevance of the query to the page's mean passage vector; 0 leaves it out.  Real docs, dev half: 0.1
    # ranked files best (nDCG@10 +0.010 dev, +0.005 test; docs/benchmarks.md).
    page_vector_weight: float = number(0.1, 0.0, 10.0)
    # Page-level lexical channel (query/pages.py page_term_coverage): the order key gains page_terms_weight x
    # the idf-weighted share of the query's terms found anywhere in the page; 0 leaves it out.  Real docs, dev
    # half: 0.075 ranked files best (nDCG@10 +0.002 dev, +0.009 test; docs/benchmarks.md).
    page_terms_weight: float = number(0.075, 0.0, 10.0)
    # How much of the page is about the question, and problem sections for problem reports (query/page_focus.py,
    # issue 43): the order key gains page_focus_weight x the share of the page's passages that each hold at least
    # focus_share of the query's idf-weighted terms, and problem_section_weight x 1 when the question reports a
    # problem and the passage's headings or file name a problem section (schemas/question_form.py).  0 leaves a
    # term out, and no hit shows it.
    page_focus_weight: float = named_when_set(number(0.0, 0.0, 10.0))
    focus_share: float = named_when_set(number(0.6, 0.0, 1.0))
    problem_section_weight: float = named_when_set(number(0.0, 0.0, 10.0))
    # A passage of a page the docs site does not serve (unrouted: under a "_" path segment, draft: true, a version
    # the versions file does not list; schemas/page_routes.py) ranks below every served candidate of the pool: its
    # ranking_score is x the lowest served one's (query/routes.py).  false ranks it as any other page.  (Issue 43:
    # it replaced a multiplier of 0.94 on such a page's ranking relevance, which let a draft outrank the routed page.)
    unrouted_yields: bool = flag(True)
    # One hit per page (query/candidates.py fold_pages, issue 43): a page's best candidate heads its hit and the
    # page's next same_page_shown candidates are listed under it (same_page), so k hits name k pages.  Real docs, dev
    # half: the 10 hits of a search named 5.1 pages on average, its first 5 hits 2.7; a reader of the first 10 hits'
    # files read nDCG@10 0.775 where the bench's 50 hits read as files gave 0.873 (docs/benchmarks.md).  false: every
    # passage a hit of its own.
    one_hit_per_page: bool = flag(True)
    same_page_shown: int = integer(3, 0, 50)
    # The site's links (query/page_links.py): the order key gains anchor_weight x the query's BM25 over the anchor
    # texts and navigation labels pointing at the page, saturated as s / (s + anchor_half), and authority_weight x
    # n / (n + authority_k), n the page's inbound links from other pages of its own site outside its folder.  Both
    # are shown in every hit; both weigh 0 because the test half did not agree (real docs, dev half: authority
    # 0.075 at k 3 0.8781 -> 0.8846, test 0.8493 -> 0.8476; anchor 0.05 at half 2 0.8819 dev, 0.8456 test;
    # docs/benchmarks.md).  The shapes are the dev half's best (half 2 of 2 / 4 / 8, k 3 of 3 / 5 / 10).
    anchor_weight: float = number(0.0, 0.0, 10.0)
    anchor_half: float = number(2.0, 0.01, 1000.0)
    authority_weight: float = number(0.0, 0.0, 10.0)
    authority_k: float = number(3.0, 0.01, 100_000.0)
    # The pages the question's own best passages link to (query/page_links.py cited): the order key gains
    # cited_weight x s / (s + cited_half), s the sum over the citing pages of their best loan, a loan being a citing
    # passage's relevance x min(1, its trust / the cited candidate's trust), the citing passages being the pool's
    # cited_passages most relevant eligible ones, the links those of their own site to another page.  A reference
    # page that mentions the question in passing points its readers at the page about it.  0 leaves it out, and no
    # hit shows it: the three dev halves' cross-validation chose 0.1 at 5 passages and half 1.0 (the shape kept
    # here), but the Midnight test half did not gain (0.8448 -> 0.8446; React 0.8655 -> 0.8684; docs/benchmarks.md).
    cited_weight: float = named_when_set(number(0.0, 0.0, 10.0))
    cited_passages: int = named_when_set(integer(5, 1, 100))
    cited_half: float = named_when_set(number(1.0, 0.01, 100.0))
    candidate_depth: int = integer(100, 1, 100_000)
    # Per-page cap on each channel's candidates (query/fusion.py per_page_capped): a page gives a channel at
    # most this many passages before the channel is cut to candidate_depth, so one long page cannot fill the
    # pool; 0 leaves the channels uncapped.  Real docs (files a response names, also_in included): 2 ranked
    # files better than 0 (nDCG@10 0.8727 -> 0.8757 dev, +15/-5 queries; 0.8471 -> 0.8483 test; caps 1 / 3 /
    # 5 / 10: 0.8433 / 0.8741 / 0.8740 / 0.8730 dev, channels read 4x deep).
    max_passages_per_page: int = integer(2, 0, 100_000)


@dataclass(frozen=True)
class Feedback:
    # Pseudo-relevance feedback (query/feedback.py: RM3 on the lexical channel, Rocchio on the dense one); 0 passages
    # is off.  Every setting measured on the two judged corpora's dev halves lost (docs/benchmarks.md), so it is off.
    passages: int = integer(0, 0, 100)
    terms: int = integer(10, 1, 100)
    lexical_share: float = number(0.1, 0.0, 1.0)
    dense_share: float = number(0.1, 0.0, 10.0)


@dataclass(frozen=True)
class Match:
    # Calibrated (the policy has a model): the tier follows answer_confidence, high from high_probability, mid
    # from mid_probability, else low; below min_answer_confidence the response abstains (low_confidence).
    # high: the top hit answers at least 4 times in 5 (calibration/fit.py HIGH_TIER_FLOOR)
    high_probability: float = number(0.8, 0.0, 1.0)
    mid_probability: float = number(0.25, 0.0, 1.0)
    min_answer_confidence: float = number(0.1, 0.0, 1.0)
    # Uncalibrated (features = []): the tier follows the best cosine, as before answer confidence existed.
    high_threshold: float = number(0.55, -1.0, 1.0)
    mid_threshold: float = number(0.4, -1.0, 1.0)
    high_ceiling: float = number(0.95, 0.0, 1.0)
    mid_ceiling: float = number(0.75, 0.0, 1.0)
    low_ceiling: float = number(0.35, 0.0, 1.0)
    evidence_floor: float = number(0.12, 0.0, 1.0)
    # The calibration (CALIBRATION_KEYS), fitted by `trustindex calibrate` or shipped in
    # default_calibration.toml: answer_confidence = sigmoid(intercept + Σ weights × features), then the
    # isotonic map (isotonic_x → isotonic_y, linear between breakpoints) when it has breakpoints.
    calibration_id: str = text("")
    features: tuple[str, ...] = strings()
    weights: tuple[float, ...] = numbers()
    intercept: float = number(0.0, -1000.0, 1000.0)
    isotonic_x: tuple[float, ...] = numbers()
    isotonic_y: tuple[float, ...] = numbers()
    # How the calibration did on queries it was not fitted on (the reliability diagram of the HTML report):
    # ECE over 10 equal-width bins, Brier score, AUROC, the number of queries, and per non-empty bin the mean
    # predicted probability, the observed share of relevant top hits and the count.
    heldout_n: int = integer(0, 0, 1 << 31)
    heldout_ece: float = number(0.0, 0.0, 1.0)
    heldout_brier: float = number(0.0, 0.0, 1.0)
    heldout_auroc: float = number(0.0, 0.0, 1.0)
    reliability_predicted: tuple[float, ...] = numbers()
    reliability_observed: tuple[float, ...] = numbers()
    reliability_count: tuple[int, ...] = integers()

    def ceiling(self, tier: str) -> float:
        """The display ceiling of a match tier (high, mid or low)."""
        return {"high": self.high_ceiling, "mid": self.mid_ceiling, "low": self.low_ceiling}[tier]


# [match] keys that are the operator's choices, not fitted numbers.
CALIBRATION_SETTINGS = (
    "high_probability",
    "mid_probability",
    "min_answer_confidence",
    "high_threshold",
    "mid_threshold",
    "high_ceiling",
    "mid_ceiling",
    "low_ceiling",
    "evidence_floor",
)


@dataclass(frozen=True)
class Rerank:
    model_path: str = text("")
    depth: int = integer(30, 1, 1000)


@dataclass(frozen=True)
class Ingest:
    max_file_bytes: int = integer(2_000_000, 1, 1 << 34)
    target_tokens: int = integer(200, 16, 512)
    max_tokens: int = integer(256, 16, 512)


@dataclass(frozen=True)
class Publish:
    max_chunk_loss: float = number(0.5, 0.0, 1.0)
    max_document_loss: float = number(0.5, 0.0, 1.0)
    retention: int = integer(5, 1, 10_000)


@dataclass(frozen=True)
class Dense:
    # Exact up to 1.5M passages: with the int8 prefilter a warm 1M search is exact at p99 89 ms and 1.8 GB peak,
    # where HNSW (efSearch 2048) gave p99 86 ms, 1.9 GB and recall@10 0.92 after a 2,000 s build (query/dense.py).
    exact_below: int = integer(1_500_000, 0, 1 << 40)


@dataclass(frozen=True)
class Sections:
    """Every section of the policy, in the order of ``policy.toml``; ``Sections()`` holds the defaults alone (no
    shipped calibration).  schemas/policy.py's ``Policy`` adds where it was read from and its ``policy_id``."""

    attribution: Attribution = sub_table(Attribution)
    verification: Verification = sub_table(Verification)
    freshness: Freshness = sub_table(Freshness)
    deprecation: Deprecation = sub_table(Deprecation)
    version: Version = sub_table(Version)
    content_risk: ContentRisk = sub_table(ContentRisk)
    page_kind: PageKind = sub_table(PageKind)
    confidence: Confidence = sub_table(Confidence)
    relevance: Relevance = sub_table(Relevance)
    fusion: Fusion = sub_table(Fusion)
    feedback: Feedback = sub_table(Feedback)
    match: Match = sub_table(Match)
    rerank: Rerank = sub_table(Rerank)
    ingest: Ingest = sub_table(Ingest)
    publish: Publish = sub_table(Publish)
    dense: Dense = sub_table(Dense)
