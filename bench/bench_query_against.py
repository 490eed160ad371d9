"""Warm query latency of this tree against another commit's, interleaved in one run (a refactor's "not slower").

    PYTHONPATH=. .venv/bin/python bench/bench_query_against.py REV [--sizes 10000 100000] [--rounds 3] [--reps 5]
        [--key NAME] [--label TEXT]

Both sides run bench/bench_query.py's warm worker (each its own tree's: open, ``Index.warm()``, one untimed search,
then 30 questions x ``--reps`` timed ``Index.search(q, k=10)``, the query embedding included, then the query embedding
alone) in a fresh process on the same synthetic snapshot (bench/synthetic.py, built once by this tree). ``REV``'s side
is its ``git archive`` laid out as the installed package (``trustindex.layout.link_tree``, as
tests/query/test_response_identity.py does) and put first on its process's PYTHONPATH; each side's process is checked
to import its own tree. Rounds alternate which side goes first; the figures are the medians over rounds of each side's
p50 and p99, and of each run's p50 over its own query embedding alone (issue 41's measure), ratio = this tree / REV.
Saved under ``--key`` in bench/results.json (docs/benchmarks.md re-rendered) unless ``--no-save``.

``--measure cpu`` runs each tree's bench/bench_search_cpu.py instead (one round over its 776 cases with the query
vector cached, after a warm-up round): the median thread CPU per search, which moves far less than wall time with the
neighbours' load on a shared machine (the GIL serialises it, so it is what a search costs a server).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ROOT, figure, machine, print_figures, save, setup_env  # noqa: E402

WHICH = "import sys, trustindex.query.reader as r; print(r.__file__)"
# bench/bench_search_cpu.py's line for every case: "... best / median of N rounds: wall A / B ms, thread CPU C / D ms"
CPU_LINE = re.compile(r"every case .*wall ([\d.]+) / ([\d.]+) ms, thread CPU ([\d.]+) / ([\d.]+) ms")


def base_tree(rev: str, tmp: Path) -> tuple[Path, Path]:
    """``rev``'s files under ``tmp/tree`` and its package layout under ``tmp/pkg``: (tree, pkg)."""
    from trustindex.layout import link_tree

    tree, archive = tmp / "tree", tmp / "base.tar"
    tree.mkdir()
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), rev], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    link_tree(tree, tmp / "pkg")
    return tree, tmp / "pkg"


