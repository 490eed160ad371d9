"""The query module's entry point: ``Index.open(path).search(...)``.

Channels (dense, lexical) give candidates; RRF orders the pool; relevance is
absolute (raw cosine, saturated BM25); trust multiplies the five factors;
confidence = trust^w_t × relevance^w_r orders the hits; identical passages
collapse into one hit; the match tier comes from answer_confidence, the calibrated
probability that the top hit's page answers (query/answer_confidence.py; the best
raw cosine when the policy has no calibration); display_confidence is the tier's
ceiling scaled by the hit's confidence over the best of the whole candidate
pool, so it does not change with k.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from trustindex.query import response as R
from trustindex.query.answer_confidence import COVERAGE_HITS, ChannelOutcome, match_tier, measure, probability
from trustindex.query.fusion import rrf, top_ranking
from trustindex.query.lexical_signals import lexical_signals
from trustindex.query.pages import page_term_coverage, with_page_support, with_page_vector
from trustindex.query.reader import SnapshotData
from trustindex.query.relevance import dense_relevance
from trustindex.query.relevance import relevance as relevance_of
from trustindex.query.state import SearchState
from trustindex.query.trust import (
    attribution_factor,
    content_risk_factor,
    deprecation_factor,
    freshness_factor,
    home_tier_of,
    reference_day,
    verification_factor,
)
from trustindex.query.versionmatch import Target, parse_target_args, resolve_docs_target, version_factor
from trustindex.schemas.answer_signals import LOW_CONFIDENCE
from trustindex.schemas.components import LABEL_COMPONENTS
from trustindex.schemas.errors import QueryError
from trustindex.schemas.lexical import tokenize
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import resolve_current

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
    ) -> Index:
        """Open a snapshot directory, or the live snapshot of a data directory (``warm``: see ``warm()``;
        ``query_cache``: how many query vectors a long-running process keeps, query/state.py ``QueryVectors``)."""
        if path is None:
            path = resolve_current(data_dir or "data")
        elif (Path(path) / "CURRENT").is_file():
            path = resolve_current(path)
        pol = policy if isinstance(policy, Policy) else Policy.load(policy)
        index = cls(SnapshotData(Path(path), verify=verify), pol, query_cache)
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
        target_report, tlist = _target_report(st, tlist)
        docs_targeted = any(t.component == "docs" for t in tlist)
        d = st.data
        # The user's query is embedded on its own: int8 dynamic quantisation scales activations per batch,
        # so a batch-mate would shift its vector, and with it the match tier.
        vecs = st.query_vectors.encode(query)
        if phrasings:
            vecs = np.concatenate([vecs, st.encoder.encode(phrasings)])
        fz, depth = policy["fusion"], policy["fusion"]["candidate_depth"]
        # Dense candidates from the dense index (exact or ANN: query/dense.py), never a scan of every chunk's
        # cosine in ANN mode; the pool's cosines with the user's query are computed exactly below.
        # The user's own query first: its channels also explain the hits and set the match tier.
        dense_user, dense_cos = st.dense.top(vecs[0], depth)
        best_cosine = float(dense_cos[0]) if dense_cos.size else 0.0  # = dense.best(): the top-1 of this search
        lex = lexical_signals(d, query, policy)
        lex_user, lex_ran = lex.scores, lex.nterms > 0
        lex_top = top_ranking(lex_user, depth, positive_only=True) if lex_ran else None
        rankings = [(dense_user, fz["dense_weight"])]
        if lex_top is not None:
            rankings.append((lex_top, fz["lexical_weight"]))
        for j, text in enumerate(phrasings, 1):
            rows, _cos = st.dense.top(vecs[j], depth)
            other = lexical_signals(d, text, policy)
            rankings.append((rows, fz["dense_weight"]))
            if other.nterms:
                rankings.append((top_ranking(other.scores, depth, positive_only=True), fz["lexical_weight"]))
        if lex.identifier is not None:
            rankings.append((top_ranking(lex.identifier, depth, positive_only=True), fz["identifier_weight"]))
        fused = rrf(rankings, fz["rrf_k"])
        dense_rank = {int(i): r for r, i in enumerate(dense_user.tolist(), 1)}
        lex_rank = {int(i): r for r, i in enumerate(lex_top.tolist(), 1)} if lex_top is not None else {}
        pool = np.array(sorted(fused), dtype=np.int64)
        pool_cos = st.dense.cosines(vecs[0], pool)
        # the user's query's cosine, by row, for the hits
        cos_user = dict(zip(pool.tolist(), pool_cos.tolist(), strict=True))
        ident = lex.identifier[pool] if lex.identifier is not None else None
        rel = relevance_of(pool_cos, lex_user[pool], policy, lex_ran, ident) if pool.size else np.zeros(0)
        today = reference_day()
        prior = st.prior(today)
        # Version match is the only query-dependent trust factor: per candidate, and only when targets are given.
        vfs: dict[int, dict] = {}
        keep = np.ones(pool.size, dtype=bool)
        vmult = np.ones(pool.size)
        if tlist:
            for pos, i in enumerate(pool.tolist()):
                vf, excluded = version_factor(d.version_rows(i), tlist, policy, strict)
                keep[pos], vmult[pos], vfs[i] = not excluded, vf["multiplier"], vf
        any_version_pass = bool(keep.any())
        keep &= ~prior.excluded[pool]  # a kind of content risk the policy excludes
        c = policy["confidence"]
        trust = np.clip(prior.for_targets(docs_targeted)[pool] * vmult, 0.0, 1.0)
        conf = (trust ** c["trust_weight"]) * (rel ** c["relevance_weight"])
        cands = [
            {"i": i, "trust": t, "relevance": r, "confidence": cf, "ranking": fused[i]}
            for i, t, r, cf, k_ in zip(
                pool.tolist(),
                trust.tolist(),
                np.asarray(rel, dtype=np.float64).tolist(),
                conf.tolist(),
                keep.tolist(),
                strict=True,
            )
            if k_
        ]
        channels = _channels(st, lex_ran, int(pool.size))
        order_key = _rerank(st, query, cands, channels)
        # A cross-encoder reads the passage with the query: its order stands alone.  Without one, a passage's page
        # lends it support (its next passages, its mean vector, its share of the query's terms).
        if not channels["rerank"]["ran"]:
            order_key = with_page_support(cands, d.chunk_doc, order_key, fz["page_weight"], fz["page_passages"])
            if fz["page_vector_weight"] > 0 and cands:
                order_key = with_page_vector(order_key, _page_relevance(st, vecs[0], cands), fz["page_vector_weight"])
            if fz["page_terms_weight"] > 0 and cands and lex_ran:
                cover = page_term_coverage(d.lexical, tokenize(query), d.chunk_doc_row, len(d.docs))
                order_key = with_page_vector(
                    order_key, {c["i"]: float(cover[d.chunk_doc_row[c["i"]]]) for c in cands}, fz["page_terms_weight"]
                )
        cands.sort(key=lambda c: (-order_key(c), -c["ranking"], d.chunk_ids[c["i"]]))
        hits = _collapse(d, cands)
        pool_best = max((c["confidence"] for c in cands), default=0.0)
        abstained, reason = False, None
        if not pool.size:
            abstained, reason = True, "no_candidates"
        elif not cands:
            abstained, reason = True, "version_unavailable" if tlist and not any_version_pass else "no_candidates"
        elif pool_best < policy["match"]["evidence_floor"]:
            abstained, reason = True, "evidence_floor"
        if reason in ("no_candidates", "version_unavailable"):
            hits = []
        # Answer confidence and the tier: from the user's own query's channels and the final ranking's top hits.
        top_rows = [h["i"] for h in hits[:COVERAGE_HITS]]
        signals = measure(d, policy, ChannelOutcome(query, dense_user, dense_cos, lex_top, lex_user, top_rows))
        answer = probability(policy, signals)
        tier, ceiling = match_tier(policy, answer, best_cosine)
        if not abstained and answer is not None and answer < policy["match"]["min_answer_confidence"]:
            # The hits stay (marked) for a reader to judge, unless strict asked for answers only.
            abstained, reason = True, LOW_CONFIDENCE
            if strict:
                hits = []
        for h, text in zip(hits[:k], d.texts([h["i"] for h in hits[:k]]), strict=True):
            h["text"] = text
            h["factors"] = _factors(st, h["i"], today, vfs.get(h["i"]), tlist, strict, docs_targeted)
        out_hits = [
            R.hit(d, h, rank, ceiling, pool_best, dense_rank, lex_rank, cos_user, lex_user)
            for rank, h in enumerate(hits[:k], 1)
        ]
        return R.response(
            query=query,
            snapshot_id=st.snapshot_id,
            built_at=d.manifest.created_at,
            sources=R.dated_sources(d),
            policy=policy,
            targets=target_report,
            strict=strict,
            match_tier=tier,
            best_cosine=best_cosine,
            answer_confidence=answer,
            signals=signals,
            abstained=abstained,
            reason=reason,
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
    d, policy = st.data, st.policy
    doc_id = d.chunk_doc[i]
    if vf is None:
        vf, _excluded = version_factor(d.version_rows(i), targets, policy, strict)
    return {
        "attribution": attribution_factor(d.attribution.get(doc_id), policy),
        "verification": verification_factor(
            d.verifications.get(doc_id, []), policy, home_tier_of(d.attribution.get(doc_id))
        ),
        "freshness": freshness_factor(d.docs[doc_id], policy, today),
        "deprecation": deprecation_factor(d.deprecation_rows(i), policy, docs_targeted, d.version_folder(i)),
        "version_match": vf,
        "content_risk": content_risk_factor(d.content_risk_rows(i), policy),
    }


def _target_report(st: SearchState, targets: list[Target]) -> tuple[list[dict], list[Target]]:
    """The response's ``targets`` (with how each name was resolved) and the targets to match with."""
    data = st.data
    out, resolved = [], []
    for t in targets:
        # a component named by an alias (a display name, a package of a family) is its canonical id
        asked, named = t.component, data.registry.resolve(t.component)
        if t.component not in LABEL_COMPONENTS and named.component != t.component:
            t = Target(named.component, t.requested, t.constraint)
        seen = sorted(data.components.get(t.component, set()))
        if t.component not in data.components:
            known = ", ".join(sorted(data.components)) or "none"
            raise QueryError(
                f"target {t.component}={t.requested}: this snapshot has no content for component "
                f"{t.component!r} (known: {known})"
            )
        if t.component == "docs":
            t, how = resolve_docs_target(t, st.docs_names())
        else:
            how = {"resolved": t.requested, "resolution": "as written"}
        resolved.append(t)
        renamed = {"component_requested": asked, "component_resolution": named.how} if asked != t.component else {}
        out.append(
            {
                "component": t.component,
                "requested": t.requested,
                **renamed,
                "known_component": True,
                "constraints_seen": seen[:50],
                **how,
            }
        )
    return out, resolved


