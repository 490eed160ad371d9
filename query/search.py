"""One search as four named stages over one state (query/state.py) and one ``Query`` (query/search_query.py):

    gather  the channels' candidates (dense, lexical, each extra phrasing's, identifiers) fused into a pool (RRF)
    score   each candidate's relevance, trust (the prior × its version match) and ordering score
    order   the candidates by the ordering score, identical passages collapsed into one hit
    judge   the answer confidence, the match tier and whether the search abstains

then ``show`` dresses the first k hits for the response (query/response.py).  Each stage hands the next a small
typed record (``Gathered``, ``Scored``, ``Ordered``, ``Verdict``); the arrays stay numpy until a hit is shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from trustindex.query import response as R
from trustindex.query import score as S
from trustindex.query.abstention import Outcome, abstention_note
from trustindex.query.answer_confidence import COVERAGE_HITS, ChannelOutcome, match_tier, measure, probability
from trustindex.query.candidates import OrderedHit, Pool, collapse_order, fold_pages
from trustindex.query.copies import with_originals
from trustindex.query.feedback import expansion_terms, feedback_rows, rm3_scores, rocchio
from trustindex.query.fusion import CAP_REACH, per_page_capped, rrf_pool, top_ranking
from trustindex.query.lexical_signals import LexicalSignals, lexical_signals
from trustindex.query.relevance import relevance as relevance_of
from trustindex.query.routes import UNROUTED_CODE, route_term
from trustindex.query.search_query import Query
from trustindex.query.state import SearchState
from trustindex.query.target_match import page_satisfies, satisfied_targets, version_factor
from trustindex.query.trust import reference_day
from trustindex.query.trust_factors import NO_LIFTS, HitContext, Lifts
from trustindex.query.trust_factors import explain as explain_factors
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.answer_signals import LOW_CONFIDENCE
from trustindex.schemas.hit_factors import Factor, VersionFactor
from trustindex.schemas.hit_parts import ChannelRun, RerankRun, SearchChannels


def search(st: SearchState, q: Query) -> R.SearchResponse:
    gathered = gather(st, q)
    scored = score(st, q, gathered)
    ordered = order(st, q, scored)
    verdict = judge(st, q, gathered, scored, ordered)
    return show(st, q, gathered, scored, ordered, verdict)


# -- gather ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Gathered:
    """The candidate pool and what the user's own wording's channels found (they explain the hits and set the
    tier; an extra phrasing only adds candidates)."""

    rows: np.ndarray  # the pool's passages, ascending (rrf_pool)
    cosines: np.ndarray  # each candidate's exact cosine with the user's query
    lexical: LexicalSignals  # the user's wording's, over every passage
    dense_rows: np.ndarray  # the dense channel's first candidate_depth passages, best first
    dense_cosines: np.ndarray  # their cosines, descending
    lexical_rows: np.ndarray | None  # the lexical channel's first candidate_depth (None: no known term)

    @property
    def lexical_ran(self) -> bool:
        return self.lexical.nterms > 0

    @property
    def best_cosine(self) -> float:
        """The dense channel's top-1 (= dense.best())."""
        return float(self.dense_cosines[0]) if self.dense_cosines.size else 0.0

    @property
    def identifier(self) -> np.ndarray | None:
        """The identifier channel's scores of the pool's candidates (None: the query names no known identifier)."""
        return self.lexical.identifier[self.rows] if self.lexical.identifier is not None else None


