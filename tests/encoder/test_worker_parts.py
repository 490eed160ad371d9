"""The shared embedding worker encodes what it takes in parts and commits each (issue 41 item 5).

A kill loses the worker's part in flight and what is pending a commit: one document of 300 distinct passages,
taken from the queue in one call, is encoded in parts of ``ENCODE_PART`` texts (shortest first), each committed as
its own shard once ``COMMIT_TEXTS`` are pending; the vectors are the encoder's own for each text (a part's
neighbours do not change them).  The real model and the real cache on disk; tests/flows/ kills a real build."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow.parquet as pq

from trustindex.encoder.embedding_cache import COMMIT_TEXTS
from trustindex.encoder.worker import ENCODE_PART, MAX_TEXTS_PER_CALL, Feed, SharedEmbedWorker
from trustindex.schemas.embedding_model import DEFAULT_BACKEND


def _texts(n: int) -> list[str]:
    # lengths from a few words to a few hundred: the parts are cut after sorting by length
    return [f"Passage {i} about topic {i % 17}. " + "More words follow here. " * (i % 23) for i in range(n)]


def test_one_call_is_encoded_and_committed_part_by_part(tmp_path):
    assert COMMIT_TEXTS <= ENCODE_PART < MAX_TEXTS_PER_CALL  # else a call would be committed whole
    texts = _texts(300)
    pairs = [(hashlib.sha256(t.encode()).hexdigest(), t) for t in texts]
    worker = SharedEmbedWorker(DEFAULT_BACKEND, tmp_path / "data")
    feed = Feed("docs")
    worker.submit(feed, pairs)  # one document: one call of the worker
    worker.finish(feed)
    embedder = worker.embedder()
    assert embedder is not None
    shards = sorted((tmp_path / "data" / "cache" / "embeddings").glob("*/*.parquet"))
    worker.stop()
    held = [pq.read_table(s, columns=["content_sha256"]).column("content_sha256").to_pylist() for s in shards]
    assert sorted(len(h) for h in held) == [44, 128, 128]  # two whole parts and the rest at the source's end
    by_sha = dict(pairs)
    last = min(held, key=len)  # the rest of the call, committed when the source finished
    first_parts = [s for h in held if h is not last for s in h]
    assert min(len(by_sha[s]) for s in last) >= max(len(by_sha[s]) for s in first_parts)  # shortest first
    assert feed.encoded == 300 and worker.encoded == 300
    table = pq.read_table(shards[0])
    shas = table.column("content_sha256").to_pylist()[:5]
    stored = np.asarray(table.column("vector").combine_chunks().flatten(), np.float32).reshape(-1, 384)[:5]
    alone = embedder.encode([by_sha[s] for s in shas])
    assert np.array_equal(stored, alone)  # each text's vector does not depend on its part
