"""Fit answer confidence from judged queries, and measure how honest it is (``trustindex calibrate``).

The label of a query is whether the top hit's page is judged relevant: its grade is at least ``min_grade``
(default 1: a page that partly answers, or an older copy of the answer, still puts the reader on the answer;
``--min-grade 2`` asks for a page that answers it whole).  An off-topic query (no relevant page) is always 0.
Each query is searched as a user would search it, and its answer signals (query/answer_confidence.py) are read
from the response.

The model is scikit-learn's L2-regularised ``LogisticRegression`` on standardised signals, written back in raw
units (weights and intercept), optionally followed by an ``IsotonicRegression`` fitted on out-of-fold
probabilities.  Held-out figures come from queries the fit never saw: the other split of bench/eval's fixed
dev/test split (``--split dev`` fits on dev, reports test), else 5-fold cross-validation.  ECE uses 10
equal-width bins (Σ n_b/N · |mean p_b − share of relevant_b|); the Brier score is the mean squared error of the
probability; selective accuracy at coverage c is the share of relevant top hits among the c most confident
queries.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from trustindex.calibration.judged import IN_DOMAIN, OFF_TOPIC_KINDS, SPLITS, JudgedQuery
from trustindex.query.answer_confidence import COVERAGE_HITS, PROBABILITY_BOUNDS, match_tier
from trustindex.schemas.answer_signals import DEFAULT_FEATURES, LOW_CONFIDENCE
from trustindex.schemas.errors import QueryError
from trustindex.schemas.policy import CALIBRATION_KEYS, Policy

BINS = 10
COVERAGES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
FOLDS = 5
SEED = 0


@dataclass(frozen=True)
class Observation:
    """One judged query as the index answered it."""

    query: JudgedQuery
    signals: dict[str, float]
    label: int  # 1: the top hit's page is judged relevant (grade >= min_grade)
    top_path: str | None
    abstained_otherwise: bool  # abstained for a reason the calibration does not decide (evidence floor, ...)


def observe(index, queries: list[JudgedQuery], min_grade: int = 1) -> list[Observation]:
    out = []
    for q in queries:
        r = index.search(q.query, k=COVERAGE_HITS)
        top = r["hits"][0]["provenance"]["path"] if r["hits"] else None
        label = int(top is not None and q.relevant.get(top, 0) >= min_grade)
        other = r["abstained"] and r["abstention_reason"] != LOW_CONFIDENCE
        out.append(Observation(q, r["answer_signals"], label, top, bool(other)))
    return out


@dataclass(frozen=True)
class Model:
    """sigmoid(intercept + weights · signals), then the isotonic map when it has breakpoints."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    intercept: float
    isotonic_x: tuple[float, ...] = ()
    isotonic_y: tuple[float, ...] = ()

    def predict(self, X: np.ndarray) -> np.ndarray:
        z = self.intercept + np.asarray(X, dtype=np.float64) @ np.asarray(self.weights)
        p = 1.0 / (1.0 + np.exp(-z))
        p = np.interp(p, self.isotonic_x, self.isotonic_y) if self.isotonic_x else p
        return np.clip(p, *PROBABILITY_BOUNDS)  # what serving shows (answer_confidence.probability)


def matrix(obs: list[Observation], features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[o.signals[f] for f in features] for o in obs], dtype=np.float64).reshape(len(obs), len(features))
    return X, np.array([o.label for o in obs], dtype=np.int64)


def _logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    lr = LogisticRegression(C=1.0, max_iter=1000).fit((X - mu) / sd, y)
    w = lr.coef_[0] / sd
    return w, float(lr.intercept_[0] - (w * mu).sum())


def fit(X: np.ndarray, y: np.ndarray, features: tuple[str, ...], isotonic: bool = False) -> Model:
    if len(set(y.tolist())) < 2:
        raise QueryError("calibration needs queries whose top hit is relevant and queries whose top hit is not")
    w, b = _logistic(X, y)
    model = Model(features, tuple(round(float(v), 6) for v in w), round(b, 6))
    if not isotonic:
        return model
    from sklearn.isotonic import IsotonicRegression

    oof = out_of_fold(X, y, features)  # isotonic on the probabilities of queries each fold did not see
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(oof, y)
    xs, ys = np.asarray(iso.X_thresholds_, dtype=np.float64), np.asarray(iso.y_thresholds_, dtype=np.float64)
    keep = np.concatenate([[True], np.diff(xs) > 0])
    return Model(features, model.weights, model.intercept, tuple(np.round(xs[keep], 6)), tuple(np.round(ys[keep], 6)))


def out_of_fold(X: np.ndarray, y: np.ndarray, features: tuple[str, ...], isotonic: bool = False) -> np.ndarray:
    """Each query's probability from a model fitted on the other folds (stratified, fixed seed)."""
    from sklearn.model_selection import StratifiedKFold

    folds = min(FOLDS, int(np.bincount(y, minlength=2).min()))
    if folds < 2:
        raise QueryError("cross-validation needs at least 2 relevant and 2 non-relevant top hits")
    p = np.zeros(len(y))
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=SEED).split(X, y):
        p[test] = fit(X[train], y[train], features, isotonic).predict(X[test])
    return p


