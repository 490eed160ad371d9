"""Answer-confidence calibration on generated data (no index): the fit, the metrics, the policy fields."""

from __future__ import annotations

import numpy as np
import pytest

from trustindex.calibration.fit import Model, brier, ece, ece_by_chance, fit, reliability, risk_coverage
from trustindex.query.answer_confidence import match_tier, probability
from trustindex.schemas.answer_signals import BEST_COSINE, DEFAULT, OPERATOR, SIGNALS, TERM_COVERAGE, UNCALIBRATED
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import Policy

FEATURES = (BEST_COSINE, TERM_COVERAGE)


def _sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signals in their real ranges, labels drawn from a known logistic truth."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0.2, 0.8, n), rng.uniform(0.0, 1.0, n)])
    truth = 1 / (1 + np.exp(-(-9.0 + 12.0 * X[:, 0] + 3.0 * X[:, 1])))
    return X, (rng.uniform(size=n) < truth).astype(np.int64), truth


def test_a_fit_recovers_a_monotone_calibrated_curve():
    X, y, _ = _sample(3000, seed=1)
    model = fit(X, y, FEATURES)
    assert all(w > 0 for w in model.weights)  # more similar, more covered: more likely right
    assert model.weights[0] == pytest.approx(12.0, rel=0.25) and model.intercept == pytest.approx(-9.0, rel=0.25)
    Xt, yt, truth = _sample(4000, seed=2)
    p = model.predict(Xt)
    assert np.abs(p - truth).max() < 0.08
    assert ece(p, yt) < 0.03
    grid = np.column_stack([np.linspace(0.2, 0.8, 50), np.full(50, 0.5)])
    curve = model.predict(grid)  # flat only where it meets the probability bounds
    inside = curve[(curve > 0.01) & (curve < 0.99)]
    assert np.all(np.diff(curve) >= 0) and inside.size > 40 and np.all(np.diff(inside) > 0)


def test_isotonic_map_is_monotone_and_stays_calibrated():
    X, y, _ = _sample(3000, seed=3)
    model = fit(X, y, FEATURES, isotonic=True)
    assert len(model.isotonic_x) >= 2 and np.all(np.diff(model.isotonic_x) > 0)
    assert np.all(np.diff(model.isotonic_y) >= 0)
    Xt, yt, _ = _sample(4000, seed=4)
    assert ece(model.predict(Xt), yt) < 0.04


def test_ece_on_a_known_case():
    # two bins: [0.0, 0.1) says 0.05 and sees 1 in 10 relevant; [0.9, 1.0] (1.0 belongs to the last bin) says
    # 0.95 on average and sees 9 in 10: each bin is off by 0.05, so ECE = 0.05 exactly
    p = np.array([0.05] * 10 + [0.9] * 5 + [1.0] * 5)
    y = np.array([1] + [0] * 9 + [1] * 9 + [0])
    bins = reliability(p, y)
    assert [b["bin"] for b in bins] == [0, 9] and [b["count"] for b in bins] == [10, 10]
    assert bins[1]["predicted"] == pytest.approx(0.95)
    assert ece(p, y) == pytest.approx(0.05)
    assert brier(np.array([0.0, 1.0, 0.5]), np.array([0, 1, 1])) == pytest.approx(0.25 / 3)


def test_risk_coverage_keeps_the_most_confident():
    p = np.array([0.9, 0.8, 0.7, 0.2, 0.1])
    y = np.array([1, 1, 0, 0, 1])
    rc = {r["coverage"]: r for r in risk_coverage(p, y, (1.0, 0.4))}
    assert rc[0.4]["n"] == 2 and rc[0.4]["accuracy"] == 1.0 and rc[0.4]["threshold"] == 0.8
    assert rc[1.0]["accuracy"] == pytest.approx(0.6)


def test_the_serving_probability_is_the_fitted_model():
    X, y, _ = _sample(500, seed=5)
    model = fit(X, y, FEATURES, isotonic=True)
    policy = Policy.from_dict(
        {
            "match": {
                "calibration_id": "operator:test",
                "features": list(FEATURES),
                "weights": list(model.weights),
                "intercept": model.intercept,
                "isotonic_x": list(model.isotonic_x),
                "isotonic_y": list(model.isotonic_y),
            }
        }
    )
    assert policy.calibration_status == OPERATOR
    for row in X[:20]:
        signals = dict.fromkeys(SIGNALS, 0.0) | dict(zip(FEATURES, row.tolist(), strict=True))
        assert probability(policy, signals) == pytest.approx(float(model.predict(row[None])[0]), abs=1e-12)


def test_the_tier_follows_the_probability_when_calibrated():
    policy = Policy.from_dict(
        {
            "match": {
                "calibration_id": "operator:tiers",
                "features": [BEST_COSINE],
                "weights": [1.0],
                "intercept": 0.0,
                "high_probability": 0.7,
                "mid_probability": 0.3,
            }
        }
    )
    # a high cosine does not make a high tier: the probability does
    assert match_tier(policy, 0.5, best_cosine=0.9)[0] == "mid"
    assert match_tier(policy, 0.71, best_cosine=0.1)[0] == "high"
    assert match_tier(policy, 0.29, best_cosine=0.9)[0] == "low"
    uncalibrated = Policy.from_dict({"match": {"calibration_id": "", "features": [], "weights": []}})
    assert uncalibrated.calibration_status == UNCALIBRATED and probability(uncalibrated, {}) is None
    assert match_tier(uncalibrated, None, best_cosine=0.9)[0] == "high"


