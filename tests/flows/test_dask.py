"""Scale-out on real Dask clusters over TCP on loopback (issue 30 item 3).

The texts a build must embed go in content-hash shards, one Prefect task each, to the cluster's workers, which
load the encoder from their own encoder cache and return vectors; nothing is shared with them.  A cluster build
must publish the snapshot a local build does.  Clusters: a ``distributed.LocalCluster`` of two worker processes,
and ``dask scheduler`` / ``dask worker`` processes started here; with ``--dask-sources`` the per-source tasks
run on the cluster too (workers in this process, so they share its data directory, as that mode requires).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.encoder.shards import (
    SHARD_TEXTS_MAX,
    ShardMismatch,
    ShardVectors,
    merge,
    shard_count,
    shard_of,
    split,
)
from trustindex.schemas.config import BuildConfig
from trustindex.schemas.refresh_run import RefreshRequest, RefreshResult
from trustindex.schemas.snapshot import verify_snapshot

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
PAGES = 45  # per source: ~300 distinct texts, a shard per worker thread (SHARD_TEXTS_MIN) and quick to embed
WAIT_S = 180  # the longest a cluster may take to come up on a loaded 2-core machine


def _page(i: int, source: str) -> str:
    body = "\n\n".join(
        f"## Part {k}\n\nTopic {i}.{k} of {source}: " + " ".join(f"w{i}_{k}_{j}" for j in range(20)) for k in range(3)
    )
    return f"---\ntitle: Page {i}\n---\n# Page {i}\n\n{body}\n"


@pytest.fixture(scope="module")
def sources_file(tmp_path_factory) -> Path:
    """Two sources (real git repositories) and the configuration files the command line reads."""
    root = tmp_path_factory.mktemp("dask-corpus")
    entries = []
    for name in ("alpha", "beta"):
        b = RepoBuilder(root / name)
        b.commit({f"docs/p{i}.md": _page(i, name) for i in range(PAGES)}, "docs")
        entries.append(
            f'[[source]]\nname = "{name}"\nurl = "{b.path.as_posix()}"\nref = "main"\npublisher = "mf"\n'
            'include = ["**/*.md"]\n'
        )
    (root / "sources.toml").write_text("\n".join(entries))
    (root / "identities.toml").write_text(
        '[[publisher]]\nid = "mf"\nname = "Midnight Foundation"\ntier = "foundation"\n\n'
        '[[person]]\nname = "Ada"\nemails = ["ada@example.org"]\npublisher = "mf"\n'
    )
    return root / "sources.toml"


@pytest.fixture(scope="module")
def corpus(sources_file) -> BuildConfig:
    from trustindex.schemas.config import load_build_config

    return load_build_config(str(sources_file))


@pytest.fixture(scope="module")
def local_build(corpus, prefect_harness, tmp_path_factory) -> RefreshResult:
    from trustindex.flows.refresh import refresh_flow

    return refresh_flow(corpus, RefreshRequest(str(tmp_path_factory.mktemp("local") / "data")))


def _cluster_stage(result: RefreshResult) -> dict:
    [stage] = [s for s in result.stages if s["stage"] == "embed-cluster"]
    return stage


def _check_cluster_build(result: RefreshResult, local: RefreshResult, data: Path, workers: int) -> None:
    """The same snapshot as the local build; every text embedded on the cluster in shards, none by the build."""
    assert not result.failures and result.published
    assert result.snapshot_id == local.snapshot_id
    stage = _cluster_stage(result)
    distinct = local.embeddings.distinct
    assert distinct > 256  # enough texts for a shard on each of two threads
    assert stage["count"] == distinct and stage["shards"] >= 2 and stage["workers"] == workers, stage
    [build_embed] = [s for s in result.stages if s["stage"] == "embed"]
    # the build embedded nothing and found every text the cluster encoded this run, counted there (issue 41 item 4)
    assert build_embed["count"] == 0 and build_embed["cache_hits"] == 0, build_embed
    assert build_embed["counted_by_sources"] == distinct, build_embed
    assert result.embeddings.encoded == distinct and result.embeddings.cache_hits == 0
    verify_snapshot(data / "snapshots" / result.snapshot_id, checksums=True)


def _loopback_cluster(workers: int, threads: int, processes: bool, env: dict | None = None):
    """A LocalCluster whose scheduler and workers talk TCP on 127.0.0.1 (no dashboard); ``env``: the worker
    processes' extra environment."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=threads,
        processes=processes,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
        **({"env": env} if env else {}),
    )


