"""The query module's entry point: ``Index.open(path).search(...)``.

Channels (dense, lexical) give candidates; RRF chooses the candidate pool; relevance is absolute (raw cosine,
saturated BM25); trust multiplies the factors; ``ranking_score`` = trust × ranking relevance orders the hits
(query/score.py states the formula: the passage's relevance plus what its page lends, or a cross-encoder's
probability), and every term of it is in the hit (query/explain.py recomputes it from the response); identical
passages collapse into one hit; the match tier comes from answer_confidence, the calibrated probability that the
top hit's page answers (query/answer_confidence.py; the best raw cosine when the policy has no calibration), and an
abstained response is low; display_confidence is the tier's ceiling × the hit's ranking_score over the best of the
whole candidate pool, so it never rises down the list and does not change with k.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trustindex.query import response as R
from trustindex.query import score as S
from trustindex.query.abstention import Outcome, abstention_note
from trustindex.query.answer_confidence import COVERAGE_HITS, ChannelOutcome, match_tier, measure, probability
from trustindex.query.candidates import Pool, collapse
from trustindex.query.fusion import CAP_REACH, per_page_capped, rrf_pool, top_ranking
from trustindex.query.lexical_signals import lexical_signals
from trustindex.query.reader import SnapshotData
from trustindex.query.relevance import relevance as relevance_of
from trustindex.query.state import SearchState
from trustindex.query.targets import target_report
from trustindex.query.trust import reference_day
from trustindex.query.trust_factors import HitContext
from trustindex.query.trust_factors import explain as explain_factors
from trustindex.query.versionmatch import Target, parse_target_args, version_factor
from trustindex.schemas.answer_signals import LOW_CONFIDENCE
from trustindex.schemas.errors import QueryError
from trustindex.schemas.lexical import tokenize
from trustindex.schemas.policy import Policy
from trustindex.schemas.signing import TrustedKey, signed_by_trusted
from trustindex.schemas.snapshot import CURRENT, MANIFEST, resolve_current

MAX_QUERY_CHARS = 10_000


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_query(text: str) -> str:
    if not isinstance(text, str):
        raise QueryError("query must be text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise QueryError(f"query is not valid Unicode text (lone surrogate at character {e.start})") from None
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
    text = _CONTROL.sub(" ", text).strip()
    if not text:
        raise QueryError("query is empty")
    return text


class Index:
    """Searches one snapshot under one policy.  Everything a search reads lives in ``self.state``
    (query/state.py), replaced whole by ``reload_policy``; a search takes it once and uses nothing else."""

    def __init__(self, data: SnapshotData, policy: Policy, query_cache: int = 0):
        self.state = SearchState.open(data, policy, query_cache)

    # Read-only views of the current state (callers outside a search: calibration, benchmarks, tests).
    @property
    def data(self) -> SnapshotData:
        return self.state.data

    @property
    def policy(self) -> Policy:
        return self.state.policy

    @property
    def dense(self):
        return self.state.dense

    @property
    def encoder(self):
        return self.state.encoder

    @property
    def snapshot_id(self) -> str:
        return self.state.snapshot_id

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        data_dir: str | Path | None = None,
        policy: Policy | str | Path | None = None,
        verify: bool = True,
        warm: bool = False,
        query_cache: int = 0,
        trusted_keys: Sequence[str | Path | TrustedKey] | None = None,
    ) -> Index:
        """Open a snapshot directory, or the live snapshot of a data directory (``warm``: see ``warm()``;
        ``query_cache``: how many query vectors a long-running process keeps, query/state.py ``QueryVectors``).
        ``trusted_keys`` (public key files or loaded keys): the snapshot must carry a signature by one of them
        (schemas/signing.py), checked before any other file is read; without it a snapshot opens unsigned."""
        if path is None:
            path = resolve_current(data_dir or "data")
        elif not (Path(path) / MANIFEST).exists() and (Path(path) / CURRENT).is_file():
            path = resolve_current(path)  # a data directory; a CURRENT inside a snapshot means nothing
        signed_by = signed_by_trusted(Path(path), trusted_keys) if trusted_keys is not None else None
        pol = policy if isinstance(policy, Policy) else Policy.load(policy)
        data = SnapshotData(Path(path), verify=verify)
        data.signed_by = signed_by
        index = cls(data, pol, query_cache)
        return index.warm() if warm else index

    def reload_policy(self, policy: Policy | str | Path | None) -> None:
        """A new state under ``policy``, swapped in by one assignment (a running search keeps its own)."""
        self.state = self.state.with_policy(policy if isinstance(policy, Policy) else Policy.load(policy))

    def warm(self) -> Index:
        """Prepare for many queries: build the dense int8 prefilter (~1 s at 100k passages) and the trust prior.

        Results are the same with or without it; a one-shot query skips it.
        """
        state = self.state
        state.dense.warm()
        state.prior(reference_day())
        state.data.warm()
        state.data.release_embeddings()  # both warm-ups above have read every row
        return self

    # -- search -------------------------------------------------------------------------------
    def search(
        self, query: str, k: int = 10, targets=None, strict: bool = False, also: list[str] | None = None
    ) -> dict:
        st = self.state  # the only read of the state: everything below uses st
        policy = st.policy
        query = clean_query(query)
        phrasings = [clean_query(a) for a in (also or [])]
        if not isinstance(k, int) or k < 1 or k > 1000:
            raise QueryError(f"k must be an integer from 1 to 1000, got {k!r}")
        tlist = (
            targets
            if isinstance(targets, list) and targets and isinstance(targets[0], Target)
            else parse_target_args(targets)
        )
        targets_shown, tlist = target_report(st, tlist)
        docs_targeted = any(t.component == "docs" for t in tlist)
        d = st.data
        # The user's query is embedded on its own: int8 dynamic quantisation scales activations per batch,
        # so a batch-mate would shift its vector, and with it the match tier.
        vecs = st.query_vectors.encode(query)
        if phrasings:
            vecs = np.concatenate([vecs, st.encoder.encode(phrasings)])
        fz, depth = policy.fusion, policy.fusion.candidate_depth
        # With a per-page cap each channel reads deeper, then gives the pool its first `depth` passages of capped pages.
        cap = fz.max_passages_per_page
        reach = depth * CAP_REACH if cap else depth

        def pooled(ranking: np.ndarray) -> np.ndarray:
            return per_page_capped(ranking, d.chunk_doc_row, cap, depth)

        # Dense candidates from the dense index (exact or ANN: query/dense.py), never a scan of every chunk's
        # cosine in ANN mode; the pool's cosines with the user's query are computed exactly below.
        # The user's own query first: its channels also explain the hits and set the match tier.
        dense_all, dense_cos = st.dense.top(vecs[0], reach)
        dense_user, dense_cos = dense_all[:depth], dense_cos[:depth]
        best_cosine = float(dense_cos[0]) if dense_cos.size else 0.0  # = dense.best(): the top-1 of this search
        tokens = tokenize(query)  # the lexical channel's, the page terms' and the term coverage's
        lex = lexical_signals(d, query, policy, tokens)
        lex_user, lex_ran = lex.scores, lex.nterms > 0
        lex_all = top_ranking(lex_user, reach, positive_only=True) if lex_ran else None
        lex_top = lex_all[:depth] if lex_all is not None else None
        rankings = [(pooled(dense_all), fz.dense_weight)]
        if lex_all is not None:
            rankings.append((pooled(lex_all), fz.lexical_weight))
        for j, text in enumerate(phrasings, 1):
            rows, _cos = st.dense.top(vecs[j], reach)
            other = lexical_signals(d, text, policy)
            rankings.append((pooled(rows), fz.dense_weight))
            if other.nterms:
                rankings.append((pooled(top_ranking(other.scores, reach, positive_only=True)), fz.lexical_weight))
        if lex.identifier is not None:
            rankings.append((pooled(top_ranking(lex.identifier, reach, positive_only=True)), fz.identifier_weight))
        pool_rows, _fused = rrf_pool(rankings, fz.rrf_k, d.n)
        pool_cos = st.dense.cosines(vecs[0], pool_rows)
        ident = lex.identifier[pool_rows] if lex.identifier is not None else None
        rel = (
            np.asarray(relevance_of(pool_cos, lex_user[pool_rows], policy, lex_ran, ident), dtype=np.float64)
            if pool_rows.size
            else np.zeros(0)
        )
        today = reference_day()
        prior = st.prior(today)
        # Version match is the only query-dependent trust factor: per candidate, and only when targets are given.
        vfs: dict[int, dict] = {}
        keep = np.ones(pool_rows.size, dtype=bool)
        vmult = np.ones(pool_rows.size)
        if tlist:
            for pos, i in enumerate(pool_rows.tolist()):
                vf, excluded = version_factor(d.version_rows(i), tlist, policy, strict)
                keep[pos], vmult[pos], vfs[i] = not excluded, vf["multiplier"], vf
        any_version_pass = bool(keep.any())
        keep &= ~prior.excluded[pool_rows]  # a kind of content risk the policy excludes
        c = policy.confidence
        trust = np.clip(prior.for_targets(docs_targeted)[pool_rows] * vmult, 0.0, 1.0)
        conf = (trust**c.trust_weight) * (rel**c.relevance_weight)
        pool = Pool(pool_rows[keep], trust[keep], rel[keep], conf[keep])
        channels = _channels(st, lex_ran, int(pool_rows.size))
        # The ordering score (query/score.py): relevance after any rerank × trust.  A cross-encoder reads the
        # passage with the query, so its probability is the relevance; without one, the passage's page adds
        # relevance lent by its eligible page-mates (never one with content risk or a penalised version).
        terms, ranking_rel = None, np.zeros(0)
        reranked = _rerank(st, query, pool, channels)
        if reranked:
            ranking_rel = np.array([0.0 if p is None else p for p in pool.rerank or []], dtype=np.float64)
        elif pool.size:
            version_ok = vmult >= 1.0
            lending = S.Lending(
                lender=(~prior.flagged[pool_rows] & version_ok)[keep],
                withheld=np.union1d(prior.flagged_rows, pool_rows[~(version_ok & keep)]),
            )
            terms = S.page_terms(d, policy, pool, vecs[0], tokens, lex_ran, lending)
            ranking_rel = terms.relevance(pool.relevance)
        score = S.ranking_score(pool.trust, ranking_rel, policy)
        rows = pool.rows.tolist()
        ordered = S.order(score, pool.confidence, d.chunk_id_rank()[pool.rows])
        hits = collapse(d.text_groups(), pool.rows, ordered, max(k, COVERAGE_HITS))
        pool_best = float(pool.confidence.max()) if pool.size else 0.0
        best_score = float(S.shown(score).max()) if pool.size else 0.0
        abstained, reason = False, None
        if not pool_rows.size:
            abstained, reason = True, "no_candidates"
        elif not pool.size:
            abstained, reason = True, "version_unavailable" if tlist and not any_version_pass else "no_candidates"
        elif pool_best < policy.match.evidence_floor:
            abstained, reason = True, "evidence_floor"
        if reason in ("no_candidates", "version_unavailable"):
            hits = []
        # Answer confidence and the tier: from the user's own query's channels and the final ranking's top hits.
        top_rows = [rows[j] for j, _also in hits[:COVERAGE_HITS]]
        signals = measure(d, policy, ChannelOutcome(query, dense_user, dense_cos, lex_top, lex_user, top_rows, tokens))
        answer = probability(policy, signals)
        tier, ceiling = match_tier(policy, answer, best_cosine)
        if not abstained and answer is not None and answer < policy.match.min_answer_confidence:
            # The hits stay (marked) for a reader to judge, unless strict asked for answers only.
            abstained, reason = True, LOW_CONFIDENCE
            if strict:
                hits = []
        note = None
        if abstained:  # an abstained answer is never a high (or mid) match: the header agrees with itself
            tier, ceiling = "low", policy.match.low_ceiling
            note = abstention_note(d, policy, prior, Outcome(pool_rows, rel, keep, pool_best, answer), reason)
        shown = [
            pool.hit(j, also)
            | {
                "score": float(score[j]),
                "ranking_relevance": float(ranking_rel[j]),
                "page_terms": terms.explained(j, d.chunk_ids, pool.rows) if terms is not None else None,
            }
            for j, also in hits[:k]
        ]
        for h, text in zip(shown, d.texts([h["i"] for h in shown]), strict=True):
            h["text"] = text
            h.update(_shown(st, h["i"], today, vfs.get(h["i"]), docs_targeted))
        # the channels' ranks and scores of the shown hits
        shown_rows = [h["i"] for h in shown]  # pool_rows is sorted (rrf_pool): each shown row's place by bisection
        at = np.searchsorted(pool_rows, shown_rows)
        cos_user = dict(zip(shown_rows, pool_cos[at].tolist(), strict=True))
        ident_of = dict(zip(shown_rows, ident[at].tolist(), strict=True)) if ident is not None else None

        def channel_terms(i: int) -> dict:
            return {
                "passage_terms": S.passage_terms(
                    policy, cos_user[i], float(lex_user[i]), lex_ran, ident_of[i] if ident_of else None
                ),
                "cosine": cos_user[i],
                "bm25": float(lex_user[i]),
                "reranked": reranked,
                "weights": (float(c.trust_weight), float(c.relevance_weight)),
            }

        dense_rank = dict(zip(dense_user.tolist(), range(1, dense_user.size + 1), strict=True))
        lex_rank = dict(zip(lex_top.tolist(), range(1, lex_top.size + 1), strict=True)) if lex_top is not None else {}
        out_hits = [
            R.hit(d, h | channel_terms(h["i"]), rank, ceiling, best_score, dense_rank, lex_rank)
            for rank, h in enumerate(shown, 1)
        ]
        return R.response(
            query=query,
            snapshot_id=st.snapshot_id,
            signed=st.data.signed_by is not None,
            built_at=d.manifest.created_at,
            sources=R.dated_sources(d),
            policy=policy,
            targets=targets_shown,
            strict=strict,
            match_tier=tier,
            best_cosine=best_cosine,
            answer_confidence=answer,
            signals=signals,
            abstained=abstained,
            reason=reason,
            note=note,
            channels=channels,
            hits=out_hits,
            also=phrasings,
        )

    def _factors(self, i: int, today, vf: dict | None, targets, strict: bool, docs_targeted=False) -> dict:
        """The explained factors of passage ``i`` under the current state (tests compare them with the prior)."""
        return _factors(self.state, i, today, vf, targets, strict, docs_targeted)


# -- pieces of a search: functions of the one state the search took ------------------------------------
def _factors(st: SearchState, i: int, today, vf: dict | None, targets, strict: bool, docs_targeted=False) -> dict:
    """The explained factors of one hit (their multipliers are the ones the prior multiplied)."""
    return explain_factors(HitContext(st.data, st.policy, today, i, docs_targeted, targets, strict, vf))


def _shown(st: SearchState, i: int, today, vf: dict | None, docs_targeted: bool) -> dict:
    """Hit ``i``'s provenance and cleaned factors: worked out once a day (and docs target) per state, with the
    search's own version match (``vf``, when it has targets) in its place."""
    out = st.shown(
        ("hit", i, today, docs_targeted),
        lambda: R.shown(st.data, i, _factors(st, i, today, None, [], False, docs_targeted)),
    )
    if vf is not None:
        out["factors"]["version_match"] = R.clean(vf)  # the same key: its place in the factors is kept
    return out