def test_a_policy_without_the_new_fields_loads(tmp_path):
    # the [match] section of a policy written before answer confidence had signals (uncalibrated placeholder)
    old = tmp_path / "policy.toml"
    old.write_text(
        "[match]\nhigh_threshold = 0.55\nmid_threshold = 0.4\nhigh_ceiling = 0.95\nmid_ceiling = 0.75\n"
        'low_ceiling = 0.35\nevidence_floor = 0.12\ncalibration_id = ""\ncalibration_slope = 0.0\n'
        "calibration_intercept = 0.0\n"
    )
    p = Policy.load(old)
    assert p.match.calibration_id == Policy.default().match.calibration_id
    assert p.calibration_status == Policy.default().calibration_status
    # one calibrated by the old lists-based `calibrate`: its cosine curve becomes a one-signal model
    old.write_text('[match]\ncalibration_id = "m@abc"\ncalibration_slope = 20.0\ncalibration_intercept = -10.0\n')
    p = Policy.load(old)
    assert p.calibration_status == OPERATOR
    assert (p.match.features, p.match.weights, p.match.intercept) == ((BEST_COSINE,), (20.0,), -10.0)
    assert p.match.reliability_count == ()  # nothing of the shipped calibration is mixed in
    assert probability(p, {BEST_COSINE: 0.5}) == pytest.approx(0.5)


def test_the_default_policy_names_its_calibration():
    p = Policy.default()
    if p.match.features:
        assert p.calibration_status == DEFAULT and p.match.calibration_id.startswith("default:")
        assert len(p.match.weights) == len(p.match.features)
    assert Policy.load(None).policy_id == p.policy_id


@pytest.mark.parametrize(
    "match, key, words",
    [
        ({"features": ["cosine_of_the_moon"], "weights": [1.0]}, "match.features", "not a signal"),
        ({"features": [BEST_COSINE], "weights": [1.0, 2.0]}, "match.weights", "2 weights for 1 features"),
        ({"isotonic_x": [0.0, 0.5], "isotonic_y": [0.6, 0.2]}, "match.isotonic_x", "must not fall"),
        ({"mid_probability": 0.8, "high_probability": 0.5}, "match.mid_probability", "must not exceed"),
        ({"weights": [True]}, "match.weights", "expected a list of numbers"),
    ],
)
def test_bad_calibration_names_the_key(match, key, words):
    with pytest.raises(ConfigError) as e:
        Policy.from_dict({"match": match}, "policy.toml")
    assert e.value.key == key and words in str(e.value)


def test_model_predict_matches_the_formula():
    m = Model((BEST_COSINE,), (2.0,), -1.0)
    assert m.predict(np.array([[0.5]]))[0] == pytest.approx(0.5)


def test_ece_by_chance_shrinks_with_more_queries():
    rng = np.random.default_rng(0)
    small, large = ece_by_chance(rng.uniform(size=100), 300), ece_by_chance(rng.uniform(size=5000), 300)
    assert 0.03 < small[0] < 0.12 and large[0] < 0.02 and small[1] > small[0]


def test_no_probability_reaches_certainty():
    # Signals far beyond anything fitted: the served probability stays inside its bounds (no fake 100%, no 0%).
    policy = Policy.from_dict(
        {"match": {"calibration_id": "operator:test", "features": [BEST_COSINE], "weights": [50.0], "intercept": -25.0}}
    )
    assert probability(policy, {BEST_COSINE: 1.0}) == 0.99 and probability(policy, {BEST_COSINE: 0.0}) == 0.01
    assert probability(policy, {BEST_COSINE: 0.5}) == pytest.approx(0.5)
    model = Model(features=(BEST_COSINE,), weights=(50.0,), intercept=-25.0)
    assert model.predict(np.array([[1.0], [0.0]])).tolist() == [0.99, 0.01]


def test_tiers_hold_off_topic_queries_low_but_not_one_no_threshold_can_hold():
    from trustindex.calibration.fit import Observation, choose_tiers
    from trustindex.calibration.judged import IN_DOMAIN, OFF_TOPIC_KINDS, JudgedQuery

    def obs(kind: str, n: int) -> list[Observation]:
        relevant = {"a.md": 2} if kind == IN_DOMAIN else {}
        return [
            Observation(JudgedQuery(f"{kind}{i}", f"q {kind} {i}", relevant, kind), {}, 0, None, False)
            for i in range(n)
        ]

    clear, near = OFF_TOPIC_KINDS
    group = obs(IN_DOMAIN, 20) + obs(clear, 3) + obs(near, 5)
    in_domain = np.linspace(0.5, 0.99, 20)  # its 10% quantile: 0.5441
    near_p = np.full(5, 0.3)
    cap = float(np.quantile(in_domain, 0.1))

    def halfway(a: float) -> float:  # the logit midpoint between a and the cap
        z = (np.log(a / (1 - a)) + np.log(cap / (1 - cap))) / 2
        return round(float(1 / (1 + np.exp(-z))), 4)

    # off-topic at 0.2 and 0.25 can be held low; 0.9 cannot (it would take mid above 90% of the in-domain queries)
    t = choose_tiers(group, np.concatenate([in_domain, [0.2, 0.9, 0.25], near_p]), Policy.default())
    assert t["mid_probability"] == pytest.approx(halfway(0.25)) and 0.25 < t["mid_probability"] < cap
    assert t["high_probability"] == 0.8
    # every off-topic query holdable: mid halfway between the highest and the cap, a margin for unseen ones
    t = choose_tiers(group, np.concatenate([in_domain, [0.2, 0.4, 0.25], near_p]), Policy.default())
    assert t["mid_probability"] == pytest.approx(halfway(0.4)) and 0.4 < t["mid_probability"] < cap
    # none holdable: mid at the cap, never above it
    t = choose_tiers(group, np.concatenate([in_domain, [0.95, 0.9, 0.97], near_p]), Policy.default())
    assert t["mid_probability"] == pytest.approx(round(float(np.quantile(in_domain, 0.1)), 4))
