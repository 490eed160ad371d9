"""The DuckDB catalog: one view per table over the live snapshot's Parquet files.

Open to a data team's SQL (``duckdb data/catalog.duckdb``) and used by the
pipeline's set-based steps (stats, the publish gate's per-source counts).
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from trustindex.schemas.snapshot import TABLE_FILES

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


def _sql_str(p: Path) -> str:
    return str(p).replace("'", "''")