def gather(st: SearchState, q: Query) -> Gathered:
    d, fz = st.data, st.policy.fusion
    depth, cap = fz.candidate_depth, fz.max_passages_per_page
    # With a per-page cap each channel reads deeper, then gives the pool its first `depth` passages of capped pages.
    reach = depth * CAP_REACH if cap else depth

    def pooled(ranking: np.ndarray) -> np.ndarray:
        return per_page_capped(ranking, d.chunk_doc_row, cap, depth)

    def best(scores: np.ndarray) -> np.ndarray:
        return top_ranking(scores, reach, positive_only=True)

    # Dense candidates from the dense index (exact or ANN: query/dense.py), never a scan of every chunk's cosine in
    # ANN mode; the pool's cosines with the user's query are computed exactly below.
    dense_all, dense_cos = st.dense.top(q.vector, reach)
    lex = lexical_signals(d, q.words, st.policy)
    qvec = q.vector
    if st.policy.feedback.passages:
        qvec, lex, dense_all, dense_cos = _feedback(st, q, lex, pooled(dense_all), pooled(best(lex.scores)), reach)
    lex_all = best(lex.scores) if lex.nterms > 0 else None
    rankings = [(pooled(dense_all), fz.dense_weight)]
    if lex_all is not None:
        rankings.append((pooled(lex_all), fz.lexical_weight))
    for p in q.phrasings:
        rows, _cos = st.dense.top(p.vector, reach)
        other = lexical_signals(d, p.words, st.policy)
        rankings.append((pooled(rows), fz.dense_weight))
        if other.nterms:
            rankings.append((pooled(best(other.scores)), fz.lexical_weight))
    if lex.identifier is not None:
        rankings.append((pooled(best(lex.identifier)), fz.identifier_weight))
    pool_rows, _fused = rrf_pool(rankings, fz.rrf_k, d.n)
    pool_rows = with_originals(pool_rows, d.copy_of())  # a copy's original may answer in its place
    lex_top = lex_all[:depth] if lex_all is not None else None
    cosines = st.dense.cosines(qvec, pool_rows)
    return Gathered(pool_rows, cosines, lex, dense_all[:depth], dense_cos[:depth], lex_top)


def _feedback(st: SearchState, q: Query, lex: LexicalSignals, dense_first, lexical_first, reach: int):
    """The second pass of pseudo-relevance feedback (query/feedback.py): the query vector, lexical signals and dense
    channel after the first pass's best passages reshaped them."""
    d, fb, fz = st.data, st.policy.feedback, st.policy.fusion
    first = [(dense_first, fz.dense_weight)] + ([(lexical_first, fz.lexical_weight)] if lex.nterms else [])
    rows = feedback_rows(*rrf_pool(first, fz.rrf_k, d.n), fb.passages)
    qvec = rocchio(q.vector, d.unit_mean(rows), fb.dense_share) if fb.dense_share > 0 else q.vector
    dense_all, dense_cos = st.dense.top(qvec, reach)
    if fb.lexical_share > 0 and lex.nterms:
        known = {d.lexical.vocab[t] for t in q.words.tokens if t in d.lexical.vocab}
        terms, weights = expansion_terms(d.lexical, rows, known, fb.terms)
        scores = rm3_scores(d.lexical, lex.scores, lex.nterms, terms, weights, fb.lexical_share)
        lex = LexicalSignals(scores, lex.nterms, lex.identifier)
    return qvec, lex, dense_all, dense_cos


# -- score ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Scored:
    """Every gathered candidate's own relevance and whether it was kept; the kept ones (``pool``) with their trust,
    confidence, ranking relevance and ordering score."""

    relevance: np.ndarray  # every gathered candidate's own relevance
    kept: np.ndarray  # bool, per gathered candidate: not excluded by a version or a kind of content risk
    any_version_pass: bool  # some candidate satisfies the targets (before content risk excluded any)
    version_factors: dict[int, VersionFactor]  # by row: the explained version match (only under targets)
    lifted: dict[int, tuple[str, ...]]  # by row: a legacy page whose own evidence satisfies every target
    today: datetime
    prior: TrustPrior
    pool: Pool
    channels: SearchChannels  # the response's "channels"
    reranked: bool
    page_terms: S.PageTerms | None  # None when a cross-encoder read the pool (or the pool is empty)
    ranking_relevance: np.ndarray
    score: np.ndarray  # the ordering score (query/score.py)
    routes: np.ndarray  # each candidate's route status (query/routes.py codes)
    served_floor: float | None  # what an unrouted candidate's score was multiplied by (None: none yielded)

    @property
    def unrouted(self) -> np.ndarray:
        return self.routes == UNROUTED_CODE

    def candidate(self, h: OrderedHit, chunk_ids) -> R.Candidate:
        pool, terms, j = self.pool, self.page_terms, h.position
        return R.Candidate(
            row=int(pool.rows[j]),
            trust=float(pool.trust[j]),
            relevance=float(pool.relevance[j]),
            confidence=float(pool.confidence[j]),
            score=float(self.score[j]),
            ranking_relevance=float(self.ranking_relevance[j]),
            page_terms=terms.explained(j, chunk_ids, pool.rows) if terms is not None else None,
            rerank=pool.rerank[j] if pool.rerank is not None else None,
            route=route_term(int(self.routes[j]), self.served_floor),
            also=h.also,
            same_page=[(int(pool.rows[i]), float(self.score[i])) for i in h.same_page],
        )


