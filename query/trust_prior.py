"""The query-independent part of every passage's trust, as one array per (policy, day).

trust = attribution × verification × freshness × deprecation × version_match.  The
first four depend only on stored evidence, the policy and the reference day, so they
are multiplied once for every passage (vectorised over the documents table) and a
search only looks up its candidates' rows; version_match depends on the query's
targets and stays per candidate (``query.index``).  The explanations of the factors
(``query.trust``) are built for the returned hits only.  Both paths apply the same
formulas in the same order: tests/test_trust_prior.py checks that every passage's prior
equals the product of its explained multipliers.

At 100k passages this takes the per-candidate Python work of a search from ~10 ms to
~0.1 ms (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.reader import row_positions
from trustindex.query.trust import content_risk_factor, verification_factor
from trustindex.schemas.docs_versions import LEGACY_MARKER
from trustindex.schemas.policy import Policy

_US_PER_DAY = 86400.0


def attribution_multipliers(tiers: list[str | None], policy: Policy) -> np.ndarray:
    """Per document: its publisher tier's multiplier (a document without attribution is ``unknown``)."""
    table = policy.attribution.tiers
    unknown = table.unknown
    return np.array([unknown if t is None else table.get(t, unknown) for t in tiers], dtype=np.float64)


def freshness_multipliers(last_substantive: pa.ChunkedArray | pa.Array, policy: Policy, today: datetime) -> np.ndarray:
    """floor + (1 − floor) · 0.5^(age / half-life), age in days from the last substantive change (≥ 0)."""
    f = policy.freshness
    arr = last_substantive.cast(pa.timestamp("us", tz="UTC"))
    us = np.asarray(arr.to_numpy(zero_copy_only=False).astype("datetime64[us]").astype(np.int64))
    today_us = int(round(today.timestamp() * 1_000_000))
    # timedelta.total_seconds() in query.trust: microseconds / 10**6, then / 86400 — the same operations here.
    age = np.maximum(0.0, ((today_us - us).astype(np.float64) / 1e6) / _US_PER_DAY)
    # The power in Python floats (libm's pow, as query.trust computes it): numpy's vectorised pow can differ in
    # the last bit, and the prior must equal the explained product exactly.  One pass per document, per day.
    floor, half = f.floor, f.half_life_days
    return np.array([floor + (1.0 - floor) * 0.5 ** (a / half) for a in age.tolist()], dtype=np.float64)


class TrustPrior:
    """``base[row]`` = attribution × verification × freshness × deprecation (× content risk) of passage ``row``;
    ``excluded[row]``: a kind of content risk the policy excludes was found in it."""

    def __init__(self, data, policy: Policy, today: datetime):
        self.key = (policy.policy_id, today)
        docs = data.docs.table
        n_docs = docs.num_rows
        attr = data.attribution.table
        tiers_col = attr.column("tier").to_pylist()
        tiers = [
            tiers_col[r] if r >= 0 else None
            for r in row_positions(docs.column("doc_id"), attr.column("doc_id")).tolist()
        ]
        attribution = attribution_multipliers(tiers, policy)
        verification = np.full(n_docs, policy.verification.unverified, dtype=np.float64)
        for doc, links in data.verifications.items():
            r = data.docs.row_of(doc)
            if r is not None and links:
                verification[r] = verification_factor(links, policy, tiers[r])["multiplier"]
        freshness = (
            freshness_multipliers(docs.column("last_substantive_change"), policy, today) if n_docs else np.zeros(0)
        )
        per_doc = attribution * verification * freshness  # the order query.trust.combine multiplies in
        rows = data.chunk_doc_row
        base = np.where(rows >= 0, per_doc[np.maximum(rows, 0)] if n_docs else 0.0, 0.0)
        chunks = data.chunks.table
        dp = policy.deprecation
        other = _marked(chunks, data, legacy=False)
        legacy = _marked(chunks, data, legacy=True)
        # The product query.trust.deprecation_factor forms: (deprecation or 1) × (legacy or 1).
        not_legacy = np.where(other, dp.multiplier, 1.0)
        # With a docs target a legacy page competes as its version: its prior leaves the legacy multiplier out.
        # Content risk last, as combine() multiplies it after version_match (× 1.0 for the prior).
        risk = np.ones(len(rows), dtype=np.float64)
        self.excluded = np.zeros(len(rows), dtype=bool)
        # any finding at all: such a passage lends no page-level relevance to its page-mates (query/score.py)
        self.flagged = np.zeros(len(rows), dtype=bool)
        flagged = list(data.content_risks)
        if flagged:
            at = row_positions(pa.array(flagged, pa.string()), chunks.column("chunk_id")).tolist()
            for chunk_id, r in zip(flagged, at, strict=True):
                if r >= 0:
                    f = content_risk_factor(data.content_risks[chunk_id], policy)
                    risk[r], self.excluded[r] = f["multiplier"], f["status"] == "excluded"
                    self.flagged[r] = f["status"] != "no_findings"
        self.flagged_rows = np.flatnonzero(self.flagged)
        self.base_docs_targeted = (base * not_legacy) * risk
        folder = np.array([data.version_folder(i) is not None for i in range(len(rows))], dtype=bool)
        older = np.where(legacy, dp.legacy_docs_multiplier, np.where(folder, dp.version_folder_multiplier, 1.0))
        self.base = (base * (not_legacy * older)) * risk
        self.deprecated = other | legacy | folder
        self.legacy = legacy

    def for_targets(self, docs_targeted: bool) -> np.ndarray:
        return self.base_docs_targeted if docs_targeted else self.base


def _marked(chunks: pa.Table, data, legacy: bool) -> np.ndarray:
    """Per passage: whether it (or its document) has a deprecation row of the legacy docs marker (or another)."""

    def keys(rows_by_key: dict) -> set:
        return {k for k, rows in rows_by_key.items() if any((r["marker"] == LEGACY_MARKER) == legacy for r in rows)}

    return _member(chunks.column("chunk_id"), keys(data.chunk_deprecations)) | _member(
        chunks.column("doc_id"), keys(data.doc_deprecations)
    )


def _member(column: pa.ChunkedArray, keys) -> np.ndarray:
    """Whether each value is one of ``keys``."""
    if not keys:
        return np.zeros(len(column), dtype=bool)
    return np.asarray(
        pc.is_in(column, value_set=pa.array(list(keys), pa.string())).to_numpy(zero_copy_only=False), dtype=bool
    )
