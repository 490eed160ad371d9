"""Build the response JSON of the contract (schemas/response.schema.json)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from trustindex.query.snapshot_pages import DocumentRow
from trustindex.schemas.answer_signals import LOW_CONFIDENCE, UNCALIBRATED
from trustindex.schemas.hit_factors import E, Factor, Factors, VersionFactor
from trustindex.schemas.hit_parts import (
    ChannelScore,
    HitChannels,
    PagePassage,
    PageRelevance,
    Provenance,
    RankingTerms,
    RerankScore,
    RerankTerm,
    Route,
    SearchChannels,
    SourceCommit,
    TargetShown,
    Term,
)
from trustindex.schemas.page_url import passage_page_url
from trustindex.schemas.shape import Shape, optional
from trustindex.schemas.web_url import cite_lines

# 3: answer_confidence is P(the top hit's page answers), calibration_status and low_confidence (issue 16)
# 4: ranking_score is the ordering score (query/score.py) with its terms in ranking_terms; display_confidence
#    follows it; abstention_note; an abstained response is never high (issue 26)
# 5: an unrouted page yields to every served one (ranking_terms.route); provenance part_of and copy_of (issue 43)
# 6: one hit per page: a page's lower-ranked passages are listed in its hit's same_page (issue 43)
SCORE_CONTRACT_VERSION = "6"


@dataclass(frozen=True, slots=True)
class _Cited:
    """Where a passage is and how it is cited: its document, lines and headings, the hosting URL of its lines and
    the page a person opens (one rule for a hit's provenance and a passage folded under a hit)."""

    doc: DocumentRow
    start: int
    end: int
    headings: list[str]
    url: str | None
    page_url: str | None


def _cited(d, i: int) -> _Cited:
    doc = d.pages.document(d.chunk_doc[i])
    v = d.chunks.value
    start, end = v("start_line", i), v("end_line", i)
    headings = list(v("heading_path", i) or [])
    url = cite_lines(doc.url, start, end) if doc.url else None
    # the page a person opens: the published site's page and section when the source has a site_url, else the
    # hosting URL; for a partial, the page that imports it (part_of)
    # its section's id as the build recorded it (None: a snapshot written before that column)
    anchor = v("anchor", i) if "anchor" in d.chunks.table.column_names else None
    page_url = passage_page_url(doc.page_url, headings, not doc.part_of, anchor) if doc.page_url else url
    return _Cited(doc, start, end, headings, url, page_url)


def provenance(d, i: int) -> Provenance:
    c = _cited(d, i)
    doc = c.doc
    original = int(d.copy_of()[i])
    copy_of = None
    if original >= 0:
        od = d.pages.document(d.chunk_doc[original])
        copy_of = f"{od.source}/{od.path}"
    return Provenance(
        source=doc.source,
        repo=doc.repo,
        commit=doc.commit,
        path=doc.path,
        start_line=c.start,
        end_line=c.end,
        heading_path=c.headings,
        symbol_path=d.chunks.value("symbol_path", i),
        url=c.url,
        page_url=c.page_url,
        part_of=doc.part_of or None,
        copy_of=copy_of,
    )


def folded_passages(d, folded: list[tuple[int, float]]) -> tuple[PagePassage, ...]:
    """The passages folded under a hit (its page's, or a partial's that the page renders), each with its ordering
    score as shown and its file, lines and section's URL as ``provenance`` gives them."""
    out = []
    for i, score in folded:
        c = _cited(d, i)
        out.append(PagePassage(d.chunk_ids[i], _round(score), c.doc.path, c.start, c.end, c.headings, c.page_url))
    return tuple(out)


def _round(x: float) -> float:
    return float(round(x, 6))


@dataclass(slots=True)
class Candidate:
    """One candidate of the pool on its way to a hit: its passage (row), its scores, and the rows of the identical
    passages collapsed into it."""

    row: int
    trust: float
    relevance: float
    confidence: float
    score: float  # the ordering score (query/score.py)
    ranking_relevance: float
    page_terms: PageRelevance | None  # the page-level terms as shown (None when a cross-encoder read the pool)
    rerank: float | None  # the cross-encoder's probability, where it read the passage
    route: Route  # ranking_terms.route: the page's route status (query/routes.py)
    also: list[int]
    same_page: list[tuple[int, float]]  # (row, ordering score) of the page's candidates folded under the hit


@dataclass(slots=True)
class ChannelReading:
    """What a search's channels say of one shown passage: its passage terms, raw scores and ranks."""

    passage_terms: dict[str, Term]  # as shown (query/score.py passage_terms)
    cosine: float
    bm25: float
    dense_rank: int | None
    lexical_rank: int | None


@dataclass(slots=True)
class Hit(Shape):
    """One hit of the response; its fields, in order, are the contract's hit keys (schemas/response.schema.json),
    its parts typed (schemas/hit_parts.py, schemas/hit_factors.py)."""

    rank_position: int
    chunk_id: str
    relevance_score: float
    ranking_score: float
    trust_score: float
    confidence: float
    display_confidence: float
    ranking_terms: RankingTerms
    text: str
    provenance: Provenance
    factors: Factors
    channels: HitChannels
    also_in: tuple[Provenance, ...]
    same_page: tuple[PagePassage, ...]
    low_confidence: bool | None = optional()  # in the JSON only when true (an answer below min_answer_confidence)


@dataclass(frozen=True, slots=True)
class Scale:
    """How one response shows its scores: the tier's ``ceiling`` for the pool's best ordering score
    (``best_score``, as shown), and the confidence's weights."""

    ceiling: float
    best_score: float
    weights: tuple[float, float]  # (trust_weight, relevance_weight)
    reranked: bool


def hit(d, c: Candidate, shown: Shown, text: str, reading: ChannelReading, rank: int, scale: Scale) -> Hit:
    """Candidate ``c`` shown at ``rank``; ``shown`` its provenance and explained factors (``shown`` below)."""
    score = _round(c.score)
    display = scale.ceiling * (score / scale.best_score) if scale.best_score > 0 else 0.0
    rerank = None
    if scale.reranked:
        rerank = RerankTerm(c.rerank is not None, 0.0 if c.rerank is None else _round(c.rerank))
    terms = RankingTerms(
        ranking_relevance=_round(c.ranking_relevance),
        trust_weight=_round(scale.weights[0]),
        relevance_weight=_round(scale.weights[1]),
        passage=reading.passage_terms,
        page=c.page_terms,
        rerank=rerank,
        route=c.route,
    )
    channels = HitChannels(
        dense=ChannelScore(reading.dense_rank, _round(reading.cosine)),
        lexical=ChannelScore(reading.lexical_rank, _round(reading.bm25)),
        rerank=RerankScore(_round(c.rerank)) if c.rerank is not None else None,
    )
    return Hit(
        rank_position=rank,
        chunk_id=d.chunk_ids[c.row],
        relevance_score=_round(c.relevance),
        ranking_score=score,
        trust_score=_round(c.trust),
        confidence=_round(c.confidence),
        display_confidence=_round(min(display, scale.ceiling)),
        ranking_terms=terms,
        text=text,
        provenance=shown.provenance,
        factors=shown.factors,
        channels=channels,
        also_in=tuple(provenance(d, j) for j in c.also),
        same_page=folded_passages(d, c.same_page),
    )


@dataclass(frozen=True, slots=True)
class Shown:
    """What a hit shows of a passage besides its scores: its provenance and its explained factors (frozen: kept
    per day by the state and shared by every response that shows the passage)."""

    provenance: Provenance
    factors: Factors

    def with_version_match(self, factor: VersionFactor) -> Shown:
        """The same, with the search's own version match (it has targets) in the factors' version_match."""
        return Shown(self.provenance, replace(self.factors, version_match=_as_shown(factor)))


def shown(d, i: int, factors: dict[str, Factor[Any]]) -> Shown:
    """What a hit shows of passage ``i`` besides its scores: its provenance and its explained factors (the factor
    modules' types, query/trust_factors/), their multipliers rounded as shown."""
    return Shown(provenance(d, i), Factors(**{name: _as_shown(f) for name, f in factors.items()}))


def _as_shown(factor: Factor[E]) -> Factor[E]:
    """A factor with its multiplier as the response shows it (a float rounded to 6 places; the factor modules
    keep it exact, the trust prior multiplies the same values: tests/query/test_trust_prior.py); its evidence is
    built as shown (query/trust_factors/)."""
    m = factor.multiplier
    if isinstance(m, float):
        m = _round(m) if math.isfinite(m) else None  # type: ignore[assignment]  # as JSON shows a non-finite number
    return Factor(m, factor.status, factor.evidence)


def dated_sources(data) -> list[SourceCommit]:
    """Each source of the snapshot with the commit it holds and that commit's date (how current the answer is)."""
    rows = data.sources or data.manifest.source_rows()
    return [SourceCommit.of(n, rows[n]) for n in sorted(rows)]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a search concludes of its ranking: the match tier and its ceiling, the answer confidence and its
    signals, and whether (and why) it abstains."""

    match_tier: str
    ceiling: float
    best_cosine: float
    answer_confidence: float | None
    signals: dict[str, float]
    abstained: bool
    reason: str | None
    note: str | None


@dataclass(slots=True)
class SearchResponse(Shape):
    """The response; its fields, in order, are the contract's keys (schemas/response.schema.json), its parts typed
    (schemas/hit_parts.py).  A renderer handed the JSON reads it back with ``SearchResponse.from_json``."""

    score_contract_version: str
    query: str
    also: list[str]
    snapshot_id: str
    built_at: str
    sources: list[SourceCommit]
    signed: bool
    policy_id: str
    targets: list[TargetShown]
    strict: bool
    match_tier: str
    best_cosine: float
    calibration_status: str
    calibration_id: str | None
    answer_confidence: float | None
    answer_signals: dict[str, float]
    min_answer_confidence: float | None
    abstained: bool
    abstention_reason: str | None
    abstention_note: str | None
    channels: SearchChannels
    hits: list[Hit]
    warning: str | None = optional()  # set by a server when what answered is not current (never by Index.search)

    @classmethod
    def of(cls, snapshot: Snapshot, policy, asked: Asked, verdict: Verdict, hits: list[Hit]) -> SearchResponse:
        status = policy.calibration_status
        calibrated = status != UNCALIBRATED
        if verdict.reason == LOW_CONFIDENCE:
            for h in hits:
                h.low_confidence = True
        answer = verdict.answer_confidence
        return cls(
            score_contract_version=SCORE_CONTRACT_VERSION,
            query=asked.query,
            also=asked.also,
            snapshot_id=snapshot.snapshot_id,
            built_at=snapshot.built_at,
            sources=list(snapshot.sources),
            signed=snapshot.signed,
            policy_id=policy.policy_id,
            targets=list(asked.targets),
            strict=asked.strict,
            match_tier=verdict.match_tier,
            best_cosine=_round(verdict.best_cosine),
            calibration_status=status,
            calibration_id=policy.match.calibration_id if calibrated else None,
            answer_confidence=_round(answer) if answer is not None else None,
            answer_signals={k: _round(v) for k, v in verdict.signals.items()},
            min_answer_confidence=policy.match.min_answer_confidence if calibrated else None,
            abstained=verdict.abstained,
            abstention_reason=verdict.reason,
            abstention_note=verdict.note,
            channels=asked.channels,
            hits=hits,
        )


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a response says of the snapshot that answered."""

    snapshot_id: str
    built_at: str
    sources: list[SourceCommit]
    signed: bool

    @classmethod
    def of(cls, data) -> Snapshot:
        return cls(data.manifest.snapshot_id, data.manifest.created_at, dated_sources(data), data.signed_by is not None)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a response repeats of the request and of how the search ran it."""

    query: str
    also: list[str]
    targets: list[TargetShown]
    strict: bool
    channels: SearchChannels


def as_response(r: SearchResponse | dict) -> SearchResponse:
    """A response as its type: a renderer handed the JSON (a client's, a test's) reads it back first."""
    return r if isinstance(r, SearchResponse) else SearchResponse.from_json(r)


def as_hit(h: Hit | dict) -> Hit:
    return h if isinstance(h, Hit) else Hit.from_json(h)
