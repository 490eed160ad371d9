"""Chunk embeddings with a cache keyed by (model id + weights sha256, content sha256).

Backends follow a small base class (here), one module per implementation
(``sentence_transformer_embedder``, ``onnx_embedder``) and a factory of their own
(``embedder_factory``), txtai style: this module imports none of them.  The cache is
a directory of Parquet shards per model key; a refresh that changes nothing embeds
nothing.

Shards are committed as texts are encoded, every ``COMMIT_TEXTS`` texts (``commit_due``), each one written to a
temporary name, fsynced, renamed into place and its directory fsynced (issue 41 item 5): a build killed mid-encode
loses at most the batch it was encoding, and the next run encodes only what no shard holds.  Before, a refresh
wrote its shard once a source had finished, and a kill near the end of one large source lost the whole encode.
Small shards add up over many runs; ``compact`` merges them once there are more than ``MAX_SHARDS``.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.runtime.durable import fsync_path
from trustindex.schemas.embedding_model import Backend

# Texts encoded between two commits of the cache (a crash loses at most these and the worker's part in flight,
# ``worker.ENCODE_PART``), and the longest a batch of fewer waits (texts trickling in from a slow source).  128 real
# texts are ~0.2 MB of vectors and 1-2 s of encoding on 2 cores; a commit (a Parquet write and two fsyncs) costs a
# few milliseconds.  At 512 (and calls of 512), the real-docs build killed at 12, 30 and 50 s kept 7,378 texts and
# its rerun still encoded 54.8 % of them.
COMMIT_TEXTS = 128
COMMIT_SECONDS = 10.0
# More shards than this are merged into one at the end of a run (``compact``).
MAX_SHARDS = 64


class Embedder:
    """Base: ``encode(texts) -> float32 [n, dims]``, L2-normalised."""

    backend: Backend  # each implementation names its own
    dimensions = 384

    def encode(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def info(self) -> dict:
        raise NotImplementedError

    def snapshot_files(self) -> dict[str, Path]:
        """Files the snapshot must carry so queries are embedded by this same model (none for torch)."""
        return {}

    def verified_sha256(self) -> dict[str, str]:
        """sha256 of those files (same keys) as this process verified them when it loaded the model."""
        return {}

    def release_memory(self) -> None:
        """Give back what running the model holds beyond the model itself (the next encode takes it again)."""

    @property
    def cache_key(self) -> str:
        i = self.info()
        return hashlib.sha256(f"{i['id']}\0{i['backend']}\0{i['sha256']}".encode()).hexdigest()[:16]


@dataclass
class EmbedStats:
    total: int = 0
    distinct: int = 0
    cache_hits: int = 0
    encoded: int = 0


class EmbeddingCache:
    def __init__(self, directory: Path, key: str, dims: int):
        self.dir = Path(directory) / key
        self.dims = dims
        self._mem: dict[str, np.ndarray] | None = None
        self._keys: set[str] | None = None  # the texts cached, without their vectors (``known``)

    def _load(self) -> dict[str, np.ndarray]:
        if self._mem is None:
            self._mem = {}
            for shard in sorted(self.dir.glob("*.parquet")) if self.dir.is_dir() else []:
                try:
                    t = pq.read_table(shard)
                except Exception:
                    continue  # a torn shard from a crash: those vectors are recomputed
                vecs = np.asarray(t.column("vector").combine_chunks().flatten(), np.float32).reshape(-1, self.dims)
                for sha, v in zip(t.column("content_sha256").to_pylist(), vecs, strict=True):
                    self._mem[sha] = v
        return self._mem

    def known(self, shas: list[str]) -> set[str]:
        """Which of ``shas`` the cache holds, without reading a vector: the shared embedding worker asks this for
        every text of every source, and keeping every vector in memory for it cost ~165 MiB at 92k texts."""
        if self._keys is None:
            if self._mem is not None:
                self._keys = set(self._mem)
            else:
                self._keys = set()
                for shard in sorted(self.dir.glob("*.parquet")) if self.dir.is_dir() else []:
                    try:
                        t = pq.read_table(shard, columns=["content_sha256"])
                    except Exception:
                        continue  # a torn shard, as in _load: those vectors are recomputed
                    self._keys.update(t.column("content_sha256").to_pylist())
        return {s for s in shas if s in self._keys}

    def get(self, shas: list[str]) -> dict[str, np.ndarray]:
        mem = self._load()
        return {s: mem[s] for s in shas if s in mem}

    def release(self) -> None:
        """Forget the vectors held in memory (read again from disk if asked for): a build needs them only until
        its matrix is made, and at 92k texts they are ~165 MiB beside the index stage's own peak."""
        self._mem = None
        self._keys = None

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Commit ``vectors`` as one new shard, durably: it is on disk, whole, when this returns."""
        if not vectors:
            return
        self._write_shard(vectors)
        if self._mem is not None:  # loaded: kept up to date; not loaded: the next get reads this shard too
            self._mem.update(vectors)
        if self._keys is not None:
            self._keys.update(vectors)

    def _write_shard(self, vectors: dict[str, np.ndarray]) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        shas = sorted(vectors)
        mat = np.stack([vectors[s] for s in shas]).astype(np.float32)
        table = pa.table(
            {"content_sha256": shas, "vector": pa.FixedSizeListArray.from_arrays(pa.array(mat.reshape(-1)), self.dims)}
        )
        name = hashlib.sha256("".join(shas).encode()).hexdigest()[:16]
        tmp, shard = self.dir / f".{name}.tmp", self.dir / f"{name}.parquet"
        pq.write_table(table, tmp)
        fsync_path(tmp)  # the bytes first, then the name: a crash leaves the old state or the whole shard
        os.replace(tmp, shard)
        fsync_path(self.dir)
        return shard

    def shards(self) -> list[Path]:
        return sorted(self.dir.glob("*.parquet")) if self.dir.is_dir() else []

    def compact(self, max_shards: int = MAX_SHARDS) -> int:
        """Merge every shard into one when there are more than ``max_shards``; how many shards were merged.

        The merged shard is committed before the old ones are removed, so a crash in between leaves copies of the
        same vectors (read as one), never fewer.  Torn shards are left alone (``_load`` skips them)."""
        old = self.shards()
        if len(old) <= max_shards:
            return 0
        merged: dict[str, np.ndarray] = {}
        readable = []
        for shard in old:
            try:
                t = pq.read_table(shard)
            except Exception:
                continue
            vecs = np.asarray(t.column("vector").combine_chunks().flatten(), np.float32).reshape(-1, self.dims)
            merged.update(zip(t.column("content_sha256").to_pylist(), vecs, strict=True))
            readable.append(shard)
        if not merged:
            return 0
        kept = self._write_shard(merged)
        for shard in readable:
            if shard != kept:
                shard.unlink(missing_ok=True)
        fsync_path(self.dir)
        return len(readable)


class PendingVectors:
    """Vectors encoded and not yet committed, and when they are due (every COMMIT_TEXTS texts or COMMIT_SECONDS)."""

    def __init__(self, cache: EmbeddingCache | None, every: int = COMMIT_TEXTS, seconds: float = COMMIT_SECONDS):
        self.cache, self.every, self.seconds = cache, every, seconds
        self.vectors: dict[str, np.ndarray] = {}
        self.committed = 0  # texts committed so far
        self._since = time.monotonic()

    def __contains__(self, sha: object) -> bool:
        return sha in self.vectors

    def add(self, shas: list[str], vectors: np.ndarray) -> None:
        self.vectors.update(zip(shas, vectors, strict=True))
        if len(self.vectors) >= self.every or time.monotonic() - self._since >= self.seconds:
            self.commit()

    def commit(self) -> None:
        if self.cache is not None and self.vectors:
            self.cache.put(self.vectors)
            self.committed += len(self.vectors)
        self.vectors = {}
        self._since = time.monotonic()


def embed_texts(
    texts: list[str],
    shas: list[str],
    embedder: Embedder,
    cache: EmbeddingCache,
    progress=None,
    dtype: np.dtype | type = np.float32,
) -> tuple[np.ndarray, EmbedStats]:
    """Embed each distinct text once, reusing cached vectors; rows follow ``texts``, as ``dtype`` (the snapshot's
    float16: each row cast as it is placed, so no float32 matrix of the whole corpus is made beside the cache's)."""
    stats = EmbedStats(total=len(texts))
    first: dict[str, str] = {}
    for t, s in zip(texts, shas, strict=True):
        first.setdefault(s, t)
    stats.distinct = len(first)
    found = cache.get(list(first))
    stats.cache_hits = len(found)
    # by length: a batch-independent encoder runs texts of one token length together, and a 512-text part of
    # length-sorted texts holds long runs of them (the vectors do not depend on this order)
    missing = sorted((s for s in first if s not in found), key=lambda s: len(first[s]))
    from trustindex.runtime import progress

    # the count and rate are of texts encoded now; the cache's share is kept beside them
    with progress.stage("embed", len(missing), unit="texts") as bar:
        bar.note(cache_hits=stats.cache_hits, distinct=stats.distinct)
        if missing:
            for i in range(0, len(missing), COMMIT_TEXTS):  # batches bound memory, feed the bar, commit the cache
                part = missing[i : i + COMMIT_TEXTS]
                new = dict(zip(part, embedder.encode([first[s] for s in part]), strict=True))
                cache.put(new)  # durably, batch by batch: a build killed here keeps what it encoded
                found.update(new)
                bar.advance(len(part))
            stats.encoded = len(missing)
    mat = np.empty((len(shas), embedder.dimensions), dtype=dtype)
    for row, s in enumerate(
        shas
    ):  # the same rounding as casting the stacked matrix (tests/encoder/test_bounded_memory.py)
        mat[row] = found[s]
    return mat, stats
