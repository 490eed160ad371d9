"""The ranking relevance's weights, fitted from judged queries (issue 43 item 3: fusion learned, honestly).

What is fitted is the stated formula itself (query/score.py), so the explained order stays exact: a hit's

    ranking_score = trust ^ trust_weight × ranking_relevance
    ranking_score ∝ served_floor × trust^tw × (Σ_passage a_i x_i / Σ_in-use a_i + Σ_page p_k y_k)

with ``x`` the passage terms a hit shows (dense, lexical, identifier) and ``y`` its page terms (support,
page_vector, page_terms, and any later page term).  Within one query the normaliser is a constant, so the order is
that of ``s = trust_weight × log(trust) + log(served_floor) + log(Σ a_i x_i / A + Σ p_k y_k)``.  The weights ``a``,
``p`` and ``trust_weight`` are fitted by a pairwise logistic loss (RankNet: Burges et al. 2005, "Learning to Rank
using Gradient Descent", with LambdaRank's |ΔnDCG| pair weights: Burges 2010, "From RankNet to LambdaRank to
LambdaMART: An Overview", §4) over every pair of one query's hits whose files' grades differ, on the dev half
only; an L2 penalty pulls the log-weights toward the hand-set policy, its strength chosen by cross-validation
over dev queries (folds by query).  The test half is read once, by the bench, to decide whether the fit ships.

The hits' term values are read from responses (k hits under the hand-set policy): ``support`` is a sum of page
mates' own relevance and so moves a little with the passage weights; the bench therefore scores every candidate
fit by running the real search, never by these features alone.

Pure numpy/scipy; no search runs here.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PASSAGE_TERMS = ("dense", "lexical", "identifier")
TRUST = "trust_weight"
K = 10  # the metric's depth (nDCG@10, bench/bench_quality.py)


@dataclass(frozen=True)
class QueryHits:
    """One judged query's hits as a response showed them: per hit its passage terms (NaN where the channel was
    not in use), page terms, trust, served floor (an unrouted page's cap below the served ones; 1.0 for a served
    page) and files (the hit's file, then its ``also_in`` copies'); ``grades``: the judged files."""

    query_id: str
    passage: np.ndarray  # (hits, len(PASSAGE_TERMS))
    page: np.ndarray  # (hits, len(page_terms))
    trust: np.ndarray  # (hits,)
    served_floor: np.ndarray  # (hits,) an unrouted page's cap as shown (1.0 where the page is served)
    files: tuple[tuple[str, ...], ...]
    grades: dict[str, int]

    def gains(self) -> np.ndarray:
        """Per hit, the best grade among the files it names (the gain it brings the file ranking)."""
        return np.array([max((self.grades.get(f, 0) for f in fs), default=0) for fs in self.files], dtype=float)


@dataclass(frozen=True)
class Weights:
    passage: dict[str, float]
    page: dict[str, float]
    trust_weight: float

    def vector(self, page_terms: Sequence[str]) -> np.ndarray:
        return np.array(
            [self.passage[t] for t in PASSAGE_TERMS] + [self.page[t] for t in page_terms] + [self.trust_weight]
        )

    @classmethod
    def of(cls, v: np.ndarray, page_terms: Sequence[str]) -> Weights:
        n = len(PASSAGE_TERMS)
        return cls(
            passage={t: float(v[i]) for i, t in enumerate(PASSAGE_TERMS)},
            page={t: float(v[n + i]) for i, t in enumerate(page_terms)},
            trust_weight=float(v[-1]),
        )

    def normalised(self) -> Weights:
        """The same order with the passage weights in use summing to 1 (dense + lexical; the identifier's share is
        added only for queries that name one, so it is scaled with them but not counted in the sum)."""
        z = self.passage["dense"] + self.passage["lexical"]
        return Weights(
            passage={t: round(w / z, 6) for t, w in self.passage.items()},
            page={t: round(w / z, 6) for t, w in self.page.items()},
            trust_weight=round(self.trust_weight, 6),
        )


def scores(q: QueryHits, w: np.ndarray) -> np.ndarray:
    """Each hit's ordering score ``s`` under the weights ``w`` (Weights.vector's order)."""
    n = len(PASSAGE_TERMS)
    a, p, tw = w[:n], w[n:-1], w[-1]
    used = ~np.isnan(q.passage)
    x = np.where(used, q.passage, 0.0)
    own = (x @ a) / np.maximum(used @ a, 1e-12)
    rel = own + q.page @ p
    return tw * np.log(np.maximum(q.trust, 1e-12)) + np.log(q.served_floor) + np.log(np.maximum(rel, 1e-12))


def ranked_files(q: QueryHits, s: np.ndarray) -> list[str]:
    """The files the hits name, best hit first (ties: the response's own order), each file once."""
    out: list[str] = []
    for j in np.lexsort((np.arange(s.size), -s)).tolist():
        out += q.files[j]
    return list(dict.fromkeys(out))


def ndcg(ranked: list[str], grades: dict[str, int], k: int = K) -> float:
    """nDCG@k with linear gains and a 1/log2(rank + 1) discount, the ideal over every judged file (the definition
    of bench/bench_quality.py's ``ndcg_at_10``)."""
    gains = [grades.get(f, 0) for f in ranked[:k]]
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def mean_ndcg(queries: Sequence[QueryHits], w: np.ndarray) -> float:
    return float(np.mean([ndcg(ranked_files(q, scores(q, w)), q.grades) for q in queries])) if queries else 0.0


def group_ndcg(groups: Sequence[Sequence[QueryHits]], w: np.ndarray) -> float:
    """The mean over groups (corpora) of each group's mean nDCG@10: every corpus counts the same, whatever its size."""
    return float(np.mean([mean_ndcg(g, w) for g in groups if g]))


def _pairs(q: QueryHits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(better, worse, weight) of every pair of hits whose gains differ; weight = |gain difference| × the |ΔnDCG|
    of swapping the two at their positions under the response's own order, so the pairs near the top count."""
    g = q.gains()
    i, j = np.nonzero(g[:, None] > g[None, :])
    if not i.size:
        return i, j, np.zeros(0)
    ideal = sorted(q.grades.values(), reverse=True)[:K]
    idcg = sum(x / math.log2(r + 2) for r, x in enumerate(ideal)) or 1.0
    disc = 1.0 / np.log2(np.arange(g.size) + 2.0)
    delta = np.abs((g[i] - g[j]) * (disc[i] - disc[j])) / idcg
    return i, j, delta + 1e-3 / max(i.size, 1)


def fit(groups: Sequence[Sequence[QueryHits]], start: np.ndarray, penalty: float) -> np.ndarray:
    """The weights minimising the pairwise loss (each group's mean over its queries, then the mean over groups, so
    a small corpus counts as much as a large one) + penalty × |log w - log start|², from ``start`` (all > 0)."""
    from scipy.optimize import minimize

    grouped = [[(q, *pr) for q in g if (pr := _pairs(q))[0].size] for g in groups]
    grouped = [g for g in grouped if g]
    theta0 = np.log(start)

    def loss(params: np.ndarray) -> float:
        # params: the log-weights, then the log of the margin's scale (it sets how sure the model is, never the
        # order; without it the log-scale of s would fix the margins and bend the weights to widen them)
        theta, scale = params[:-1], math.exp(params[-1])
        w = np.exp(theta)
        total = 0.0
        for g in grouped:
            part = 0.0
            for q, i, j, weight in g:
                s = scale * scores(q, w)
                part += float(np.sum(weight * np.logaddexp(0.0, -(s[i] - s[j])))) / float(np.sum(weight))
            total += part / len(g)
        return total / max(len(grouped), 1) + penalty * float(np.sum((theta - theta0) ** 2))

    # trust_weight (the last weight) stays as the policy sets it: confidence = relevance × trust is the product's
    # promise, not a weight to learn away (a free fit drove it to 0.16 on the two corpora's dev halves)
    bounds = [(-9.0, 3.0)] * (theta0.size - 1) + [(theta0[-1], theta0[-1])] + [(-3.0, 5.0)]
    res = minimize(loss, np.r_[theta0, 0.0], method="L-BFGS-B", bounds=bounds)
    return np.exp(res.x[:-1])


def folds(queries: Sequence[QueryHits], n: int, seed: int = 0) -> list[tuple[list[QueryHits], list[QueryHits]]]:
    """``n`` (train, held-out) splits by query, in a fixed shuffled order."""
    order = np.random.default_rng(seed).permutation(len(queries))
    parts = [order[f::n] for f in range(n)]
    out = []
    for f in range(n):
        held = set(parts[f].tolist())
        out.append(([q for i, q in enumerate(queries) if i not in held], [queries[i] for i in sorted(held)]))
    return out


def cross_validate(
    groups: Sequence[Sequence[QueryHits]], start: np.ndarray, penalties: Sequence[float], n_folds: int = 5
) -> dict[float, float]:
    """Mean held-out nDCG@10 (reranked from the features; ``group_ndcg``) of the fit at each penalty, every group
    split into the same number of folds by query; the start's own as ``inf`` (a penalty under which nothing moves)."""
    split = [folds(g, n_folds) for g in groups]
    out = {math.inf: float(np.mean([group_ndcg([s[f][1] for s in split], start) for f in range(n_folds)]))}
    for lam in penalties:
        held = []
        for f in range(n_folds):
            w = fit([s[f][0] for s in split], start, lam)
            held.append(group_ndcg([s[f][1] for s in split], w))
        out[lam] = float(np.mean(held))
    return out


def fusion_id(weights: Weights, fitted_on: str) -> str:
    """A short id of a fit: its weights and what it was fitted on."""
    body = json.dumps({"passage": weights.passage, "page": weights.page, "trust": weights.trust_weight}, sort_keys=True)
    return f"fusion:{hashlib.sha256((body + fitted_on).encode()).hexdigest()[:12]}"
