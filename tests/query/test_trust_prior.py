"""The trust prior (query/trust_prior.py) equals the product of the factors each hit explains."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from trustindex.query.index import Index
from trustindex.query.trust import combine, reference_day
from trustindex.query.trust_prior import TrustPrior, freshness_multipliers
from trustindex.schemas.policy import Policy


def explained_product(index: Index, i: int, today) -> float:
    return combine(index._factors(i, today))  # the scalar definition of trust


def test_every_passage_prior_equals_its_explained_factors(index):
    today = reference_day()
    prior = TrustPrior(index.data, index.policy, today)
    expected = np.array([explained_product(index, i, today) for i in range(index.data.n)])
    assert index.data.n > 100
    np.testing.assert_array_equal(np.clip(prior.base, 0, 1), expected)
    # the demo has every kind of evidence, so this compares more than one value
    assert len(np.unique(prior.base)) > 10 and prior.deprecated.any() and not prior.deprecated.all()


def test_prior_follows_the_policy_and_the_day(index):
    today = reference_day()
    base = TrustPrior(index.data, index.policy, today).base
    stricter = Policy.from_dict({"deprecation": {"multiplier": 0.1}, "freshness": {"half_life_days": 30.0}})
    other = TrustPrior(index.data, stricter, today)
    assert other.key != (index.policy.policy_id, today)
    assert (other.base <= base + 1e-15).all() and (other.base < base).any()
    later = TrustPrior(index.data, index.policy, today + timedelta(days=400)).base
    assert (later <= base).all() and (later < base).any()


def test_hits_trust_is_the_product_of_their_factors(index):
    r = index.search("How do I install the Compact compiler?", k=10)
    assert r["hits"]
    for h in r["hits"]:
        product = np.prod([f["multiplier"] for f in h["factors"].values()])
        assert abs(h["trust_score"] - min(1.0, product)) < 5e-6  # the response rounds every number to 6 places


def test_freshness_multipliers_match_the_scalar_formula():
    import pyarrow as pa

    from trustindex.query.trust import freshness_factor

    pol = Policy.default()
    today = datetime(2026, 11, 30, tzinfo=UTC)
    when = [
        datetime(2026, 11, 29, 13, 5, 7, 123456, tzinfo=UTC),
        datetime(2020, 2, 29, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    ]  # the last is in the future: age 0
    vec = freshness_multipliers(pa.array(when, pa.timestamp("us", tz="UTC")), pol, today)
    scalar = [
        freshness_factor(
            {"last_substantive_change": w, "last_modified": w, "last_substantive_commit": "c"}, pol, today
        ).multiplier
        for w in when
    ]
    assert vec.tolist() == scalar and vec[2] == 1.0
