"""The embedding cache commits as texts are encoded, and merges its shards (issue 41 item 5).

Vectors here are generated (the cache stores whatever an encoder gave it); the kill of a real build is
tests/flows/test_killed_build_keeps_embeddings.py."""

from __future__ import annotations

import hashlib

import numpy as np

from trustindex.encoder.embedding_cache import EmbeddingCache, PendingVectors


def _batch(start: int, n: int, dims: int = 8) -> tuple[list[str], np.ndarray]:
    shas = [hashlib.sha256(f"text {i}".encode()).hexdigest() for i in range(start, start + n)]
    rng = np.random.default_rng(start)
    return shas, rng.standard_normal((n, dims)).astype(np.float32)


def test_pending_vectors_commit_every_n_texts_and_on_demand(tmp_path):
    cache = EmbeddingCache(tmp_path, "model", 8)
    pending = PendingVectors(cache, every=10, seconds=3600)
    shas, vecs = _batch(0, 6)
    pending.add(shas, vecs)
    assert cache.shards() == [] and shas[0] in pending  # 6 < 10: held, not yet on disk
    more, more_vecs = _batch(6, 6)
    pending.add(more, more_vecs)
    assert len(cache.shards()) == 1 and pending.committed == 12 and shas[0] not in pending
    last, last_vecs = _batch(12, 3)
    pending.add(last, last_vecs)
    pending.commit()
    assert len(cache.shards()) == 2 and pending.committed == 15
    fresh = EmbeddingCache(tmp_path, "model", 8)  # another process reading what was committed
    assert fresh.known(shas + more + last) == set(shas + more + last)
    assert np.array_equal(fresh.get([last[1]])[last[1]], last_vecs[1])


def test_a_slow_trickle_is_committed_after_the_time_limit(tmp_path):
    cache = EmbeddingCache(tmp_path, "model", 8)
    pending = PendingVectors(cache, every=1000, seconds=0.0)
    pending.add(*_batch(0, 2))
    assert len(cache.shards()) == 1


def test_compact_merges_many_shards_into_one_with_every_vector(tmp_path):
    cache = EmbeddingCache(tmp_path, "model", 8)
    expected = {}
    for b in range(7):
        shas, vecs = _batch(b * 5, 5)
        cache.put(dict(zip(shas, vecs, strict=True)))
        expected.update(zip(shas, vecs, strict=True))
    cache.put(dict([next(iter(expected.items()))]))  # a text committed twice (two runs raced): read as one
    (cache.dir / "torn.parquet").write_bytes(b"PAR1 not a whole file")  # a torn shard is left alone
    assert cache.compact(max_shards=10) == 0  # 9 shards: under the limit, nothing merged
    assert cache.compact(max_shards=4) == 8
    assert len([p for p in cache.shards() if p.name != "torn.parquet"]) == 1
    merged = EmbeddingCache(tmp_path, "model", 8).get(list(expected))
    assert set(merged) == set(expected)
    assert all(np.array_equal(merged[s], v) for s, v in expected.items())