def _channels(st: SearchState, lex_ran: bool, pool: int) -> dict:
    rr = st.policy["rerank"]
    rerank = {"ran": False, "reason": "no reranking model configured (policy rerank.model_path)"}
    if rr["model_path"]:
        rerank = (
            {"ran": True, "reason": None, "model": rr["model_path"]}
            if Path(rr["model_path"]).is_dir()
            else {"ran": False, "reason": f"reranking model not found at {rr['model_path']}"}
        )
    n = st.data.n
    return {
        "dense": {"ran": n > 0, "reason": None if n else "empty snapshot"},
        "lexical": {"ran": lex_ran, "reason": None if lex_ran else "no query term is in the vocabulary"},
        "rerank": rerank,
        "pool_size": pool,
    }


def _rerank(st: SearchState, query: str, cands: list[dict], channels: dict):
    """Order key: confidence, or a cross-encoder's probability × trust when one is configured."""
    if not channels["rerank"]["ran"] or not cands:
        return lambda c: c["confidence"]
    reranker = st.reranker()
    top = sorted(cands, key=lambda c: -c["confidence"])[: st.policy["rerank"]["depth"]]
    scores = reranker.predict([(query, t) for t in st.data.texts([c["i"] for c in top])])
    for c, s in zip(top, scores, strict=True):
        c["rerank"] = 1.0 / (1.0 + math.exp(-float(s)))
    return lambda c: c.get("rerank", -1.0) * c["trust"] if "rerank" in c else -1.0 + c["confidence"]


def _page_relevance(st: SearchState, query_vector: np.ndarray, cands: list[dict]) -> dict[int, float]:
    """Per candidate row: the dense relevance of the query to its page's mean passage vector."""
    d, r = st.data, st.policy["relevance"]
    docs = list(dict.fromkeys(d.chunk_doc[c["i"]] for c in cands))
    q = np.asarray(query_vector, dtype=np.float32)
    cos = d.page_vectors(docs) @ (q / max(float(np.linalg.norm(q)), 1e-12))
    rel = dict(
        zip(docs, np.asarray(dense_relevance(cos, r["cosine_floor"], r["cosine_ceiling"])).tolist(), strict=True)
    )
    return {c["i"]: rel[d.chunk_doc[c["i"]]] for c in cands}


def _collapse(d: SnapshotData, cands: list[dict]) -> list[dict]:
    """Identical passages become one hit (the first in order) with the others in also_in."""
    groups = d.text_groups()
    first: dict[str | None, dict] = {}  # keyed by the passage text (SnapshotData.text_groups)
    hits = []
    for c in cands:
        g = groups[c["i"]]
        if g in first:
            first[g]["also"].append(c["i"])
            continue
        c["also"] = []
        first[g] = c
        hits.append(c)
    return hits