def score(st: SearchState, q: Query, g: Gathered) -> Scored:
    policy, rows = st.policy, g.rows
    rel = (
        np.asarray(relevance_of(g.cosines, g.lexical.scores[rows], policy, g.lexical_ran, g.identifier), np.float64)
        if rows.size
        else np.zeros(0)
    )
    today = reference_day()
    prior = st.prior(today)
    factors, keep, vmult = _version_match(st, q, rows)
    any_version_pass = bool(keep.any())
    keep &= ~prior.excluded[rows]  # a kind of content risk the policy excludes
    c = policy.confidence
    lifted = _lifted(st, prior, q, rows, factors)
    changes = q.asks_about_changes
    base = prior.for_targets(q.docs_targeted, changes, q.language)[rows]
    if lifted:  # the legacy doubt yields, as to a docs target, where the page's own word meets every target
        base = np.where(np.isin(rows, list(lifted)), prior.for_targets(True, changes, q.language)[rows], base)
    trust = np.clip(base * vmult, 0.0, 1.0)
    conf = (trust**c.trust_weight) * (rel**c.relevance_weight)
    pool = Pool(rows[keep], trust[keep], rel[keep], conf[keep])
    channels = _channels(st, g.lexical_ran, int(rows.size))
    # The ordering score (query/score.py): relevance after any rerank × trust.  A cross-encoder reads the passage
    # with the query, so its probability is the relevance; without one, the passage's page adds relevance lent by
    # its eligible page-mates (never one with content risk or a penalised version).
    terms, ranking_rel = None, np.zeros(0)
    reranked = _rerank(st, q.text, pool, channels)
    if reranked:
        ranking_rel = np.array([0.0 if p is None else p for p in pool.rerank or []], dtype=np.float64)
    elif pool.size:
        version_ok = vmult >= 1.0
        lending = S.Lending(
            lender=(~prior.flagged[rows] & version_ok)[keep],
            withheld=np.union1d(prior.flagged_rows, rows[~(version_ok & keep)]),
        )
        terms = S.page_terms(st.data, policy, pool, q.vector, q.tokens, g.lexical_ran, lending, q.text)
        ranking_rel = terms.relevance(pool.relevance)
    routes = st.data.route_codes()[pool.rows]
    ordering, floor = S.yield_unrouted(
        S.ranking_score(pool.trust, ranking_rel, policy), routes == UNROUTED_CODE, policy.fusion.unrouted_yields
    )
    return Scored(
        rel,
        keep,
        any_version_pass,
        factors,
        lifted,
        today,
        prior,
        pool,
        channels,
        reranked,
        terms,
        ranking_rel,
        ordering,
        routes,
        floor,
    )


def _lifted(
    st: SearchState, prior: TrustPrior, q: Query, rows: np.ndarray, factors: dict[int, VersionFactor]
) -> dict[int, tuple[str, ...]]:
    """Candidates of a legacy docs version (or an unlabelled version folder) that satisfy every version target (by
    their own evidence, or by their docs version's uncontradicted map): the user asked for that version, so the page
    is not demoted as legacy for this query, unless the current page it was copied to satisfies the targets too
    (then the current copy is the one to read)."""
    if not q.targets or q.docs_targeted:
        return {}
    out = {}
    for i in rows[prior.older[rows]].tolist():
        by = satisfied_targets(factors[i])
        current = st.data.superseding_rows(i) if by else None
        if by and not (current and page_satisfies(current, q.targets)):
            out[i] = tuple(by)
    return out


def _version_match(
    st: SearchState, q: Query, rows: np.ndarray
) -> tuple[dict[int, VersionFactor], np.ndarray, np.ndarray]:
    """Version match, the only query-dependent trust factor: per candidate, and only when targets are given; each
    one's explained factor by row, whether the targets keep it, and its multiplier."""
    factors: dict[int, VersionFactor] = {}
    keep = np.ones(rows.size, dtype=bool)
    vmult = np.ones(rows.size)
    if q.targets:
        for pos, i in enumerate(rows.tolist()):
            vf, excluded = version_factor(st.data.version_rows(i), q.targets, st.policy, q.strict)
            keep[pos], vmult[pos], factors[i] = not excluded, vf.multiplier, vf
    return factors, keep, vmult


