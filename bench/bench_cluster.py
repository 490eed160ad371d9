"""Embedding on a Dask cluster: two worker processes (one thread each) vs one, same machine (issue 30 item 4).

    PYTHONPATH=. .venv/bin/python bench/bench_cluster.py [--files N] [--body-chars N] [--repeats 1] [--no-save]

Corpus: bench/bench_refresh.py's ``make_corpus`` over the real Midnight docs (default: every Markdown/MDX file,
whole; ``--files``/``--body-chars`` take a truncated one, for a quick check).  Two ``distributed.LocalCluster``s
run side by side on this machine, TCP on loopback, worker processes of one thread each: one with one worker, one
with two.  Each worker is warmed first (it loads the encoder from the machine's encoder cache, as a shard task
would), so the figure is embedding, not a model load.  The refresh flow runs in this process
(``cli.build.run_refresh`` with a ``RefreshRequest(dask_address=...)``, its own ephemeral Prefect server, which the
workers reach on loopback).  The first build (one worker) extracts the sources; every later build reuses their
tables, with the embedding cache emptied and ``rebuild`` set, so each build embeds every distinct text on its
cluster.

Figure: the flow's ``embed-cluster`` stage (texts the cache lacks found, split in content-hash shards, shard tasks
on the cluster, vectors merged into the cache), one worker / two workers; with ``--repeats`` > 1 the sizes
alternate (1, 2, 2, 1, ...) and each side's median is taken.  Goal (issue 30): ≥ 1.6×, with every build's
snapshot id the same.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import CORPUS, WORK, figure, machine, print_figures, save, setup_env  # noqa: E402

GOAL_TWO_WORKERS = 1.6
STAGE = "embed-cluster"  # flows.embed_cluster.CLUSTER_EMBED_STAGE (not imported here: Prefect loads with it)


def _warm(backend: str) -> int:
    """On a worker: the encoder loaded as a shard task loads it (the worker's one thread)."""
    from trustindex.encoder.factory import make_embedder
    from trustindex.encoder.shards import worker_encoder_dir

    return make_embedder(backend, cache_dir=worker_encoder_dir(), threads=1).dimensions


def run(files: int | None, body_chars: int | None, repeats: int) -> dict:
    import os

    from distributed import Client, LocalCluster

    from bench.bench_refresh import make_corpus
    from trustindex.cli.build import load_build_config, run_refresh
    from trustindex.schemas.embedding_model import DEFAULT_BACKEND
    from trustindex.schemas.refresh_run import RefreshRequest

    logging.getLogger("distributed").setLevel(logging.WARNING)  # the clusters' start and close, line by line
    root = WORK / "cluster"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    os.environ["PREFECT_HOME"] = str(root / "prefect-home")
    sources, paths = make_corpus(root, files, body_chars)
    cfg = load_build_config(str(sources))
    data = root / "data"
    backend = str(DEFAULT_BACKEND)
    clusters, clients = {}, {}
    t0 = time.perf_counter()
    try:
        for n in (1, 2):
            clusters[n] = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                protocol="tcp://",
                host="127.0.0.1",
                dashboard_address=None,
            )
            clients[n] = Client(clusters[n], timeout=300, set_as_default=False)
            clients[n].wait_for_workers(n, timeout=300)
            clients[n].run(_warm, backend)
        start_s = time.perf_counter() - t0
        print(f"  clusters up and warm in {start_s:.1f} s", flush=True)
        order = [n for r in range(repeats) for n in ((1, 2) if r % 2 == 0 else (2, 1))]
        seconds: dict[int, list[float]] = {1: [], 2: []}
        runs = []
        for i, n in enumerate(order):
            if i:  # the sources' tables stay; the cache goes, so this build embeds every text again
                shutil.rmtree(data / "cache" / "embeddings", ignore_errors=True)
            address = clusters[n].scheduler_address
            r = run_refresh(cfg, RefreshRequest(str(data), backend=backend, rebuild=i > 0, dask_address=address))
            [stage] = [s for s in r["stages"] if s["stage"] == STAGE]
            seconds[n].append(stage["seconds"])
            runs.append({"workers": n, "snapshot_id": r["snapshot_id"], "stage": stage, "load": machine()})
            print(
                f"  {n} worker{'s' if n > 1 else ''}: {STAGE} {stage['seconds']:.2f} s, {stage['count']} texts in "
                f"{stage.get('shards')} shards (encode {stage.get('encode_seconds')} s summed over the workers), "
                f"snapshot {r['snapshot_id']}, load {runs[-1]['load']['load_average_1m']}",
                flush=True,
            )
    finally:
        for n in clients:
            clients[n].close()
        for n in clusters:
            clusters[n].close()
    one, two = statistics.median(seconds[1]), statistics.median(seconds[2])
    ids = {r["snapshot_id"] for r in runs}
    ratio = one / two
    texts = runs[0]["stage"]["count"]
    figures = [
        figure(
            f"embedding stage ({texts} texts) on a 2-worker local Dask cluster, 1 thread a worker; same snapshot id: "
            f"{'yes' if len(ids) == 1 else 'NO'}",
            two,
            "s",
            "the same on 1 worker (s)",
            one,
            ratio,
            f"≥ {GOAL_TWO_WORKERS}× (1 worker / 2 workers)",
            ratio >= GOAL_TWO_WORKERS and len(ids) == 1,
        )
    ]
    shutil.rmtree(data, ignore_errors=True)
    return {
        "figures": figures,
        "files": len(paths),
        "texts": texts,
        "runs": runs,
        "snapshot_ids": sorted(ids),
        "clusters_start_s": start_s,
        "method": f"git repo of {len(paths)} real Midnight docs files"
        + (f" (body cut near {body_chars} characters)" if body_chars else " (whole)")
        + f", {texts} distinct texts; default backend; two distributed.LocalClusters on this machine (worker "
        f"processes, 1 thread each, TCP on loopback; 1 and 2 workers), each worker's encoder loaded before timing; "
        f"the refresh flow in this process (run_refresh with dask_address) builds {len(order)} times in order "
        f"{order} (the first extracts, the rest reuse the tables with the embedding cache emptied and rebuild "
        f"set); figure = the flow's {STAGE} stage (find the texts the cache lacks, content-hash shards as Prefect "
        f"tasks on the cluster, vectors merged into the cache), median per cluster size; ratio = 1 worker / 2.",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, help="take the first N Markdown files (default: all)")
    ap.add_argument("--body-chars", type=int, help="cut each body near N characters (default: whole)")
    ap.add_argument("--repeats", type=int, default=1, help="rounds of (1 worker, 2 workers), alternating order")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--note", help="a note saved with the figures (e.g. what else the machine was running)")
    a = ap.parse_args(argv)
    setup_env()
    if not CORPUS.is_dir():
        print(f"cluster: skipped, the real docs corpus is not at {CORPUS} (set TRUSTINDEX_BENCH_CORPUS)")
        return 0
    result = run(a.files, a.body_chars, a.repeats)
    print_figures("cluster", result["figures"])
    if not a.no_save:
        save("cluster", {**result, "note": a.note} if a.note else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
