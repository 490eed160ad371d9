"""The build's embedding on a Dask cluster: one Prefect task per content-hash shard (issue 30 item 3).

The refresh flow calls ``embed_on_cluster`` after its sources are extracted and before the build, when the run
names a Dask scheduler (``RefreshRequest.dask_address``) and no snapshot already holds its inputs.  The texts the
embedding cache lacks are split into shards by hash (encoder/shards.py), each shard runs as one task on the
cluster (through prefect-dask's client, for this stage only: the source tasks stay on the flow's own task
runner) and returns its vectors, and the vectors are merged into this data directory's cache.  The build then
finds every text in the cache and embeds nothing.

A worker needs the package (``trustindex[build]``) and its own encoder cache; it never sees the data directory.
The tasks report to the flow's Prefect API (their context carries its address; cli/build.py names the command
line's ephemeral server so that workers on this machine reach it).  A shard that fails, or that comes back from
another encoder than the build's, is logged and left to the build, which embeds what the cache lacks: the
snapshot is the same, only slower.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from trustindex.encoder.embedding_cache import EmbeddingCache
from trustindex.encoder.factory import make_embedder
from trustindex.encoder.shards import (
    ShardVectors,
    TextShard,
    embed_shard,
    merge,
    shard_count,
    split,
    texts_to_embed,
)
from trustindex.runtime import progress
from trustindex.schemas.embedding_model import encoder_cache_dir
from trustindex.schemas.errors import TrustIndexError

CLUSTER_EMBED_STAGE = "embed-cluster"  # the stage's record: texts embedded on the cluster, shards, workers


@task(name="embed-shard", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=1)
def embed_shard_task(shard: TextShard, backend: str) -> ShardVectors:
    """One shard embedded where this task runs, on as many encoder threads as the Dask worker has."""
    threads, worker = _this_worker()
    return embed_shard(shard, backend, threads, worker)


def _this_worker() -> tuple[int | None, str]:
    """The Dask worker running this task: its threads and address (none outside a worker: the cores, unnamed)."""
    try:
        from distributed import get_worker

        w = get_worker()
    except (ImportError, ValueError):
        return None, ""
    return int(w.state.nthreads), str(w.address)


@dataclass(frozen=True)
class ClusterEmbedding:
    """What the stage did: the distinct texts the cache lacked, the shards, the texts merged into the cache, and
    each shard left to the build with its reason."""

    texts: int = 0
    shards: int = 0
    encoded: int = 0
    failed: tuple[str, ...] = ()


def embed_on_cluster(
    address: str, backend: str, data_dir: Path, per_source: Mapping[str, Mapping[str, pa.Table]]
) -> ClusterEmbedding:
    """Embed on the cluster at ``address`` every chunk text of ``per_source`` that the cache lacks, into the cache."""
    log = get_run_logger()
    with progress.stage("model"):  # the build's encoder: its cache key names the cache and checks the shards
        embedder = make_embedder(backend, cache_dir=encoder_cache_dir(data_dir))
    cache = EmbeddingCache(data_dir / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
    with progress.stage(CLUSTER_EMBED_STAGE, unit="texts") as bar:
        texts = texts_to_embed(per_source, cache)
        if not texts:
            bar.note(shards=0, cache_hits_all=True)
            return ClusterEmbedding()
        from prefect_dask import PrefectDaskClient

        new: dict = {}
        failed: list[str] = []
        with ExitStack() as stack:
            # prefect-dask's client, not its DaskTaskRunner: the runner takes any client this process has set as
            # default (a --dask-sources run's, a caller's) before its address; this one connects where it is told
            try:
                client = stack.enter_context(PrefectDaskClient(address, set_as_default=False))
            except OSError as exc:  # distributed's connect timeout is an OSError too
                raise TrustIndexError(f"--dask-address {address}: cannot reach the Dask scheduler ({exc})") from None
            nthreads = client.nthreads()
            shards = split(texts, shard_count(len(texts), sum(nthreads.values())))
            futures = [client.submit(embed_shard_task, parameters={"shard": s, "backend": backend}) for s in shards]
            encode_s = 0.0
            for shard, future in zip(shards, futures, strict=True):
                try:
                    result = future.result()
                    new.update(merge(shard, result, embedder.cache_key, embedder.dimensions))
                except Exception as exc:  # left to the build, which embeds whatever the cache lacks
                    failed.append(f"shard {shard.index + 1}/{shard.count} ({len(shard.shas)} texts): {exc}")
                    log.warning("embedding on the cluster: %s", failed[-1])
                    continue
                encode_s += result.seconds
                bar.advance(len(shard.shas))
        cache.put(new)  # one cache file, rows in sha order: the same bytes whatever order the shards ended in
        bar.note(
            shards=len(shards), workers=len(nthreads), threads=sum(nthreads.values()), encode_seconds=round(encode_s, 3)
        )
        if failed:
            bar.note(failed_shards=len(failed))
    log.info(
        "embedded %d texts on the cluster at %s (%d shards, %d workers)", len(new), address, len(shards), len(nthreads)
    )
    return ClusterEmbedding(len(texts), len(shards), len(new), tuple(failed))