# -- order ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ordered:
    """The hits best first: each a candidate's position in the pool, the rows of the identical passages collapsed
    into it and its page's lower-ranked candidates (one hit per page, ``fusion.one_hit_per_page``)."""

    hits: list[OrderedHit]  # the first k
    top_passages: list[int]  # the first COVERAGE_HITS passages' pool positions, pages unfolded (answer signals)
    best_confidence: float  # over the whole pool
    best_score: float  # the first hit's ordering score, as shown (the best of every candidate that heads a hit)


def order(st: SearchState, q: Query, s: Scored) -> Ordered:
    pool = s.pool
    d = st.data
    positions = S.order(s.score, pool.confidence, d.chunk_id_rank()[pool.rows], s.unrouted)
    fz = st.policy.fusion
    at, also = collapse_order(d.hit_groups(), pool.rows, positions, d.copy_of())
    # the answer signals read passages as the calibration was fitted on them: the top passages, whatever their page
    top = at[:COVERAGE_HITS].tolist()
    if fz.one_hit_per_page:  # every candidate is read: a page's passages below the k-th hit still fold into theirs
        hits = fold_pages(at, also, pool.rows, d.pages.cited_page(), q.k, fz.same_page_shown, s.prior.flagged)
    else:
        hits = [OrderedHit(j, also[i] if also is not None else [], []) for i, j in enumerate(at[: q.k].tolist())]
    if not pool.size:
        return Ordered(hits, top, 0.0, 0.0)
    # the first hit's score, the pool's best but for a copy folded into its original's hit below it
    return Ordered(hits, top, float(pool.confidence.max()), float(S.shown(s.score[hits[0].position])))


# -- judge ----------------------------------------------------------------------------------------------------
def judge(st: SearchState, q: Query, g: Gathered, s: Scored, o: Ordered) -> R.Verdict:
    """The tier from the user's own query's channels and the final ranking's top hits; an abstained answer is never
    a high (or mid) match, so the header agrees with itself."""
    d, policy = st.data, st.policy
    reason = _abstention(q, g, s, o, policy.match.evidence_floor)
    top_rows = [int(s.pool.rows[j]) for j in o.top_passages] if reason not in _EMPTY else []
    channels = ChannelOutcome(g.dense_rows, g.dense_cosines, g.lexical_rows, g.lexical.scores, top_rows, q.tokens)
    signals = measure(d, policy, channels)
    answer = probability(policy, signals)
    tier, ceiling = match_tier(policy, answer, g.best_cosine)
    if reason is None and answer is not None and answer < policy.match.min_answer_confidence:
        reason = LOW_CONFIDENCE  # the hits stay (marked) for a reader to judge, unless strict asked for answers only
    if reason is None:
        return R.Verdict(tier, ceiling, g.best_cosine, answer, signals, False, None, None)
    note = abstention_note(d, policy, s.prior, Outcome(g.rows, s.relevance, s.kept, o.best_confidence, answer), reason)
    return R.Verdict("low", policy.match.low_ceiling, g.best_cosine, answer, signals, True, reason, note)


_EMPTY = ("no_candidates", "version_unavailable")  # reasons that leave no hit to show


def _abstention(q: Query, g: Gathered, s: Scored, o: Ordered, evidence_floor: float) -> str | None:
    """Why the search abstains before its answer confidence is read, or None."""
    if not g.rows.size:
        return "no_candidates"
    if not s.pool.size:
        return "version_unavailable" if q.targets and not s.any_version_pass else "no_candidates"
    if o.best_confidence < evidence_floor:
        return "evidence_floor"
    return None


