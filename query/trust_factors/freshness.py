"""Freshness: floor + (1 − floor) · 0.5^(age / half-life), age in days from the last substantive change (≥ 0)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa

from trustindex.query.snapshot_pages import DocumentRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior, iso
from trustindex.schemas.hit_factors import Factor, FreshnessEvidence
from trustindex.schemas.hit_parts import shown_number
from trustindex.schemas.policy import Policy

_US_PER_DAY = 86400.0


def freshness_factor(row: DocumentRow | dict, policy: Policy, today: datetime) -> Factor[FreshnessEvidence]:
    f, doc = policy.freshness, DocumentRow.of(row)
    sub = doc.last_substantive_change
    age = max(0.0, (today - sub).total_seconds() / 86400.0)
    mult = f.floor + (1.0 - f.floor) * 0.5 ** (age / f.half_life_days)
    evidence = FreshnessEvidence(
        last_modified=iso(doc.last_modified),
        last_substantive_change=iso(sub),
        substantive_commit=doc.last_substantive_commit,
        age_days=round(age, 1),
        half_life_days=shown_number(f.half_life_days),
        reference_date=iso(today),
    )
    return Factor(mult, "dated", evidence)


def freshness_multipliers(last_substantive: pa.ChunkedArray | pa.Array, policy: Policy, today: datetime) -> np.ndarray:
    """``freshness_factor``'s multiplier for many documents at once."""
    f = policy.freshness
    arr = last_substantive.cast(pa.timestamp("us", tz="UTC"))
    us = np.asarray(arr.to_numpy(zero_copy_only=False).astype("datetime64[us]").astype(np.int64))
    today_us = int(round(today.timestamp() * 1_000_000))
    # timedelta.total_seconds() above: microseconds / 10**6, then / 86400 — the same operations here.
    age = np.maximum(0.0, ((today_us - us).astype(np.float64) / 1e6) / _US_PER_DAY)
    # The power in Python floats (libm's pow, as freshness_factor computes it): numpy's vectorised pow can differ in
    # the last bit, and the prior must equal the explained product exactly.  One pass per document, per day.
    floor, half = f.floor, f.half_life_days
    return np.array([floor + (1.0 - floor) * 0.5 ** (a / half) for a in age.tolist()], dtype=np.float64)


def explain(hit: HitContext) -> Factor[FreshnessEvidence]:
    return freshness_factor(hit.document, hit.policy, hit.today)


def prior(passages: PassagesContext) -> Prior:
    docs = passages.data.docs.table
    per_doc = (
        freshness_multipliers(docs.column("last_substantive_change"), passages.policy, passages.today)
        if passages.n_docs
        else np.zeros(0)
    )
    return Prior(passages.per_passage(per_doc))
