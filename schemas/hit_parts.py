"""A hit's parts as types, defined once: its provenance, ranking terms and channels, and a response's targets.

Each is a frozen ``Shape`` (schemas/shape.py): its fields, in order, are the keys of schemas/response.schema.json,
so ``to_json`` writes the response's bytes and ``from_json`` reads them back (a renderer handed a response as JSON
parses it first, then reads attributes).  The factors are in schemas/hit_factors.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trustindex.schemas.page_routes import UNROUTED
from trustindex.schemas.shape import Shape, absent_keys, optional


def shown_number(x: float) -> float:
    """A score as a response shows it: rounded to 6 decimals (a non-finite one, which no term holds, as NaN stays
    out of JSON: None)."""
    return float(round(x, 6)) if math.isfinite(x) else None  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Provenance(Shape):
    """Where a passage is: its file and lines at a commit, and the page a person opens."""

    source: str
    repo: str
    commit: str
    path: str
    start_line: int
    end_line: int
    heading_path: list[str]
    symbol_path: str | None
    url: str | None
    page_url: str | None  # the site's page and section (else the hosting URL); a partial's: its importing page's
    part_of: str | None  # the page a partial is rendered into
    copy_of: str | None  # ``source/path`` of the original this passage copies

    @property
    def where(self) -> str:
        """The passage's place in its page: its headings below the title, else its symbol."""
        return " > ".join(self.heading_path[1:] or self.heading_path) or (self.symbol_path or "")

    @property
    def file(self) -> str:
        return f"{self.source}/{self.path}"


@dataclass(frozen=True, slots=True)
class PagePassage(Shape):
    """Another passage of the hit's page that ranked below it, folded under the hit (one hit per page): its
    section and where it is, and its own ranking_score."""

    chunk_id: str
    ranking_score: float
    path: str  # the file its lines are in (a partial's own, when the page renders one)
    start_line: int
    end_line: int
    heading_path: list[str]
    page_url: str | None  # the site's page at this passage's section (else the hosting URL at its lines)

    @property
    def where(self) -> str:
        return " > ".join(self.heading_path[1:] or self.heading_path)


@dataclass(frozen=True, slots=True)
class Term(Shape):
    """One weighted term of a relevance: its value (0..1) and its policy weight."""

    value: float
    weight: float


@dataclass(frozen=True, slots=True)
class Support(Term):
    """The page-mates' support: the sum of their relevance, and the chunk ids that lent it."""

    lenders: list[str]


@dataclass(frozen=True, slots=True)
class Cited(Term):
    """The question's best passages on other pages of the site that link to this page: s / (s + cited_half) of their
    loans, and the chunk ids of the passages that cite it, best first."""

    citers: list[str]


@dataclass(frozen=True, slots=True)
class Authority(Term):
    """The site's links into the page: n / (n + authority_k) over its ``inbound`` links."""

    inbound: int


@dataclass(frozen=True, slots=True)
class PageRelevance(Shape):
    """The page-level terms of a ranking relevance (absent when a cross-encoder ordered the pool)."""

    support: Support
    page_vector: Term
    page_terms: Term
    anchor: Term | None = optional()  # the site's links' terms: present when the snapshot has its links indexed
    authority: Authority | None = optional()
    normaliser: float = 1.0
    page_focus: Term | None = optional()  # query/page_focus.py: present when weighted
    problem_section: Term | None = optional()
    cited: Cited | None = optional()  # query/page_links.py: present when weighted and the links are indexed

    @property
    def weighted(self) -> tuple[Term, ...]:
        """The weighted page terms in use, in order (query/score.py's PAGE_TERM_NAMES)."""
        focus = (self.page_focus, self.problem_section)
        parts = (self.support, self.page_vector, self.page_terms, *focus, self.anchor, self.authority, self.cited)
        return tuple(p for p in parts if p is not None)

    @property
    def has_links(self) -> bool:
        return self.anchor is not None and self.authority is not None


@dataclass(frozen=True, slots=True)
class RerankTerm(Shape):
    """Whether the cross-encoder read the passage, and its probability (0 when it did not)."""

    read: bool
    value: float


@dataclass(frozen=True, slots=True)
class Route(Shape):
    """The page's route status (query/routes.py); an unrouted page's score is × ``served_floor``."""

    status: str
    served_floor: float | None = optional()

    @property
    def unrouted(self) -> bool:
        return self.status == UNROUTED


@dataclass(frozen=True, slots=True)
class RankingTerms(Shape):
    """Every term of a hit's ranking_score with its value and policy weight (query/score.py)."""

    ranking_relevance: float
    trust_weight: float
    relevance_weight: float
    passage: dict[str, Term]  # by channel: dense, lexical, identifier (those in use)
    page: PageRelevance | None = optional()
    rerank: RerankTerm | None = optional()
    route: Route = Route("routed")


@dataclass(frozen=True, slots=True)
class ChannelScore(Shape):
    """A channel's rank (None: it did not retrieve the passage) and raw score of one hit."""

    rank: int | None
    score: float


@dataclass(frozen=True, slots=True)
class RerankScore(Shape):
    score: float


@dataclass(frozen=True, slots=True)
class HitChannels(Shape):
    """What each channel scored one hit: the dense cosine, the BM25, and the cross-encoder's where it read it."""

    dense: ChannelScore
    lexical: ChannelScore
    rerank: RerankScore | None = optional()


@dataclass(frozen=True, slots=True)
class TargetShown(Shape):
    """One version target of the request, as requested and as resolved (query/target_match.py)."""

    component: str
    requested: str
    component_requested: str | None = optional()  # the name the request used, when it resolved to another
    component_resolution: str | None = optional()
    known_component: bool | None = optional()
    constraints_seen: list[str] | None = optional()  # the component's constraints in the snapshot (the first 50)
    resolved: str | None = optional()
    resolution: str | None = optional()
    absent: frozenset[str] = absent_keys()


@dataclass(frozen=True, slots=True)
class SourceCommit(Shape):
    """A source of the snapshot, the commit it holds and that commit's committer date (how current it is)."""

    source: str
    commit: str | None
    commit_date: str | None

    @classmethod
    def of(cls, name: str, row: dict) -> SourceCommit:
        """Source ``name``'s row of the sources table (or its manifest entry: keys it lacks read None)."""
        return cls(name, row.get("commit"), row.get("commit_date"))


@dataclass(frozen=True, slots=True)
class ChannelRun(Shape):
    """Whether a channel ran for the search, and why not."""

    ran: bool
    reason: str | None


@dataclass(frozen=True, slots=True)
class RerankRun(ChannelRun):
    model: str | None = optional()  # the cross-encoder's model path, when it ran


@dataclass(frozen=True, slots=True)
class SearchChannels(Shape):
    """The search's channels: dense, lexical, rerank, and how many candidates the pool held."""

    dense: ChannelRun
    lexical: ChannelRun
    rerank: RerankRun
    pool_size: int | None = optional()