# -- show -----------------------------------------------------------------------------------------------------
def show(st: SearchState, q: Query, g: Gathered, s: Scored, o: Ordered, v: R.Verdict) -> R.SearchResponse:
    """The first k hits dressed for the response (none when nothing can be shown, or strict refuses a low answer)."""
    d, c = st.data, st.policy.confidence
    empty = v.reason in _EMPTY or (v.reason == LOW_CONFIDENCE and q.strict)
    chosen = [] if empty else [s.candidate(h, d.chunk_ids) for h in o.hits[: q.k]]
    rows = [h.row for h in chosen]
    scale = R.Scale(v.ceiling, o.best_score, (float(c.trust_weight), float(c.relevance_weight)), s.reranked)
    readings = _readings(st, g, rows)
    hits = []
    for rank, (h, text, reading) in enumerate(zip(chosen, d.texts(rows), readings, strict=True), 1):
        lifts = Lifts(q.docs_targeted, s.lifted.get(h.row, ()), q.asks_about_changes, q.language)
        shown = _shown(st, h.row, s.today, s.version_factors.get(h.row), lifts)
        hits.append(R.hit(d, h, shown, text, reading, rank, scale))
    also = [p.words.text for p in q.phrasings]
    asked = R.Asked(q.text, also, q.targets_shown, q.strict, s.channels)
    return R.SearchResponse.of(R.Snapshot.of(d), st.policy, asked, v, hits)


def _readings(st: SearchState, g: Gathered, rows: list[int]) -> list[R.ChannelReading]:
    """The channels' ranks and scores of the shown passages (``g.rows`` is sorted: each row's place by bisection)."""
    at = np.searchsorted(g.rows, rows)
    cosines = g.cosines[at]
    ident = g.identifier
    bm25 = g.lexical.scores[np.asarray(rows, dtype=np.int64)]
    terms = S.passage_terms(st.policy, cosines, bm25, g.lexical_ran, ident[at] if ident is not None else None)
    dense_rank = dict(zip(g.dense_rows.tolist(), range(1, g.dense_rows.size + 1), strict=True))
    lex = g.lexical_rows
    lex_rank = dict(zip(lex.tolist(), range(1, lex.size + 1), strict=True)) if lex is not None else {}
    return [
        R.ChannelReading(t, cos, score, dense_rank.get(i), lex_rank.get(i))
        for i, t, cos, score in zip(rows, terms, cosines.tolist(), bm25.tolist(), strict=True)
    ]


def factors(st: SearchState, i: int, today, lifts: Lifts = NO_LIFTS) -> dict[str, Factor[Any]]:
    """The explained factors of one hit (their multipliers are the ones the prior multiplied), its version match
    without targets (a search with targets puts its own in its place: ``Shown.with_version_match``)."""
    return explain_factors(HitContext(st.data, st.policy, today, i, lifts))


def _shown(st: SearchState, i: int, today, vf: VersionFactor | None, lifts: Lifts) -> R.Shown:
    """Hit ``i``'s provenance and cleaned factors: worked out once a day per state and per what the query lifts,
    with the search's own version match (``vf``, when it has targets) in its place."""
    out = st.shown(
        ("hit", i, today, lifts),
        lambda: R.shown(st.data, i, factors(st, i, today, lifts)),
    )
    return out if vf is None else out.with_version_match(vf)


def _channels(st: SearchState, lex_ran: bool, pool: int) -> SearchChannels:
    rr = st.policy.rerank
    rerank = RerankRun(False, "no reranking model configured (policy rerank.model_path)")
    if rr.model_path:
        rerank = (
            RerankRun(True, None, rr.model_path)
            if Path(rr.model_path).is_dir()
            else RerankRun(False, f"reranking model not found at {rr.model_path}")
        )
    n = st.data.n
    return SearchChannels(
        dense=ChannelRun(n > 0, None if n else "empty snapshot"),
        lexical=ChannelRun(lex_ran, None if lex_ran else "no query term is in the vocabulary"),
        rerank=rerank,
        pool_size=pool,
    )


def _rerank(st: SearchState, query: str, pool: Pool, channels: SearchChannels) -> bool:
    """Whether a cross-encoder read the pool: it reads the best ``rerank.depth`` by confidence and leaves each
    one's probability in ``pool.rerank`` (None for those it did not read)."""
    if not channels.rerank.ran or not pool.size:
        return False
    reranker = st.reranker()
    top = np.argsort(-pool.confidence, kind="stable")[: st.policy.rerank.depth].tolist()
    scores = reranker.predict([(query, t) for t in st.data.texts(pool.rows[top].tolist())])
    pool.rerank = [None] * pool.size
    for j, s in zip(top, scores, strict=True):
        pool.rerank[j] = 1.0 / (1.0 + math.exp(-float(s)))
    return True
