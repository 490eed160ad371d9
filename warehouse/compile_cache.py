"""The compile cache: one result per (text hash, compiler identity), kept across refreshes.

A Parquet file under ``<data>/cache/``; a refresh looks every check up here first, so a text is compiled once per
compiler (a no-change refresh compiles nothing; a new compiler compiles each text once).  Written whole to a
temporary file and renamed: a crash leaves the previous cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.schemas.tables import COMPILE_CHECKS

# The cache keeps what a check found, not where the text was: the snapshot table's result columns
SCHEMA = pa.schema(
    [
        COMPILE_CHECKS.field(n)
        for n in ("text_sha256", "compiler_version", "language_version", "outcome", "reason", "seconds")
    ]
)


def cache_file(data_dir: Path) -> Path:
    return Path(data_dir) / "cache" / "compile_checks.parquet"


class CompileCache:
    def __init__(self, data_dir: Path):
        self.path = cache_file(data_dir)
        self.rows: dict[tuple[str, str, str], dict] = {}
        self.added = 0
        if self.path.is_file():
            try:
                for r in pq.read_table(self.path).to_pylist():
                    self.rows[(r["text_sha256"], r["compiler_version"], r["language_version"])] = r
            except (OSError, pa.ArrowException):
                self.rows = {}  # an unreadable cache is rebuilt, never trusted in part

    def get(self, text_sha256: str, compiler_version: str, language_version: str) -> dict | None:
        return self.rows.get((text_sha256, compiler_version, language_version))

    def put(self, row: dict) -> None:
        self.rows[(row["text_sha256"], row["compiler_version"], row["language_version"])] = row
        self.added += 1

    def save(self) -> None:
        if not self.added:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        rows = sorted(self.rows.values(), key=lambda r: (r["text_sha256"], r["compiler_version"]))
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), tmp)
        os.replace(tmp, self.path)
        self.added = 0