def _models_loaded(client) -> list[int]:
    """Embedding models each worker process has loaded: a worker that embedded a shard loaded one."""
    from trustindex.encoder.factory import model_loads

    return sorted(client.run(model_loads).values())


def test_shards_are_made_from_the_hashes_alone():
    import hashlib

    texts = {hashlib.sha256(f"t{i}".encode()).hexdigest(): f"t{i}" for i in range(1000)}
    shards = split(texts, 4)
    again = split(dict(reversed(list(texts.items()))), 4)  # another order in: the same shards out
    assert shards == again
    assert sorted(s for shard in shards for s in shard.shas) == sorted(texts)
    for shard in shards:
        assert list(shard.shas) == sorted(shard.shas)
        assert all(
            shard_of(s, 4) == shard.index and texts[s] == t for s, t in zip(shard.shas, shard.texts, strict=True)
        )
    assert all(150 < len(shard.shas) < 350 for shard in shards)  # hashes spread the texts evenly
    # sizes: a multiple of the threads, two a thread where the texts allow, never over SHARD_TEXTS_MAX texts a shard
    small = [shard_count(n, threads) for n, threads in ((0, 2), (100, 2), (300, 2), (600, 2), (600, 1), (600, 3))]
    assert small == [0, 1, 2, 4, 2, 3]
    assert shard_count(16_336, 1) == shard_count(16_336, 2) == 4 and shard_count(16_336, 3) == 6
    assert shard_count(100 * SHARD_TEXTS_MAX, 2) == 100 and shard_count(101 * SHARD_TEXTS_MAX, 2) == 102


def test_a_shard_from_another_encoder_is_refused():
    texts = {f"{i:064x}": f"text {i}" for i in range(3)}
    [shard] = split(texts, 1)
    vectors = np.ones((3, 4), np.float32)
    assert list(merge(shard, ShardVectors(0, "ours", vectors, 0.1, "w"), "ours", 4)) == list(shard.shas)
    with pytest.raises(ShardMismatch, match="embedded on tcp://w:1 by encoder theirs, this build uses ours"):
        merge(shard, ShardVectors(0, "theirs", vectors, 0.1, "tcp://w:1"), "ours", 4)
    with pytest.raises(ShardMismatch, match=r"float64 \(3, 4\), expected float32 \(3, 4\)"):
        merge(shard, ShardVectors(0, "ours", vectors.astype(np.float64), 0.1, "w"), "ours", 4)


def test_embedding_on_a_local_cluster_of_two_worker_processes(corpus, local_build, prefect_harness, tmp_path):
    from distributed import Client

    from trustindex.flows.refresh import refresh_flow

    data = tmp_path / "data"
    with (
        _loopback_cluster(2, threads=1, processes=True) as cluster,
        Client(cluster, timeout=WAIT_S) as client,
    ):
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        client.wait_for_workers(2, timeout=WAIT_S)
        result = refresh_flow(corpus, RefreshRequest(str(data), dask_address=cluster.scheduler_address))
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
        loaded = _models_loaded(client)
    _check_cluster_build(result, local_build, data, workers=2)
    assert "embed_shard_task" in prefixes and "ingest_source_task" not in prefixes, prefixes
    assert loaded == [1, 1]  # both worker processes embedded a shard, each with its own encoder


def _wait_for(path: Path, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.is_file():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{what} did not start (exit code {proc.poll()})")
        time.sleep(0.2)


def test_embedding_on_dask_scheduler_and_worker_processes(sources_file, local_build, tmp_path):
    """``dask scheduler`` and ``dask worker`` as an operator starts them (loopback only), and ``trustindex refresh
    --task-runner dask`` in a process of its own with no Prefect API configured: its ephemeral server, whose
    address the workers' tasks are given (cli/build.py)."""
    from distributed import Client

    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PYTHONPATH"] = str(ROOT)  # the workers and the command import this checkout's trustindex
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def start(*args: str, log: str) -> subprocess.Popen:
        with open(tmp_path / log, "wb") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "dask", *args], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT
                )
            )
        return procs[-1]

    try:
        scheduler = start(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file),
            log="scheduler.log",
        )  # fmt: skip
        _wait_for(sched_file, scheduler, "dask scheduler")
        for n in (1, 2):
            start(
                "worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1", "--nthreads", "1",
                "--no-dashboard", "--name", f"w{n}", "--local-directory", str(tmp_path / f"w{n}"),
                log=f"worker{n}.log",
            )  # fmt: skip
        with Client(scheduler_file=str(sched_file), timeout=WAIT_S) as client:
            client.wait_for_workers(2, timeout=WAIT_S)
            address = client.scheduler.address
            assert address.startswith("tcp://127.0.0.1:")
            data = tmp_path / "data"
            command = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(sources_file)]
            command += ["--data", str(data), "--task-runner", "dask", "--dask-address", address, "--json", "--quiet"]
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            payload = json.loads(done.stdout)
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
            loaded = _models_loaded(client)
    finally:  # the workers first, then the scheduler they report to
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=30)
    assert "embed_shard_task" in prefixes, prefixes
    assert loaded == [1, 1]
    _check_cluster_build(RefreshResult.of(_result_of(payload), failures=payload["failures"]), local_build, data, 2)