def side_env(pkg: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pkg is not None:
        env["PYTHONPATH"] = str(pkg)
    return env


def check_side(tree: Path, pkg: Path | None) -> None:
    """The side's process imports its own tree's query code (the editable install must not answer for REV)."""
    code = f"import sys; sys.path.insert(0, {str(tree)!r}); {WHICH}"
    out = subprocess.run(
        [sys.executable, "-c", code], env=side_env(pkg), cwd=tree, capture_output=True, text=True, check=True
    )
    where = Path(out.stdout.strip()).resolve()
    if not where.is_relative_to(tree.resolve()):
        raise SystemExit(f"the side of {tree} imported {where}, not its own tree")


def run_worker(tree: Path, pkg: Path | None, data: Path, reps: int) -> dict:
    cmd = [sys.executable, str(tree / "bench" / "bench_query.py"), "--worker", str(data), "--reps", str(reps)]
    out = subprocess.run(cmd, env=side_env(pkg), cwd=tree, capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError(f"worker of {tree} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_search_cpu(tree: Path, pkg: Path | None, data: Path) -> dict:
    """One round of the tree's bench/bench_search_cpu.py: wall and thread CPU per search (ms)."""
    cmd = [sys.executable, str(tree / "bench" / "bench_search_cpu.py"), "--data", str(data), "--rounds", "1"]
    out = subprocess.run(cmd, env=side_env(pkg), cwd=tree, capture_output=True, text=True, timeout=1800)
    found = CPU_LINE.search(out.stdout)
    if out.returncode or found is None:
        raise RuntimeError(f"bench_search_cpu of {tree} failed: {out.stdout[-1000:]} {out.stderr[-2000:]}")
    return {"n": int(data.name.split("-n")[1].split("-")[0]), "wall_ms": float(found[2]), "cpu_ms": float(found[4])}


def measure(sides: dict[str, tuple[Path, Path | None]], data: Path, rounds: int, reps: int, cpu: bool) -> list[dict]:
    """Every side once a round, the order alternating; each run with its side, round and the 1-minute load."""
    runs = []
    names = list(sides)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            tree, pkg = sides[name]
            got = run_search_cpu(tree, pkg, data) if cpu else run_worker(tree, pkg, data, reps)
            runs.append({**got, "side": name, "round": r, "load_average_1m": round(os.getloadavg()[0], 2)})
            shown = {k: v for k, v in got.items() if k in ("p50_ms", "p99_ms", "wall_ms", "cpu_ms")}
            print(f"    round {r} {name}: {shown}", flush=True)
    return runs


def cpu_figures_of(runs: list[dict], n: int, rev: str, label: str) -> list[dict]:
    def median(side: str, key: str) -> float:
        return float(np.median([r[key] for r in runs if r["side"] == side and r["n"] == n]))

    ours, ref = median("this tree", "cpu_ms"), median(rev, "cpu_ms")
    name = (
        f"thread CPU per warm search, query vector cached @ {n // 1000}k (exact), {label}, median of interleaved runs"
    )
    return [figure(name, ours, "ms", f"the code before ({rev}), same runs", ref, ours / ref)]


def figures_of(runs: list[dict], n: int, rev: str, label: str) -> list[dict]:
    k = n // 1000

    def median(side: str, key: str) -> float:
        return float(np.median([r[key] for r in runs if r["side"] == side and r["n"] == n]))

    out = []
    for key, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
        ours, ref = median("this tree", key), median(rev, key)
        out.append(
            figure(
                f"warm query {name} @ {k}k (exact), {label}, median of interleaved runs",
                ours,
                "ms",
                f"the code before ({rev}), same runs",
                ref,
                ours / ref,
            )
        )
    out.append(figure(f"query embedding alone p50 @ {k}k, same runs", median("this tree", "embed_p50_ms"), "ms"))

    def over_embedding(side: str) -> float:  # each run's p50 over its own embedding alone (issue 41), median over runs
        return float(np.median([r["p50_ms"] / r["embed_p50_ms"] for r in runs if r["side"] == side and r["n"] == n]))

    ours, ref = over_embedding("this tree"), over_embedding(rev)
    name = f"warm query p50 / the query embedding alone @ {k}k (exact), {label}, median of interleaved runs"
    out.append(figure(name, ours, "×", f"the code before ({rev}), same runs", ref, ours / ref))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the commit to measure against (e.g. the change's base)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--key", default="query_against", help="the key of bench/results.json the figures go under")
    ap.add_argument("--label", default="this tree", help="what the figures call this tree's side")
    ap.add_argument("--measure", choices=("latency", "cpu"), default="latency", help="see the module's docstring")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    from bench import synthetic

    rev = subprocess.run(["git", "rev-parse", "--short", a.rev], cwd=ROOT, capture_output=True, text=True, check=True)
    short = rev.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-against-") as tmp:
        tree, pkg = base_tree(a.rev, Path(tmp))
        sides: dict[str, tuple[Path, Path | None]] = {"this tree": (ROOT, None), short: (tree, pkg)}
        for side_tree, side_pkg in sides.values():
            check_side(side_tree, side_pkg)
        runs, figures = [], []
        for n in a.sizes:
            data, _info = synthetic.build(n, ann=False)
            print(f"  {n} passages: {data}", flush=True)
            now = measure(sides, data, a.rounds, a.reps, a.measure == "cpu")
            runs += now
            figures += (cpu_figures_of if a.measure == "cpu" else figures_of)(now, n, short, a.label)
    print_figures(a.key, figures)
    if not a.no_save:
        what = (
            "bench/bench_search_cpu.py (one round of its 776 cases, query vector cached) run"
            if a.measure == "cpu"
            else f"bench/bench_query.py's warm worker (30 questions x {a.reps} timed searches) run"
        )
        method = (
            f"bench/bench_query_against.py {a.rev} --measure {a.measure}: {what} from two trees ({a.label}, and "
            f"{short} laid out by trustindex.layout.link_tree) on the same synthetic snapshots, {len(a.sizes)} sizes "
            f"x {a.rounds} rounds alternating which side goes first; medians over rounds reported; each run's "
            f"figures and 1-minute load in 'runs'."
        )
        save(a.key, {"figures": figures, "runs": runs, "machine": machine(), "method": method})
    return 0


if __name__ == "__main__":
    sys.exit(main())
