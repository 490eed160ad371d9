"""The dev-only feature choice of the shipped calibration (bench/calibration_cv.py), on generated observations: an
informative signal is preferred to noise, and the tier shares are pooled over held-out folds of every kind."""

from __future__ import annotations

import numpy as np
import pytest

from bench.calibration_cv import cross_validate, every_subset, lines, select
from trustindex.calibration.fit import Observation
from trustindex.calibration.judged import JudgedQuery
from trustindex.schemas.answer_signals import BEST_COSINE, TERM_COVERAGE, UNKNOWN_TERM_SHARE
from trustindex.schemas.policy import Policy

NOISE = TERM_COVERAGE  # in these observations, a signal unrelated to the label


def observations(n: int = 240, seed: int = 3) -> list[Observation]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        group = ("in-domain", "in-domain", "off-topic", "near-domain")[i % 4]
        off = group != "in-domain"
        cosine = rng.uniform(0.2, 0.6) if off else rng.uniform(0.4, 0.8)
        unknown = rng.uniform(0.3, 0.9) if group == "off-topic" else rng.uniform(0.0, 0.1)
        label = int(not off and rng.uniform() < cosine + 0.2)
        relevant = {"docs/page.md": 2} if not off else {}
        q = JudgedQuery(f"g{i}", f"generated query {i}", relevant, group)
        signals = {BEST_COSINE: cosine, UNKNOWN_TERM_SHARE: unknown, NOISE: float(rng.uniform())}
        out.append(Observation(q, signals, label, "docs/page.md", False))
    return out


def test_cross_validation_scores_every_query_once_a_repeat_and_pools_the_tiers():
    obs = observations()
    r = cross_validate(obs, (BEST_COSINE, UNKNOWN_TERM_SHARE), Policy.without_shipped_calibration(), repeats=2)
    assert 0.0 <= r["ece"] < 0.15 and 0.0 < r["brier"] < 0.25 and r["auroc"] > 0.8
    counts = {kind: t["n"] for kind, t in r["tiers"].items()}
    assert counts == {"in-domain": 2 * 120, "off-topic": 2 * 60, "near-domain": 2 * 60}  # each held out once a repeat
    for t in r["tiers"].values():
        assert t["high"] + t["mid"] + t["low"] == pytest.approx(1.0)
    # off-topic queries carry unknown words here: the folds' thresholds put nearly all of them low
    assert r["tiers"]["off-topic"]["low_or_abstained"] > 0.9


def test_the_informative_signal_set_ranks_above_noise():
    subsets = every_subset((BEST_COSINE, UNKNOWN_TERM_SHARE, NOISE))
    assert len(subsets) == 7 and (BEST_COSINE, UNKNOWN_TERM_SHARE, NOISE) in subsets
    ranked = select(observations(), subsets, Policy.without_shipped_calibration(), repeats=2)
    assert [r["brier"] for r in ranked] == sorted(r["brier"] for r in ranked)
    assert ranked[-1]["features"] == [NOISE]
    assert BEST_COSINE in ranked[0]["features"]
    text = lines(ranked, 2, {"noise alone": (NOISE,)})
    assert len(text) == 4 and text[-1].startswith("   7") and text[-1].endswith("<- noise alone")
