"""Which answer signals the shipped calibration should fit on, chosen on the DEV half alone.

Repeated stratified 5-fold cross-validation over the dev split's observations (calibration/fit.py ``observe``):
each fold's model is fitted by ``calibrate.fit`` on the other folds, its tier thresholds chosen there by
``calibrate.choose_tiers``, and its held-out queries scored: ECE (10 bins), Brier score and AUROC of each
repeat's out-of-fold probabilities (mean over repeats), and the issue's tier shares pooled over every held-out
fold.  The rule (schemas/answer_signals.py DEFAULT_FEATURES): the subset with the lowest Brier score, ECE next.
The test half is never searched here, so choosing by these figures leaves it untouched.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

REPEATS = 5


def cross_validate(obs: list, features: tuple[str, ...], base, repeats: int = REPEATS) -> dict:
    """The figures above for one feature set; ``base``: the policy whose other [match] settings the folds keep."""
    from sklearn.model_selection import RepeatedStratifiedKFold

    from trustindex.calibration.fit import FOLDS, SEED, brier, choose_tiers, ece, fit, matrix, tier_shares
    from trustindex.calibration.fit import auroc as auroc_of
    from trustindex.schemas.policy import CALIBRATION_KEYS, Policy

    X, y = matrix(obs, features)
    p = np.zeros((repeats, len(y)))
    counts: dict[str, dict[str, float]] = {}
    settings = {k: v for k, v in base.to_dict()["match"].items() if k not in CALIBRATION_KEYS}
    folds = RepeatedStratifiedKFold(n_splits=FOLDS, n_repeats=repeats, random_state=SEED).split(X, y)
    for j, (train, test) in enumerate(folds):
        model = fit(X[train], y[train], features)
        p[j // FOLDS, test] = model.predict(X[test])
        tiers = choose_tiers([obs[i] for i in train], model.predict(X[train]), base)
        probe = Policy.from_dict({"match": settings | tiers}, "cross-validation fold")
        for kind, s in tier_shares([obs[i] for i in test], p[j // FOLDS, test], probe).items():
            pooled = counts.setdefault(kind, {})
            for key, share in s.items():
                pooled[key] = pooled.get(key, 0.0) + (share * s["n"] if key != "n" else s["n"])
    tiers_pooled = {kind: {k: (v if k == "n" else v / c["n"]) for k, v in c.items()} for kind, c in counts.items()}
    aurocs = [auroc_of(r, y) for r in p]
    return {
        "features": list(features),
        "ece": float(np.mean([ece(r, y) for r in p])),
        "ece_sd": float(np.std([ece(r, y) for r in p])),
        "brier": float(np.mean([brier(r, y) for r in p])),
        "auroc": float(np.mean([a for a in aurocs if a is not None])) if any(a is not None for a in aurocs) else None,
        "tiers": tiers_pooled,
    }


def every_subset(signals: Iterable[str]) -> list[tuple[str, ...]]:
    names = list(signals)
    return [c for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)]


def select(obs: list, candidates: list[tuple[str, ...]], base, repeats: int = REPEATS) -> list[dict]:
    """Every candidate's figures, best first (lowest Brier score, then ECE)."""
    return sorted((cross_validate(obs, c, base, repeats) for c in candidates), key=lambda r: (r["brier"], r["ece"]))


def lines(results: list[dict], n: int, named: dict[str, tuple[str, ...]]) -> list[str]:
    """The first ``n`` results, then each named feature set (current default, shipped) wherever it ranks."""
    out = [
        "rank    ECE   (sd)  Brier  AUROC off-low near-nh  in-hm  features (off-low: clearly off-topic low or "
        "abstained; near-nh: near-domain not high; in-hm: in-domain high or mid)"
    ]
    rank_of = {tuple(r["features"]): i for i, r in enumerate(results, 1)}

    def row(i: int, r: dict, label: str = "") -> str:
        t = r["tiers"]

        def share(kind: str, key: str) -> str:
            return f"{t[kind][key]:.3f}" if kind in t else "-"

        return (
            f"{i:>4} {r['ece']:.4f} {r['ece_sd']:.4f} {r['brier']:.4f} {r['auroc'] or 0.0:.4f} "
            f"{share('off-topic', 'low_or_abstained'):>7} {share('near-domain', 'not_high'):>7} "
            f"{share('in-domain', 'high_or_mid'):>6}  {'+'.join(r['features'])}{label}"
        )

    out += [row(i, r) for i, r in enumerate(results[:n], 1)]
    for label, fs in named.items():
        if tuple(fs) in rank_of:
            i = rank_of[tuple(fs)]
            out.append(row(i, results[i - 1], f"   <- {label}"))
    return out