# -- how honest a probability is -------------------------------------------------------------------------
def reliability(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[dict]:
    """Per non-empty equal-width bin: mean predicted probability, observed share of relevant, count."""
    idx = np.minimum((np.asarray(p) * bins).astype(int), bins - 1)
    return [
        {"bin": b, "predicted": float(p[idx == b].mean()), "observed": float(y[idx == b].mean()), "count": n}
        for b in range(bins)
        if (n := int((idx == b).sum()))
    ]


def ece(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    return float(sum(r["count"] * abs(r["predicted"] - r["observed"]) for r in reliability(p, y, bins)) / len(p))


def ece_by_chance(p: np.ndarray, draws: int = 1000) -> tuple[float, float]:
    """The ECE a perfectly calibrated predictor would show on these probabilities (labels drawn from them): its
    mean and 95th percentile.  On a hundred queries, sampling alone gives an ECE near 0.07, so a measured ECE is
    read against this, not against 0."""
    rng = np.random.default_rng(SEED)
    e = [ece(p, (rng.uniform(size=len(p)) < p).astype(np.int64)) for _ in range(draws)]
    return float(np.mean(e)), float(np.quantile(e, 0.95))


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((np.asarray(p) - y) ** 2))


def auroc(p: np.ndarray, y: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p)) if len(set(y.tolist())) == 2 else None


def risk_coverage(p: np.ndarray, y: np.ndarray, coverages=COVERAGES) -> list[dict]:
    """Answer only the most confident share c of queries: how often is the top hit then relevant?"""
    order = np.argsort(-np.asarray(p), kind="stable")
    out = []
    for c in coverages:
        n = max(1, int(round(c * len(p))))
        kept = order[:n]
        acc = float(y[kept].mean())
        out.append({"coverage": c, "n": n, "threshold": float(p[kept].min()), "accuracy": acc, "risk": 1 - acc})
    return out


def tier_shares(obs: list[Observation], p: np.ndarray, policy: Policy) -> dict[str, dict]:
    """Per kind of query: the share in each tier, and the shares the issue's goals read."""
    floor = policy.match.min_answer_confidence
    out: dict[str, dict] = {}
    for kind in (IN_DOMAIN, *OFF_TOPIC_KINDS):
        rows = [(o, pi) for o, pi in zip(obs, p, strict=True) if o.query.group == kind]
        if not rows:
            continue
        tiers = [match_tier(policy, float(pi), o.signals["best_cosine"])[0] for o, pi in rows]
        abstained = [bool(o.abstained_otherwise or pi < floor) for o, pi in rows]
        n = len(rows)
        out[kind] = {
            "n": n,
            **{t: sum(x == t for x in tiers) / n for t in ("high", "mid", "low")},
            "abstained": sum(abstained) / n,
            "high_or_mid": sum(t != "low" for t in tiers) / n,
            "low_or_abstained": sum(t == "low" or a for t, a in zip(tiers, abstained, strict=True)) / n,
            "not_high": sum(t != "high" for t in tiers) / n,
        }
    return out


def evaluate(obs: list[Observation], p: np.ndarray, policy: Policy) -> dict:
    y = np.array([o.label for o in obs])
    rc = risk_coverage(p, y)
    return {
        "n": len(obs),
        "base_rate": float(y.mean()),
        "ece": ece(p, y),
        "ece_if_calibrated": dict(zip(("mean", "p95"), ece_by_chance(p), strict=True)),
        "brier": brier(p, y),
        "auroc": auroc(p, y),
        "selective_accuracy_at_80": next(r["accuracy"] for r in rc if r["coverage"] == 0.8),
        "risk_coverage": rc,
        "reliability": reliability(p, y),
        "tiers": tier_shares(obs, p, policy),
    }


# "high" promises a top hit that answers at least 4 times in 5 (the probability is calibrated, so the threshold
# reads as that promise); between mid and this, the answer is shown as possible ("mid").  With a floor of 0.5 the
# fit on the real docs put high and mid at the same value, and the mid band was empty.
HIGH_TIER_FLOOR = 0.8


