"""The numbers of the snapshot report: one DuckDB pass over the live snapshot's Parquet files.

Freshness is measured against the snapshot's ``created_at`` (not the wall clock), so a report of a given
snapshot never changes: days since the last *substantive* change (DESIGN.md, "Known traps": bulk commits make
every file look new), falling back to the last modification when none was found.
"""

from __future__ import annotations

from pathlib import Path

from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import read_manifest, resolve_current
from trustindex.warehouse.catalog import connect_snapshot, fetch_dicts, verification_classes

MAX_FAILED_ROWS = 500  # the table stays readable; the count above it is exact
FRESHNESS_BUCKETS = [
    (0, 30, "< 30 d"),
    (30, 90, "30–90 d"),
    (90, 365, "90–365 d"),
    (365, 730, "1–2 y"),
    (730, None, "> 2 y"),
]


def calibration_summary(policy: Policy) -> dict:
    """The policy's answer-confidence calibration and its held-out figures (the reliability diagram's data)."""
    m = policy.match
    bins = zip(m.reliability_predicted, m.reliability_observed, m.reliability_count, strict=True)
    return {
        "calibration_id": m.calibration_id or None,
        "status": policy.calibration_status,
        "n": m.heldout_n,
        "ece": m.heldout_ece if m.heldout_n else None,
        "brier": m.heldout_brier if m.heldout_n else None,
        "auroc": m.heldout_auroc if m.heldout_n else None,
        "reliability": [{"predicted": p, "observed": o, "count": n} for p, o, n in bins],
    }


_BUCKET_SQL = (
    " ".join(f"WHEN age < {hi} THEN '{lab}'" for lo, hi, lab in FRESHNESS_BUCKETS if hi)
    + f" ELSE '{FRESHNESS_BUCKETS[-1][2]}'"
)
_AGE = "date_diff('day', coalesce(last_substantive_change, last_modified), ?::TIMESTAMPTZ)"  # ?: the snapshot's date
_DEPRECATED_CHUNKS = (
    "FROM deprecations d JOIN chunks c ON c.doc_id = d.doc_id AND (d.chunk_id IS NULL OR d.chunk_id = c.chunk_id)"
)

# The report's tables in the order it shows them: name -> (the snapshot table it reads, its SQL: each ? is the
# snapshot's created_at); a table the snapshot lacks gives no rows.  None: the verification classes, which
# warehouse.catalog computes.
REPORT_QUERIES: dict[str, tuple[str, str] | None] = {
    "chunks_by_tier": (
        "attribution",
        "SELECT c.source, coalesce(a.tier, 'unknown') AS tier, count(*) AS n "
        "FROM chunks c LEFT JOIN attribution a USING (doc_id) GROUP BY 1, 2 ORDER BY 1, 2",
    ),
    "freshness": (
        "documents",
        f"SELECT source, CASE {_BUCKET_SQL} END AS bucket, count(*) AS n FROM (SELECT source, {_AGE} AS age "
        "FROM documents WHERE coalesce(last_substantive_change, last_modified) IS NOT NULL) GROUP BY 1, 2 "
        "ORDER BY 1, 2",
    ),
    "freshness_median": (
        "documents",
        f"SELECT source, CAST(median({_AGE}) AS BIGINT) AS days, count(*) AS n FROM documents GROUP BY 1 ORDER BY 1",
    ),
    "versions": (
        "version_targets",
        "SELECT v.component, count(DISTINCT c.chunk_id) AS chunks, count(DISTINCT v.constraint) "
        "AS constraints, string_agg(DISTINCT v.origin, ', ' ORDER BY v.origin) AS origins FROM "
        "version_targets v JOIN chunks c ON c.doc_id = v.doc_id AND (v.chunk_id IS NULL OR "
        "v.chunk_id = c.chunk_id) GROUP BY 1 ORDER BY 2 DESC, 1",
    ),
    "verifications": (
        "verifications",
        "SELECT method, stale, count(*) AS n, count(DISTINCT doc_id) AS docs FROM verifications GROUP BY 1, 2 "
        "ORDER BY 1, 2",
    ),
    "verification_classes": None,
    "deprecations": (
        "deprecations",
        f"SELECT d.scope, c.source, count(DISTINCT c.chunk_id) AS chunks {_DEPRECATED_CHUNKS} GROUP BY 1, 2 "
        "ORDER BY 2, 1",
    ),
    "content_risk": (
        "content_risk",
        "SELECT d.source, d.path, r.start_line, r.kind, r.reason FROM content_risk r JOIN documents d "
        "USING (doc_id) ORDER BY d.source, d.path, r.start_line, r.rule",
    ),
    "ingest": (
        "ingest_report",
        "SELECT source, status, count(*) AS n FROM ingest_report GROUP BY 1, 2 ORDER BY 1, 2",
    ),
    # per source and compiler: distinct texts by outcome (issue 28; none in a build without compilers)
    "compile_checks": (
        "compile_checks",
        "SELECT source || ' · compactc ' || compiler_version AS checked_by, source, compiler_version, "
        "outcome, count(DISTINCT text_sha256) AS n FROM compile_checks GROUP BY 1, 2, 3, 4 ORDER BY 1, 4",
    ),
    "skipped_by_rule": (
        "ingest_report",
        "SELECT coalesce(nullif(rule, ''), '(none)') AS rule, count(*) AS n FROM ingest_report "
        "WHERE status = 'skipped' GROUP BY 1 ORDER BY 2 DESC, 1",
    ),
    "failed_by_stage": (
        "ingest_report",
        "SELECT coalesce(nullif(stage, ''), '(none)') AS stage, count(*) AS n FROM ingest_report "
        "WHERE status = 'failed' GROUP BY 1 ORDER BY 2 DESC, 1",
    ),
    "failed_files": (
        "ingest_report",
        "SELECT source, path, stage, reason FROM ingest_report WHERE "
        f"status = 'failed' ORDER BY source, path LIMIT {MAX_FAILED_ROWS}",
    ),
}


