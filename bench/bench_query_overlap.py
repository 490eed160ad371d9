"""The lexical channel beside the query's embedding against it in line, in one process, alternating by query.

    PYTHONPATH=. .venv/bin/python bench/bench_query_overlap.py [--sizes 10000 100000] [--rounds 15] [--no-save]

A fresh process per size opens bench/bench_query.py's synthetic snapshot (the real ONNX int8 query encoder), warms it
as a server does, runs one untimed search, then ``--rounds`` x 30 questions, each question searched twice in a row
(``Index.search(q, k=10)``): once with the lexical channel handed to a worker thread while the query is embedded
(query/lexical_channel.py), once worked out in line, the order alternating from one question to the next.  The switch
is the module's own size threshold (``BESIDE_FROM_ROWS``: 0 hands every search's channel over, a size above the
snapshot's none), so both sides run the same code.  Figures: each side's p50, and the median of the paired
differences (beside minus in line), which moves far less with a shared machine's load than two processes' p50s do
(issue 41).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import bench_env, figure, print_figures, save, setup_env  # noqa: E402

NEVER = 1 << 62  # a threshold above any snapshot: every channel in line


def worker(data: str, rounds: int) -> dict:
    from bench.bench_query import QUESTIONS
    from trustindex.query import lexical_channel
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    index = Index.open(data_dir=data, policy=Policy.from_dict({"dense": {"exact_below": 1 << 40}}))
    index.warm()
    index.search(QUESTIONS[0], k=10)
    times: dict[str, list[float]] = {"beside": [], "in line": []}
    sides = [("beside", 0), ("in line", NEVER)]
    loads = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for i, q in enumerate(QUESTIONS):
            for side, threshold in sides if (r * len(QUESTIONS) + i) % 2 else sides[::-1]:
                lexical_channel.BESIDE_FROM_ROWS = threshold
                t0 = time.perf_counter()
                index.search(q, k=10)
                times[side].append(time.perf_counter() - t0)
    beside, inline = np.array(times["beside"]), np.array(times["in line"])
    return {
        "n": index.data.n,
        "searches_a_side": int(beside.size),
        "beside_p50_ms": round(float(np.median(beside)) * 1000, 3),
        "in_line_p50_ms": round(float(np.median(inline)) * 1000, 3),
        "paired_difference_p50_ms": round(float(np.median(beside - inline)) * 1000, 3),
        "load_average_1m": [round(min(loads), 2), round(max(loads), 2)],
    }


def measure(data: Path, rounds: int) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(data), "--rounds", str(rounds)]
    out = subprocess.run(cmd, env=bench_env(), capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError(f"overlap worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def figures_of(r: dict) -> list[dict]:
    k, load = r["n"] // 1000, "-".join(str(x) for x in r["load_average_1m"])
    same = f"in line, same process, alternating by query (load {load})"
    return [
        figure(
            f"warm query p50 @ {k}k (exact), lexical channel beside the embedding",
            r["beside_p50_ms"],
            "ms",
            same,
            r["in_line_p50_ms"],
            r["beside_p50_ms"] / r["in_line_p50_ms"],
        ),
        figure(f"paired difference p50 (beside - in line) @ {k}k", r["paired_difference_p50_ms"], "ms"),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--key", default="query_overlap")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--worker", metavar="DATA_DIR", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    setup_env()
    if a.worker:
        print(json.dumps(worker(a.worker, a.rounds)))
        return 0
    from bench import synthetic

    runs, figures = [], []
    for n in a.sizes:
        data, _info = synthetic.build(n, ann=False)
        r = measure(data, a.rounds)
        print(f"  {n}: {r}", flush=True)
        runs.append(r)
        figures += figures_of(r)
    print_figures(a.key, figures)
    if not a.no_save:
        method = (
            f"bench/bench_query_overlap.py: per size a fresh process on bench/bench_query.py's synthetic snapshot, "
            f"{a.rounds} rounds x 30 questions, each searched with the lexical channel beside the embedding and in "
            f"line (query/lexical_channel.py BESIDE_FROM_ROWS 0 / above the size), the order alternating by question."
        )
        save(a.key, {"figures": figures, "runs": runs, "method": method})
    return 0


if __name__ == "__main__":
    sys.exit(main())
