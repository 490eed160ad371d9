"""CPU of one warm search with a cached query vector, and a byte-for-byte check of the responses.

    PYTHONPATH=. .venv/bin/python bench/bench_search_cpu.py --data DIR [--dump FILE | --check FILE]
        [--rounds 5] [--profile N]

The path a server runs for a repeated query: ``Index.open(data_dir, query_cache=1024).warm()``, every query
searched once (its vector then cached), then ``--rounds`` timed rounds over every case.  Prints wall and thread
CPU per search (thread CPU is what the GIL serialises, and moves less with the neighbours' load on a shared
machine than wall time).

Cases: every judged query of bench/eval (bench/eval_set.py) at k 10; the version queries with their targets,
with and without strict; a few with ``also`` phrasings and a few at k 50 (so every branch of a search runs).
``--dump FILE`` writes the cases and their responses (``json.dumps`` as the server writes them) to FILE;
``--check FILE`` searches FILE's own cases (so a later edit of bench/eval does not matter) and reports each
response that is not byte-identical.  ``--profile N`` prints cProfile's N most expensive functions (own and cumulative
time) over one round of the plain cases (a query at k 10, as bench/bench_serve.py sends).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import setup_env  # noqa: E402

QUERY_CACHE = 1024


def cases() -> list[dict]:
    from bench import eval_set

    judged = eval_set.load()
    out = [{"query": q.query, "k": 10} for q in judged]
    version = eval_set.EVAL_DIR / "version_queries.jsonl"
    for line in version.read_text(encoding="utf-8").splitlines() if version.is_file() else []:
        q = json.loads(line)
        out.append({"query": q["query"], "k": 10, "targets": q["targets"]})
        out.append({"query": q["query"], "k": 10, "targets": q["targets"], "strict": True})
    for q in judged[:5]:
        out.append({"query": q.query, "k": 10, "also": [q.query + " example", "how to " + q.query]})
    for q in judged[5:10]:
        out.append({"query": q.query, "k": 50})
    return out


def run_case(index, case: dict) -> dict:
    from trustindex.schemas.errors import QueryError

    try:
        return index.search(
            case["query"],
            k=case["k"],
            targets=case.get("targets"),
            strict=case.get("strict", False),
            also=case.get("also"),
        )
    except QueryError as e:
        return {"error": str(e)}


def is_plain(case: dict) -> bool:
    """A search as bench/bench_serve.py sends it: a query and k 10, nothing else."""
    return set(case) == {"query", "k"} and case["k"] == 10


def per_search(index, todo: list[dict], rounds: int) -> tuple[list[float], list[float]]:
    """Wall and thread CPU seconds per search, one figure a round."""
    walls, cpus = [], []
    for _ in range(rounds):
        w0, c0 = time.perf_counter(), time.thread_time()
        for c in todo:
            run_case(index, c)
        walls.append((time.perf_counter() - w0) / len(todo))
        cpus.append((time.thread_time() - c0) / len(todo))
    return walls, cpus


def ms(xs: list[float]) -> str:
    return f"{1e3 * min(xs):.2f} / {1e3 * sorted(xs)[len(xs) // 2]:.2f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, metavar="DIR", help="a built data directory")
    ap.add_argument("--dump", metavar="FILE", help="write the cases and their responses to FILE")
    ap.add_argument("--check", metavar="FILE", help="compare the responses with FILE's (its own cases)")
    ap.add_argument("--policy", metavar="FILE", help="a policy.toml (default: the built-in policy)")
    ap.add_argument("--cases", type=int, metavar="N", help="only the first N cases (with --dump)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds over every case")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's top N functions")
    a = ap.parse_args(argv)
    setup_env()
    from trustindex.query.index import Index

    ref = json.loads(Path(a.check).read_text(encoding="utf-8")) if a.check else None
    todo = ref["cases"] if ref else cases()[: a.cases]
    t0 = time.perf_counter()
    index = Index.open(data_dir=a.data, policy=a.policy, query_cache=QUERY_CACHE).warm()
    first = [json.dumps(run_case(index, c), ensure_ascii=False) for c in todo]  # every query vector now cached
    print(f"  open + warm + first round: {time.perf_counter() - t0:.1f} s; {len(todo)} cases", flush=True)
    if a.dump:
        Path(a.dump).write_text(json.dumps({"cases": todo, "responses": first}, ensure_ascii=False), encoding="utf-8")
        print(f"  wrote {a.dump}")
    if ref:
        bad = [j for j, (x, y) in enumerate(zip(first, ref["responses"], strict=True)) if x != y]
        for j in bad[:5]:
            print(f"  DIFFERS: case {j} {todo[j]}", flush=True)
        print(f"  check: {len(todo) - len(bad)} of {len(todo)} responses byte-identical", flush=True)
    plain = [c for c in todo if is_plain(c)]
    for name, some in (("every case", todo), ("plain k=10 cases", plain)):
        walls, cpus = per_search(index, some, a.rounds)
        print(
            f"  per search, {name} ({len(some)}), best / median of {a.rounds} rounds: wall {ms(walls)}, "
            f"thread CPU {ms(cpus)}",
            flush=True,
        )
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        for c in plain:
            run_case(index, c)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(a.profile)
        pstats.Stats(prof).sort_stats("cumtime").print_stats(a.profile)
    return 1 if ref and bad else 0


if __name__ == "__main__":
    sys.exit(main())
