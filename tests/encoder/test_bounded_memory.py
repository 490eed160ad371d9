"""Issue 29 item 1, memory: what a refresh of many sources no longer keeps alive.

The shared embedding worker asks the cache only which texts it holds (no vectors in memory), a build's cache lets
go of its vectors once the matrix is made, and a source's tables stay on disk until the build reads them, one table
of every source at a time.  The figures are in docs/benchmarks.md (bench/bench_org_refresh.py); these tests check
the behaviour the savings rest on.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from trustindex.encoder.embedding_cache import EmbeddingCache
from trustindex.schemas.tables import SOURCE_TABLES, TABLES
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


class _Encoder:
    """An embedder whose vectors are known in advance (the rows' placement is what is tested, not a model)."""

    dimensions = DIMS

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors, self.calls = vectors, 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.stack([self.vectors[t] for t in texts])


def test_the_build_matrix_is_made_float16_row_by_row_with_the_stacked_matrix_rounding(tmp_path):
    """Issue 29: the build's float16 matrix is filled from the cache row by row, not cast from a float32 matrix of
    the whole corpus; the bytes are those of the old cast."""
    from trustindex.encoder.embedding_cache import embed_texts
    from trustindex.query.dense import STORAGE_DTYPE

    texts = [f"passage {i}" for i in range(40)] + ["passage 3", "passage 7"]  # repeats share their row
    shas = [t.replace(" ", "-") for t in texts]
    rng = np.random.default_rng(7)
    vectors = {t: (rng.standard_normal(DIMS) * 3).astype(np.float32) for t in texts}
    cache = EmbeddingCache(tmp_path, "key", DIMS)
    cache.put({s: vectors[t] for t, s in list(zip(texts, shas, strict=True))[:20]})  # half cached already
    encoder = _Encoder(vectors)
    half, stats = embed_texts(texts, shas, encoder, cache, dtype=STORAGE_DTYPE)
    assert half.dtype == STORAGE_DTYPE and half.shape == (len(texts), DIMS)
    assert (stats.total, stats.distinct, stats.cache_hits, stats.encoded) == (42, 40, 20, 20)
    stacked = np.stack([vectors[t] for t in texts]).astype(np.float32)
    assert half.tobytes() == np.ascontiguousarray(stacked, dtype=STORAGE_DTYPE).tobytes()
    full, _ = embed_texts(texts, shas, encoder, EmbeddingCache(tmp_path, "key", DIMS))
    assert full.dtype == np.float32 and np.array_equal(full, stacked) and encoder.calls == 1


def _rss() -> int:
    """This process's resident size now (bytes), from /proc; the tests that read it skip where there is none."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_freed_by_a_stage_goes_back_to_the_system():
    """malloc_trim hands back what glibc kept after a stage freed it (the org refresh's build started ~0.8 GB above
    what it held live).  Measured on this process: a heap of many mid-sized strings, freed, then trimmed."""
    from trustindex.runtime.memory import _libc, return_freed_memory

    if _libc() is None or not os.path.exists("/proc/self/statm"):
        pytest.skip("no glibc malloc_trim or /proc here: nothing to hand back")

    # one survivor every 64 strings pins the arena's top, so freeing the rest does not shrink the heap by itself
    heap = [("x" * 1500) + str(i) for i in range(200_000)]
    keep = heap[::64]
    del heap
    before = _rss()
    return_freed_memory()
    after = _rss()
    assert keep and before - after > 100 * 2**20, (before, after)


def test_the_encoder_gives_back_its_arenas_and_embeds_the_same_bits_after(tmp_path):
    """Issue 29: onnxruntime keeps each session's arena at its largest batch's size; a refresh's build carried
    ~0.6 GB of them after the sources had embedded everything.  Released, the memory goes back to the system; the
    next encode opens the sessions again and gives the same bits."""
    from trustindex.encoder.factory import make_embedder, release_loaded_models
    from trustindex.runtime.memory import return_freed_memory
    from trustindex.schemas.embedding_model import Backend, encoder_cache_dir

    if not os.path.exists("/proc/self/statm"):
        pytest.skip("no /proc here to read the resident size")

    words = "ledger circuit compact proof wallet disclose witness contract token shielded".split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(230)) + f" passage {i}" for i in range(48)]
    embedder = make_embedder(Backend.ONNX_INT8, cache_dir=encoder_cache_dir(tmp_path))
    first = embedder.encode(texts)
    return_freed_memory()
    held = _rss()
    release_loaded_models()
    return_freed_memory()
    assert held - _rss() > 32 * 2**20, (held, _rss())
    assert embedder.encoder._session is None and embedder.encoder._pool_session is None
    assert embedder.encode(texts).tobytes() == first.tobytes()
    assert embedder.encode(texts[:1]).tobytes() == first[:1].tobytes()  # the intra-op session, opened again