def collect(data_dir: Path, policy: Policy | None = None) -> dict:
    """Everything the report shows, as plain data (the HTML and markdown are views of it); the calibration is
    the policy's (default: the built-in one, what a query without --policy uses)."""
    snap = resolve_current(data_dir)
    m = read_manifest(snap)
    con = connect_snapshot(snap)
    try:
        have = {r["table_name"] for r in fetch_dicts(con, "SELECT table_name FROM information_schema.tables")}

        def q(table: str, sql: str) -> list[dict]:
            return fetch_dicts(con, sql, [m.created_at] * sql.count("?")) if table in have else []

        sources = q(
            "sources", "SELECT source, repo, ref, commit, publisher, tier, status, error FROM sources ORDER BY source"
        )
        out = {
            "snapshot_id": m.snapshot_id,
            "created_at": m.created_at,
            "parent": m.parent,
            "embedding_model": m.embedding_model,
            "row_counts": m.row_counts,
            "sources": sources or [{**s, "source": s.get("source") or s.get("name")} for s in m.sources],
            "totals": {
                "documents": q("documents", "SELECT count(*) AS n FROM documents")[0]["n"]
                if "documents" in have
                else 0,
                "chunks": q("chunks", "SELECT count(*) AS n FROM chunks")[0]["n"] if "chunks" in have else 0,
            },
        }
        for name, query in REPORT_QUERIES.items():
            out[name] = q(*query) if query else _verification_classes(con)
        out["totals"]["failed"] = sum(r["n"] for r in out["failed_by_stage"])
        out["totals"]["skipped"] = sum(r["n"] for r in out["skipped_by_rule"])
        out["totals"]["ingested"] = sum(r["n"] for r in out["ingest"] if r["status"] == "ingested")
        deprecated = q("deprecations", f"SELECT count(DISTINCT c.chunk_id) AS n {_DEPRECATED_CHUNKS}")
        out["totals"]["deprecated_chunks"] = deprecated[0]["n"] if deprecated else 0
        out["calibration"] = calibration_summary(policy or Policy.default())
        return out
    finally:
        con.close()


def _verification_classes(con) -> list[dict]:
    """Each source's documents by verification class, the share last."""
    return [
        {"source": src, **{k: v for k, v in c.items() if k != "share"}, "share": c["share"]}
        for src, c in verification_classes(con).items()
    ]