def choose_tiers(obs: list[Observation], p: np.ndarray, base: Policy) -> dict[str, float]:
    """The tier thresholds, from the training queries: mid halfway (on the logit scale) between the highest clearly
    off-topic query it can hold low and the cap, the in-domain 10% quantile (no more than 10% of in-domain queries
    drop to low); high at least HIGH_TIER_FLOOR and above 80% of near-domain ones.

    Halfway, not just above the highest off-topic query: with n off-topic training queries, a new one lands above
    their maximum with probability 1/(n + 1) (exchangeability), so a threshold at the maximum lets about one in
    fifty new off-topic queries through to mid.  The midpoint is the widest margin both goals leave.

    An off-topic query above the cap stays mid or high whatever mid is, so it must not set mid: on the real docs
    one off-topic question written in the docs' own words (p 0.88) pulled mid up to the cap, which dropped a tenth of
    the in-domain queries to low and held no off-topic query low that 0.29 did not."""
    kinds = np.array([o.query.group for o in obs])
    off, near, ind = p[kinds == OFF_TOPIC_KINDS[0]], p[kinds == OFF_TOPIC_KINDS[1]], p[kinds == IN_DOMAIN]
    cap = float(np.quantile(ind, 0.1)) if ind.size else 1.0
    holdable = off[off < cap]
    if holdable.size:
        mid = _logit_midpoint(float(holdable.max()), cap)
    else:  # no off-topic query to hold (or none that can be held): the policy's own mid, within the cap
        mid = base.match.mid_probability if not off.size else cap
    mid = min(mid, cap)
    high = max(HIGH_TIER_FLOOR, mid, float(np.quantile(near, 0.8)) + 0.01 if near.size else 0.0)
    floor = min(base.match.min_answer_confidence, mid)
    return {
        "mid_probability": round(mid, 4),
        "high_probability": round(min(high, 1.0), 4),
        "min_answer_confidence": floor,
    }


def _logit_midpoint(a: float, b: float) -> float:
    """The probability halfway between a and b on the logit scale (both inside (0, 1))."""
    la, lb = (float(np.log(x / (1.0 - x))) for x in np.clip([a, b], *PROBABILITY_BOUNDS))
    return float(1.0 / (1.0 + np.exp(-(la + lb) / 2.0)))


def calibrate(
    index,
    queries: list[JudgedQuery],
    base: Policy,
    *,
    split: str | None = None,
    isotonic: bool = False,
    min_grade: int = 1,
    features: tuple[str, ...] = DEFAULT_FEATURES,
    name: str = "operator",
) -> tuple[Policy, dict]:
    """Fit on ``split`` (all queries when None), evaluate on the other split (cross-validation when None)."""
    if split is not None and split not in SPLITS:
        raise QueryError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    obs = observe(index, queries, min_grade)
    train = [o for o in obs if split is None or o.query.split == split]
    held = [o for o in obs if split is not None and o.query.split != split]
    if len(train) < 10 or (split is not None and len(held) < 10):
        raise QueryError(f"calibration needs at least 10 queries to fit and 10 to test; got {len(train)}/{len(held)}")
    X, y = matrix(train, features)
    model = fit(X, y, features, isotonic)
    # The tiers are read from what the model says of queries it was not fitted on (out of fold): in-sample
    # probabilities are surer than the model will be of a new query, at both ends.
    p_oof = out_of_fold(X, y, features, isotonic)
    tiers = choose_tiers(train, p_oof, base)
    if split is None:
        held, p_held, how = train, p_oof, f"{FOLDS}-fold cross-validation"
    else:
        p_held, how = model.predict(matrix(held, features)[0]), f"the {held[0].query.split} split"
    emb = index.data.manifest.embedding_model
    digest = hashlib.sha256(
        json.dumps(
            {
                "model": emb.get("sha256"),
                "fit": [[o.query.id, o.label] for o in train],
                "weights": model.weights,
                "intercept": model.intercept,
                "isotonic": [model.isotonic_x, model.isotonic_y],
                "tiers": tiers,  # the same model with other thresholds promises other tiers: another calibration
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()[:12]
    cid = f"{name}:{emb.get('id', 'model')}@{digest}"
    values = base.to_dict()
    m = values["match"]
    m.update(tiers)
    probe = Policy.from_dict({"match": {**{k: m[k] for k in m if k not in CALIBRATION_KEYS}}}, "calibrated policy")
    report = evaluate(held, p_held, probe)
    m.update(
        calibration_id=cid,
        features=list(features),
        weights=list(model.weights),
        intercept=model.intercept,
        isotonic_x=list(model.isotonic_x),
        isotonic_y=list(model.isotonic_y),
        heldout_n=report["n"],
        heldout_ece=round(report["ece"], 4),
        heldout_brier=round(report["brier"], 4),
        heldout_auroc=round(report["auroc"] or 0.0, 4),
        reliability_predicted=[round(r["predicted"], 4) for r in report["reliability"]],
        reliability_observed=[round(r["observed"], 4) for r in report["reliability"]],
        reliability_count=[r["count"] for r in report["reliability"]],
    )
    policy = Policy.from_dict(values, "calibrated policy")
    result = {
        "calibration_id": cid,
        "label": f"the top hit's page is judged relevant with grade >= {min_grade}; off-topic queries are 0",
        "model": {
            "features": list(features),
            "weights": list(model.weights),
            "intercept": model.intercept,
            "isotonic_breakpoints": len(model.isotonic_x),
        },
        "thresholds": tiers,
        "fit": {"split": split or "all", "n": len(train), "positives": int(y.sum())},
        "heldout": {"how": how, **report},
        "snapshot_id": index.snapshot_id,
    }
    return policy, result
