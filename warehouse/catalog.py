"""The DuckDB catalog: one view per table over the live snapshot's Parquet files.

Open to a data team's SQL (``duckdb data/catalog.duckdb``) and used by the
pipeline's set-based steps (stats, the publish gate's per-source counts).
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from trustindex.schemas.snapshot import TABLE_FILES
from trustindex.schemas.tables import AUTHENTICATED, CLAIMED, EVIDENCE_CLASSES, OPERATOR

CATALOG = "catalog.duckdb"


def refresh_catalog(data_dir: Path, snapshot_dir: Path) -> Path:
    data_dir = Path(data_dir)
    tmp = data_dir / f".{CATALOG}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        for name, file in TABLE_FILES.items():
            path = (Path(snapshot_dir) / file).resolve()
            if path.is_file():
                con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{_sql_str(path)}')")
    finally:
        con.close()
    os.replace(tmp, data_dir / CATALOG)
    return data_dir / CATALOG


def connect_snapshot(snapshot_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with a view per table of one snapshot."""
    con = duckdb.connect()
    for name, file in TABLE_FILES.items():
        path = (Path(snapshot_dir) / file).resolve()
        if path.is_file():
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{_sql_str(path)}')")
    return con


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str, params=()) -> list[dict]:
    """The rows of a query, each a dict keyed by column name."""
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


def verification_classes(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """Per source: its verification links by evidence class (counts, and shares of the source's links).

    A snapshot written before the ``evidence_class`` column gets each link's class from its method (a signature
    is authenticated, a ledger entry operator's, anything else claimed), as the query does.
    """
    tables = {r["table_name"] for r in fetch_dicts(con, "SELECT table_name FROM information_schema.tables")}
    if not {"verifications", "documents"} <= tables:
        return {}
    cols = {r["column_name"] for r in fetch_dicts(con, "SELECT column_name FROM (DESCRIBE verifications)")}
    by_method = (
        f"CASE v.method WHEN 'signature' THEN '{AUTHENTICATED}' WHEN 'ledger' THEN '{OPERATOR}' ELSE '{CLAIMED}' END"
    )
    cls = f"coalesce(v.evidence_class, {by_method})" if "evidence_class" in cols else by_method
    rows = fetch_dicts(
        con,
        f"SELECT d.source, {cls} AS cls, count(*) AS n FROM verifications v JOIN documents d USING (doc_id) "
        "GROUP BY 1, 2 ORDER BY 1, 2",
    )
    out: dict[str, dict] = {}
    for r in rows:
        s = out.setdefault(r["source"], {"links": 0, **{c: 0 for c in EVIDENCE_CLASSES}})
        s[r["cls"]] = s.get(r["cls"], 0) + int(r["n"])
        s["links"] += int(r["n"])
    for s in out.values():
        s["share"] = {c: round(s[c] / s["links"], 4) for c in EVIDENCE_CLASSES}
    return out


def _sql_str(p: Path) -> str:
    return str(p).replace("'", "''")