def _channels(st: SearchState, lex_ran: bool, pool: int) -> dict:
    rr = st.policy.rerank
    rerank = {"ran": False, "reason": "no reranking model configured (policy rerank.model_path)"}
    if rr.model_path:
        rerank = (
            {"ran": True, "reason": None, "model": rr.model_path}
            if Path(rr.model_path).is_dir()
            else {"ran": False, "reason": f"reranking model not found at {rr.model_path}"}
        )
    n = st.data.n
    return {
        "dense": {"ran": n > 0, "reason": None if n else "empty snapshot"},
        "lexical": {"ran": lex_ran, "reason": None if lex_ran else "no query term is in the vocabulary"},
        "rerank": rerank,
        "pool_size": pool,
    }


def _rerank(st: SearchState, query: str, pool: Pool, channels: dict) -> bool:
    """Whether a cross-encoder read the pool: it reads the best ``rerank.depth`` by confidence and leaves each
    one's probability in ``pool.rerank`` (None for those it did not read)."""
    if not channels["rerank"]["ran"] or not pool.size:
        return False
    reranker = st.reranker()
    top = np.argsort(-pool.confidence, kind="stable")[: st.policy.rerank.depth].tolist()
    scores = reranker.predict([(query, t) for t in st.data.texts(pool.rows[top].tolist())])
    pool.rerank = [None] * pool.size
    for j, s in zip(top, scores, strict=True):
        pool.rerank[j] = 1.0 / (1.0 + math.exp(-float(s)))
    return True
