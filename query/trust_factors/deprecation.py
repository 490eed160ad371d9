"""Deprecation: deprecated content, a legacy docs version's page, an unlabelled released version's folder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.evidence_rows import DeprecationRow
from trustindex.query.trust_factors.base import HitContext, PassagesContext, Prior
from trustindex.schemas.docs_versions import LEGACY_MARKER, superseded_by
from trustindex.schemas.hit_factors import DeprecationEvidence, Factor
from trustindex.schemas.policy import Policy

_EVIDENCE_KEYS = frozenset(DeprecationEvidence.__dataclass_fields__) - {"absent"}  # the keys its JSON may show
_NOT_DEPRECATED = DeprecationEvidence(absent=_EVIDENCE_KEYS)  # shows no key


def deprecation_factor(
    marks: Sequence[dict | DeprecationRow],
    policy: Policy,
    docs_targeted: bool = False,
    folder: str | None = None,
    version_targeted: tuple[str, ...] = (),
    newer_versions: int = 0,
) -> Factor[DeprecationEvidence]:
    """Deprecated content takes the deprecation multiplier; a legacy docs version's page takes the legacy one
    too, unless the query names a docs version (then it competes as that version) or the page's own evidence
    satisfies every version target (``version_targeted``: those targets; the user asked for that version).
    ``folder``: the released version folder of a page no docs config labels (SnapshotData.version_folder), a
    milder doubt than legacy, lifted the same way.  ``newer_versions``: how many of its site's older versions are
    newer than the page's (SnapshotData.newer_older_versions); the doubt applies once more for each."""
    dp = policy.deprecation
    rows = [DeprecationRow.of(m) for m in marks]
    legacy = [m for m in rows if m.marker == LEGACY_MARKER]
    other = len(legacy) < len(rows)
    if not rows and folder is None:
        return Factor(1.0, "not_deprecated", _NOT_DEPRECATED)
    targeted = docs_targeted or bool(version_targeted)
    older = dp.legacy_docs_multiplier if legacy else (dp.version_folder_multiplier if folder else 1.0)
    older **= 1 + newer_versions
    mult = (dp.multiplier if other else 1.0) * (older if not targeted else 1.0)
    shown: dict = {"markers": tuple(m.shown() for m in rows)}
    if newer_versions and (legacy or folder):
        shown["newer_older_versions"] = newer_versions
    lifted_by = {"lifted_by_version_targets": list(version_targeted)} if version_targeted else {}
    if legacy:
        shown["superseded_by"] = superseded_by(legacy[0].reason)
        shown["legacy_lifted_by_docs_target"] = docs_targeted
        shown.update({f"legacy_{k}": v for k, v in lifted_by.items()})
    elif folder:
        shown["version_folder"] = folder
        shown["version_folder_lifted_by_docs_target"] = docs_targeted
        shown.update({f"version_folder_{k}": v for k, v in lifted_by.items()})
    evidence = DeprecationEvidence(**shown, absent=_EVIDENCE_KEYS - shown.keys())
    if other:
        status = "deprecated"
    elif legacy:
        status = "legacy_docs_version_targeted" if targeted else "legacy_docs_version"
    else:
        status = "unlabelled_docs_version_targeted" if targeted else "unlabelled_docs_version"
    return Factor(mult, status, evidence)


def explain(hit: HitContext) -> Factor[DeprecationEvidence]:
    d = hit.data
    i = hit.row
    return deprecation_factor(
        d.deprecation_rows(i), hit.policy, hit.lifts.docs_targeted, d.version_folder(i), hit.lifts.version_targeted,
        d.newer_older_versions(i),
    )  # fmt: skip


def prior(passages: PassagesContext) -> Prior:
    """``deprecation_factor``'s product per passage, (deprecation or 1) × (legacy or folder or 1); with a docs
    target a legacy or folder page competes as its version, so the targeted prior leaves that part out.
    Marks: ``deprecated`` (any of the three), ``legacy`` and ``older`` (legacy or an unlabelled version folder: the
    doubt a docs target, or a page's own evidence satisfying every version target, lifts)."""
    d, dp = passages.data, passages.policy.deprecation
    chunks = d.chunks.table
    other = _marked(chunks, d, legacy=False)
    legacy = _marked(chunks, d, legacy=True)
    not_legacy = np.where(other, dp.multiplier, 1.0)
    rows = range(len(passages.rows))
    folder = np.array([d.version_folder(i) is not None for i in rows], dtype=bool)
    steps = 1 + np.array([d.newer_older_versions(i) if f else 0 for i, f in zip(rows, folder, strict=True)])
    older = np.where(
        legacy, dp.legacy_docs_multiplier**steps, np.where(folder, dp.version_folder_multiplier**steps, 1.0)
    )
    marks = {"deprecated": other | legacy | folder, "legacy": legacy, "older": legacy | folder}
    return Prior(not_legacy * older, not_legacy, marks)


def _marked(chunks: pa.Table, data, legacy: bool) -> np.ndarray:
    """Per passage: whether it (or its document) has a deprecation row of the legacy docs marker (or another)."""

    def keys(rows_by_key: dict) -> set:
        return {k for k, rows in rows_by_key.items() if any((r.marker == LEGACY_MARKER) == legacy for r in rows)}

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
