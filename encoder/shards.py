"""A build's embedding split into content-hash shards that any machine can embed (issue 30 item 3).

The texts a build must embed are those the content-hash embedding cache lacks.  They are split by their hash
(``shard_of``: the first 64 bits of the text's sha256 modulo the shard count) into shards that carry the texts
themselves, in sha order; whoever embeds a shard (``embed_shard``: a Dask worker, flows/embed_cluster.py) loads
the encoder from its own machine's encoder cache and hands back one float32 matrix, a row per text in the
shard's order.  Nothing else travels and nothing is shared: no data directory, no cache, no model files.

Why the result cannot depend on where or how the shards ran: a vector is a function of its text alone (encoder
recipe 5: the same bits in any batch and on any number of threads, docs/embedding.md); the shards are made from
the hashes alone; and ``merge`` checks that each shard was embedded by the very encoder this build uses (its
cache key, which names the exported model file's sha256) before the vectors go into the cache, which the build
then reads as it always has.  A local build and a cluster build therefore write the same snapshot.

Shard sizes (``shard_count``): hashes spread the texts evenly, so shards of one build hold about as much work each,
and a multiple of the worker threads (two per thread where there are enough texts) keeps every thread busy to the
end; a shard holds at most ``SHARD_TEXTS_MAX`` texts and at least ``SHARD_TEXTS_MIN`` where there are that many (a
shard is one coarse task: a task run costs 10-90 ms, and a larger shard batches better, since the encoder runs
texts of one token length together).
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from trustindex.encoder.embedding_cache import EmbeddingCache
from trustindex.encoder.factory import make_embedder
from trustindex.schemas.embedded_text import embedding_input
from trustindex.schemas.embedding_model import encoder_cache_dir

SHARD_TEXTS_MAX = 4096  # ~6 MiB of float32 vectors back per shard; the real docs (16,336 texts): 4 or more shards
SHARD_TEXTS_MIN = 128  # ~1 s of one thread's work: a task run (10-90 ms) and the transfer stay a small share
SHARDS_PER_THREAD = 2  # hashes balance the shards' work; two per thread absorb a slow worker


@dataclass(frozen=True)
class TextShard:
    """Shard ``index`` of ``count``: the texts whose hash falls in it, and their hashes, in hash order."""

    index: int
    count: int
    shas: tuple[str, ...]
    texts: tuple[str, ...]


@dataclass(frozen=True)
class ShardVectors:
    """A shard embedded: a float32 row per text in the shard's order, by the encoder named ``cache_key``, where."""

    index: int
    cache_key: str
    vectors: np.ndarray
    seconds: float  # the encode alone, on the worker
    worker: str


def texts_to_embed(per_source: Mapping[str, Mapping[str, pa.Table]], cache: EmbeddingCache) -> dict[str, str]:
    """The distinct chunk texts of ``per_source`` that ``cache`` lacks, by content sha256 (the build embeds the same:
    ``embed_texts`` keys a text by the sha256 of exactly this input)."""
    first: dict[str, str] = {}
    for _name, tables in sorted(per_source.items()):
        chunks = tables["chunks"]
        for sha, text in zip(chunks.column("content_sha256").to_pylist(), embedding_input(chunks), strict=True):
            first.setdefault(sha, text)
    known = cache.known(list(first))
    return {s: t for s, t in first.items() if s not in known}


def shard_count(texts: int, threads: int) -> int:
    """How many shards for ``texts`` texts on a cluster of ``threads`` worker threads (module docstring): a
    multiple of the threads (equal shards on every thread: none idles while another finishes an extra one), up
    to SHARDS_PER_THREAD each while shards keep SHARD_TEXTS_MIN texts, more when shards would pass SHARD_TEXTS_MAX;
    too few texts for a shard on every thread: shards of SHARD_TEXTS_MIN."""
    if texts <= 0:
        return 0
    threads = max(1, threads)
    per_thread = min(SHARDS_PER_THREAD, texts // (SHARD_TEXTS_MIN * threads))
    if not per_thread:
        return max(1, texts // SHARD_TEXTS_MIN)
    by_size = math.ceil(math.ceil(texts / SHARD_TEXTS_MAX) / threads) * threads
    return max(threads * per_thread, by_size)


def shard_of(sha: str, count: int) -> int:
    return int(sha[:16], 16) % count


def split(texts: Mapping[str, str], count: int) -> list[TextShard]:
    """``texts`` (by sha256) in ``count`` shards by hash; the empty ones left out."""
    members: list[list[str]] = [[] for _ in range(count)]
    for sha in sorted(texts):
        members[shard_of(sha, count)].append(sha)
    return [TextShard(i, count, tuple(shas), tuple(texts[s] for s in shas)) for i, shas in enumerate(members) if shas]


def worker_encoder_dir() -> Path:
    """Where a worker keeps its export: the machine's encoder cache (``encoder_cache_dir``), which needs no data
    directory; only where no user cache can be written, a folder under the machine's temporary directory."""
    return encoder_cache_dir(Path(tempfile.gettempdir()) / "trustindex-worker")


def embed_shard(shard: TextShard, backend: str, threads: int | None = None, worker: str = "") -> ShardVectors:
    """Embed one shard with this machine's encoder (loaded once per process, exported once per machine)."""
    embedder = make_embedder(backend, cache_dir=worker_encoder_dir(), threads=threads)
    started = time.perf_counter()
    vectors = np.ascontiguousarray(embedder.encode(list(shard.texts)), dtype=np.float32)
    return ShardVectors(shard.index, embedder.cache_key, vectors, time.perf_counter() - started, worker)


class ShardMismatch(ValueError):
    """A shard came back from another encoder than the build's, or with the wrong shape."""


def merge(shard: TextShard, result: ShardVectors, cache_key: str, dims: int) -> dict[str, np.ndarray]:
    """One shard's vectors by sha256, once they are known to be this build's encoder's (``cache_key``)."""
    if result.cache_key != cache_key:
        raise ShardMismatch(
            f"shard {shard.index + 1}/{shard.count} was embedded on {result.worker or 'a worker'} by encoder "
            f"{result.cache_key}, this build uses {cache_key} (another model package, encoder recipe or export "
            f"there): its texts are embedded here"
        )
    if result.vectors.shape != (len(shard.shas), dims) or result.vectors.dtype != np.float32:
        raise ShardMismatch(
            f"shard {shard.index + 1}/{shard.count} came back as {result.vectors.dtype} {result.vectors.shape}, "
            f"expected float32 ({len(shard.shas)}, {dims}): its texts are embedded here"
        )
    return dict(zip(shard.shas, result.vectors, strict=True))
