"""Issue 29 item 1, memory: what a refresh of many sources no longer keeps alive.

The shared embedding worker asks the cache only which texts it holds (no vectors in memory), a build's cache lets
go of its vectors once the matrix is made, and a source's tables stay on disk until the build reads them, one table
of every source at a time.  The figures are in docs/benchmarks.md (bench/bench_org_refresh.py); these tests check
the behaviour the savings rest on.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from trustindex.schemas.tables import SOURCE_TABLES, TABLES
from trustindex.warehouse.embeddings import EmbeddingCache
from trustindex.warehouse.tables import load_source_tables, save_source_tables, saved_source_tables

DIMS = 8


def _vectors(names: list[str], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(DIMS).astype(np.float32) for n in names}


def test_the_cache_knows_its_texts_without_reading_their_vectors(tmp_path):
    first = EmbeddingCache(tmp_path, "key", DIMS)
    stored = _vectors(["a" * 64, "b" * 64], 1)
    first.put(stored)
    assert first._mem is None  # put does not read every shard back into memory any more

    other = EmbeddingCache(tmp_path, "key", DIMS)  # another process's view of the same directory
    assert other.known(["a" * 64, "c" * 64]) == {"a" * 64}
    assert other._mem is None  # answered from the sha column alone
    more = _vectors(["c" * 64], 2)
    other.put(more)
    assert other.known(["a" * 64, "b" * 64, "c" * 64]) == {"a" * 64, "b" * 64, "c" * 64}

    got = other.get(["a" * 64, "c" * 64, "d" * 64])  # the vectors themselves, read when asked for
    assert set(got) == {"a" * 64, "c" * 64}
    np.testing.assert_array_equal(got["a" * 64], stored["a" * 64])
    np.testing.assert_array_equal(got["c" * 64], more["c" * 64])
    other.release()
    assert other._mem is None and other.known(["b" * 64]) == {"b" * 64}  # read again from disk after release
    np.testing.assert_array_equal(other.get(["b" * 64])["b" * 64], stored["b" * 64])


def test_a_torn_shard_is_not_known(tmp_path):
    cache = EmbeddingCache(tmp_path, "key", DIMS)
    cache.put(_vectors(["a" * 64], 3))
    (tmp_path / "key" / "torn.parquet").write_bytes(b"PAR1 not a parquet file")
    fresh = EmbeddingCache(tmp_path, "key", DIMS)
    assert fresh.known(["a" * 64]) == {"a" * 64}
    assert set(fresh.get(["a" * 64])) == {"a" * 64}


def test_saved_source_tables_are_read_from_disk_when_asked_for(tmp_path):
    tables = {name: TABLES[name].empty_table() for name in SOURCE_TABLES}
    save_source_tables(tmp_path, "docs", "k1", tables, {"commit": "0" * 40})
    lazy = saved_source_tables(tmp_path, "docs", "k1")
    assert list(lazy) == list(SOURCE_TABLES) and len(lazy) == len(SOURCE_TABLES)
    loaded = load_source_tables(tmp_path, "docs", "k1")
    assert loaded is not None
    for name in SOURCE_TABLES:
        assert lazy[name].schema == loaded[name].schema == TABLES[name]
    with pytest.raises(KeyError):
        lazy["compile_checks"]  # not a source table: the compile step adds it in memory
    # nothing was kept: once the files are gone, the tables are too
    shutil.rmtree(tmp_path / "warehouse" / "docs" / "k1")
    with pytest.raises(FileNotFoundError):
        lazy["chunks"]
