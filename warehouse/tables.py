"""Parquet reading and writing through the one schema module; per-source table sets.

A source's tables at one commit are kept under ``warehouse/<source>/<key>/``
(key: the commit and everything else extraction depends on), so a refresh
whose inputs did not change reads them back instead of extracting again.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.schemas.tables import SOURCE_TABLES, TABLES


def write_table(table: pa.Table, path: Path) -> None:
    # Fixed writer options so the same rows give byte-identical files.
    pq.write_table(table, path, compression="zstd", write_statistics=True, use_dictionary=True, data_page_size=1 << 20)


def read_table(path: Path, name: str) -> pa.Table:
    return pq.read_table(path, schema=TABLES[name])


def source_dir(data_dir: Path, source: str) -> Path:
    return Path(data_dir) / "warehouse" / source


def save_source_tables(
    data_dir: Path, source: str, key: str, tables: dict[str, pa.Table], meta: dict | None = None
) -> Path:
    """Write a source's tables under their key (temp dir + rename) and point LAST at them."""
    root = source_dir(data_dir, source)
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    if not final.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        for name in SOURCE_TABLES:
            write_table(tables[name], tmp / f"{name}.parquet")
        (tmp / "meta.json").write_text(json.dumps(meta or {}, sort_keys=True))
        os.rename(tmp, final)
    (root / ".LAST.tmp").write_text(key)
    os.replace(root / ".LAST.tmp", root / "LAST")
    return final


def last_source_meta(data_dir: Path, source: str) -> tuple[str, dict] | None:
    """The key and meta (commit, context) of the source's last saved tables."""
    root = source_dir(data_dir, source)
    try:
        key = (root / "LAST").read_text().strip()
        return key, json.loads((root / key / "meta.json").read_text())
    except (OSError, ValueError):
        return None


def load_source_tables(data_dir: Path, source: str, key: str | None = None) -> dict[str, pa.Table] | None:
    root = source_dir(data_dir, source)
    if key is None:
        last = root / "LAST"
        if not last.is_file():
            return None
        key = last.read_text().strip()
    d = root / key
    if not d.is_dir():
        return None
    try:
        return {name: read_table(d / f"{name}.parquet", name) for name in SOURCE_TABLES}
    except Exception:
        shutil.rmtree(d, ignore_errors=True)  # torn by a crash: rebuild
        return None


class SavedSourceTables(Mapping[str, pa.Table]):
    """A source's saved tables, each read from its Parquet file when asked for and not kept.

    Why: a refresh used to carry every source's tables in memory from the end of its task to the end of the
    build (the task's result, the flow's dict, the build task's parameter): ~640 MiB at 92k chunks, alive through
    the embedding and index stages.  The build reads one table of every source at a time instead (issue 29)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def __getitem__(self, name: str) -> pa.Table:
        if name not in SOURCE_TABLES:
            raise KeyError(name)
        return read_table(self.directory / f"{name}.parquet", name)

    def __iter__(self) -> Iterator[str]:
        return iter(SOURCE_TABLES)

    def __len__(self) -> int:
        return len(SOURCE_TABLES)

    def __repr__(self) -> str:
        return f"SavedSourceTables({str(self.directory)!r})"


def saved_source_tables(data_dir: Path, source: str, key: str) -> SavedSourceTables:
    """The tables ``save_source_tables`` wrote for ``source`` under ``key``, read lazily."""
    return SavedSourceTables(source_dir(data_dir, source) / key)


def concat(tables: list[pa.Table], name: str, sort_keys: list[tuple[str, str]]) -> pa.Table:
    t = pa.concat_tables(tables) if tables else TABLES[name].empty_table()
    return t.sort_by(sort_keys) if sort_keys and t.num_rows else t
