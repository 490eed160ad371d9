"""Fit the honest-match thresholds from labelled queries (``trustindex calibrate``).

The signal is the best raw cosine between a query and the whole library.  On
in-domain (answerable) and out-of-domain queries: separation is the AUROC
(the Mann–Whitney U statistic over n₁n₂, via scipy); ``high_threshold`` is the
lowest cosine that at most ``max_ood_high`` of out-of-domain queries reach;
``mid_threshold`` maximises Youden's J = TPR − FPR (capped at high);
``answer_confidence`` = sigmoid(slope × cosine + intercept) by logistic
regression (Newton's method, a small L2 penalty).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from trustindex.schemas.errors import QueryError
from trustindex.schemas.policy import Policy


def read_queries(path: str | Path) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise QueryError(f"{p}: query list not found")
    out = [
        line.strip()
        for line in p.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if len(out) < 3:
        raise QueryError(f"{p}: needs at least 3 queries, found {len(out)}")
    return out


def best_cosines(index, queries: list[str]) -> np.ndarray:
    # One at a time, as a search embeds its query (int8 activations are scaled per run), and the best cosine
    # exactly as the match tier sees it (query.dense: float32 re-scoring of the stored rows).
    return np.array([index.dense.best(index.encoder.encode([q])[0]) for q in queries])


def auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u / (len(pos) * len(neg)))


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 50) -> tuple[float, float]:
    X = np.stack([x, np.ones_like(x)], 1)
    w = np.zeros(2)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-X @ w))
        g = X.T @ (p - y) + l2 * w
        H = X.T @ (X * (p * (1 - p))[:, None]) + l2 * np.eye(2)
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])


def fit(pos: np.ndarray, neg: np.ndarray, max_ood_high: float = 0.02) -> dict:
    cand = np.unique(np.concatenate([pos, neg]))
    fpr = np.array([(neg >= t).mean() for t in cand])
    tpr = np.array([(pos >= t).mean() for t in cand])
    ok = cand[fpr <= max_ood_high]
    high = float(ok.min()) if ok.size else float(cand.max())
    mid = float(cand[int(np.argmax(tpr - fpr))])
    mid = min(mid, high)
    x = np.concatenate([pos, neg])
    y = np.concatenate([np.ones_like(pos), np.zeros_like(neg)])
    slope, intercept = _logistic(x, y)
    return {
        "auroc": auroc(pos, neg),
        "high_threshold": round(high, 4),
        "mid_threshold": round(mid, 4),
        "calibration_slope": round(slope, 4),
        "calibration_intercept": round(intercept, 4),
        "in_domain": {"n": int(pos.size), "min": float(pos.min()), "median": float(np.median(pos))},
        "out_of_domain": {"n": int(neg.size), "max": float(neg.max()), "median": float(np.median(neg))},
        "high_recall": float((pos >= high).mean()),
        "ood_above_mid": float((neg >= mid).mean()),
    }


def calibrate(index, in_domain: list[str], out_of_domain: list[str], base: Policy) -> tuple[Policy, dict]:
    pos, neg = best_cosines(index, in_domain), best_cosines(index, out_of_domain)
    result = fit(pos, neg)
    model = index.data.manifest.embedding_model
    cid = hashlib.sha256(
        json.dumps(
            {"model": model.get("sha256"), "backend": model.get("backend"), "in": in_domain, "out": out_of_domain},
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]
    values = json.loads(json.dumps(base.values))
    for k in ("high_threshold", "mid_threshold", "calibration_slope", "calibration_intercept"):
        values["match"][k] = result[k]
    values["match"]["calibration_id"] = f"{model.get('id', 'model')}@{cid}"
    result["calibration_id"] = values["match"]["calibration_id"]
    return Policy.from_dict(values, "calibrated policy"), result