def _result_of(payload: dict):
    """The command's JSON back as the build's result, for the checks."""
    from trustindex.schemas.refresh_run import BuildResult, EmbeddingCounts

    return BuildResult(
        payload["snapshot_id"],
        payload["published"],
        payload["reused_snapshot"],
        payload["row_counts"],
        EmbeddingCounts(**payload["embeddings"]),
        tuple(payload["forced_past_gate"]),
        tuple(payload["stages"]),
    )


def test_source_tasks_and_shards_on_one_cluster_with_a_shared_data_dir(corpus, local_build, prefect_harness, tmp_path):
    """``--dask-sources``: the per-source tasks run on the cluster too (workers in this process: they share its
    data directory, which this mode needs)."""
    from distributed import Client

    from trustindex.flows.refresh import refresh_flow, with_task_runner

    data = tmp_path / "data"
    with (
        _loopback_cluster(1, threads=2, processes=False) as cluster,
        Client(cluster) as client,
    ):
        address = cluster.scheduler_address
        result = with_task_runner(refresh_flow, address)(corpus, RefreshRequest(str(data), dask_address=address))
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert {s.source for s in result.sources} == {"alpha", "beta"}
    assert {"ingest_source_task", "embed_shard_task"} <= set(prefixes), prefixes
    _check_cluster_build(result, local_build, data, workers=1)


def test_shards_a_worker_cannot_embed_are_embedded_by_the_build(corpus, local_build, prefect_harness, tmp_path):
    """A worker whose encoder cannot load (its encoder cache is a path under a file): each shard fails there, is
    logged and left to the build, which embeds what the cache lacks; the snapshot is still the local build's."""
    from distributed import Client

    from trustindex.flows.refresh import refresh_flow
    from trustindex.schemas.embedding_model import ENCODER_CACHE_ENV

    (tmp_path / "a-file").write_text("not a directory\n")
    broken = {ENCODER_CACHE_ENV: str(tmp_path / "a-file" / "encoders")}
    data = tmp_path / "data"
    with (
        _loopback_cluster(1, threads=1, processes=True, env=broken) as cluster,
        Client(cluster, timeout=WAIT_S) as client,
    ):
        client.wait_for_workers(1, timeout=WAIT_S)
        result = refresh_flow(corpus, RefreshRequest(str(data), dask_address=cluster.scheduler_address))
    assert not result.failures and result.snapshot_id == local_build.snapshot_id
    stage = _cluster_stage(result)
    assert stage["count"] == 0 and stage["failed_shards"] == stage["shards"] >= 1, stage
    [build_embed] = [s for s in result.stages if s["stage"] == "embed"]
    assert build_embed["count"] == local_build.embeddings.distinct  # the build embedded every text itself


def test_an_unreachable_scheduler_is_one_clear_error(prefect_harness, tmp_path):
    import socket

    import dask
    import pyarrow as pa
    from prefect import flow

    from trustindex.flows.embed_cluster import embed_on_cluster
    from trustindex.schemas.errors import TrustIndexError

    with socket.socket() as s:  # a loopback port nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        dead = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    chunks = pa.table(
        {
            "content_sha256": ["ab" * 32],
            "heading_path": [["Title"]],
            "symbol_path": [None],
            "path": ["a.md"],
            "text": ["A passage no cache holds."],
        }
    )

    @flow
    def embed_stage() -> None:
        embed_on_cluster(dead, "onnx-int8", tmp_path / "data", {"alpha": {"chunks": chunks}})

    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
        with pytest.raises(TrustIndexError, match=f"--dask-address {dead}: cannot reach the Dask scheduler"):
            embed_stage()
