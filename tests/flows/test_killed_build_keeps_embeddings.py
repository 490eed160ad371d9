"""A build killed mid-encode keeps what it embedded (issue 41 item 5).

The real command (``trustindex refresh`` in a process group of its own) builds a generated corpus of ~2,000
distinct passages from empty; it is SIGKILLed, process group and all, once the embedding cache holds its first
committed batch and before the encode is over.  The rerun must then encode exactly the texts no shard holds: every
committed vector is reused, and a crash loses at most the batch being encoded.  Before, the cache was written when a
source finished, so a kill inside one large source lost the whole encode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.kits.clienv import ROOT, cli_env
from tests.kits.gitutil import RepoBuilder
from trustindex.encoder.embedding_cache import COMMIT_TEXTS, EmbeddingCache
from trustindex.schemas.snapshot import resolve_current, verify_snapshot

PAGES = 700  # 3 sections a page: ~2,100 distinct passages, four commit batches and more


def _page(i: int) -> str:
    parts = "\n\n".join(
        f"## Part {k}\n\nSection {k} of page {i} explains step {i * 3 + k}: "
        + " ".join(f"term{(i * 7 + k * 13 + j) % 997}" for j in range(24))
        for k in range(3)
    )
    return f"---\ntitle: Page {i}\n---\n# Page {i}\n\n{parts}\n"


@pytest.fixture()
def corpus(tmp_path) -> Path:
    repo = RepoBuilder(tmp_path / "docs-repo")
    repo.commit({f"docs/p{i:04d}.md": _page(i) for i in range(PAGES)}, "docs")
    (tmp_path / "identities.toml").write_text(
        '[[publisher]]\nid = "mf"\nname = "Midnight Foundation"\ntier = "foundation"\n\n'
        '[[person]]\nname = "Ada"\nemails = ["ada@example.org"]\npublisher = "mf"\n'
    )
    sources = tmp_path / "sources.toml"
    sources.write_text(
        f'[[source]]\nname = "docs"\nurl = "{repo.path}"\nref = "main"\npublisher = "mf"\ninclude = ["**/*.md"]\n'
    )
    return sources


def _cached(data: Path) -> set[str]:
    """The content hashes every readable shard of the embedding cache holds."""
    held: set[str] = set()
    for shard in (data / "cache" / "embeddings").glob("*/*.parquet"):
        held.update(pq.read_table(shard, columns=["content_sha256"]).column("content_sha256").to_pylist())
    return held


@pytest.mark.slow
def test_a_build_killed_mid_encode_keeps_its_committed_batches(corpus, tmp_path):
    data = tmp_path / "data"
    env = cli_env(tmp_path / "prefect-home")
    cmd = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(corpus), "--data", str(data)]
    with open(tmp_path / "killed.log", "w") as log:
        p = subprocess.Popen([*cmd, "--quiet"], env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
    t0 = time.monotonic()
    while not _cached(data) and p.poll() is None:
        assert time.monotonic() - t0 < 600, "the build never committed a batch of embeddings"
        time.sleep(0.05)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)  # the refresh and everything it started
    p.wait()
    assert p.returncode == -signal.SIGKILL, ("the build ended before the kill", (tmp_path / "killed.log").read_text())
    kept = _cached(data)
    assert len(kept) >= COMMIT_TEXTS  # whole batches, each committed as one shard
    assert not (data / "CURRENT").exists()  # killed mid-encode, long before a snapshot

    done = subprocess.run([*cmd, "--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    e = json.loads(done.stdout)["embeddings"]
    assert len(kept) < e["distinct"]  # the kill landed inside the encode
    # the rerun found every committed vector and encoded only the rest
    assert (e["cache_hits"], e["encoded"]) == (len(kept), e["distinct"] - len(kept))
    live = resolve_current(data)
    verify_snapshot(live, checksums=True)
    # the vectors kept from the killed run are the ones the snapshot holds for those texts
    cache_dir = next((data / "cache" / "embeddings").iterdir())
    cache = EmbeddingCache(cache_dir.parent, cache_dir.name, 384)
    shas = pq.read_table(live / "chunks.parquet", columns=["content_sha256"]).column("content_sha256").to_pylist()
    matrix = np.load(live / "embeddings.npy")
    row = {s: i for i, s in enumerate(shas)}
    some = sorted(kept)[:50]
    stored = cache.get(some)
    for s in some:
        assert np.array_equal(matrix[row[s]], stored[s].astype(matrix.dtype))


@pytest.mark.slow
def test_a_build_stopped_by_sigterm_ends_at_once_and_keeps_what_it_encoded(corpus, tmp_path):
    """SIGTERM (systemd's stop, Kubernetes' pod deletion, Ctrl-C's cousin) ends the run promptly: the batch being
    encoded is committed, the queued texts are left to the next run, and the source stops extracting.  Before, the
    stopped run drained its whole queue while its source extracted on: the cache ended up holding every text."""
    data = tmp_path / "data"
    env = cli_env(tmp_path / "prefect-home")
    cmd = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(corpus), "--data", str(data)]
    log_file = tmp_path / "stopped.log"
    with open(log_file, "w") as log:
        p = subprocess.Popen([*cmd, "--quiet"], env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
    t0 = time.monotonic()
    while not _cached(data) and p.poll() is None:
        assert time.monotonic() - t0 < 600, "the build never committed a batch of embeddings"
        time.sleep(0.05)
    assert p.poll() is None, ("the build ended before the stop", log_file.read_text())
    os.killpg(p.pid, signal.SIGTERM)  # the refresh and the Prefect server it started, as a service manager stops it
    try:
        p.wait(timeout=300)  # bounded: a stopped run that drains and extracts on would still end, only later
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode != 0 and not (data / "CURRENT").exists()
    assert "run stopped: the embedding cache keeps" in log_file.read_text()
    kept = _cached(data)
    assert len(kept) >= COMMIT_TEXTS

    done = subprocess.run([*cmd, "--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    e = json.loads(done.stdout)["embeddings"]
    # the stop left texts unencoded (it did not drain the run to its end), and kept every vector it had encoded
    assert (e["cache_hits"], e["encoded"]) == (len(kept), e["distinct"] - len(kept)) and e["encoded"] > 0
