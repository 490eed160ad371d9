"""One hit per page against one hit per passage, read as a reader of the hit list reads it (issue 43).

    PYTHONPATH=. .venv/bin/python bench/bench_page_hits.py [--data CORPUS=DIR ...] [--no-save]

bench_retrieval reads a response as the files it names: 50 hits, each hit's file then its ``also_in`` copies, the
first 10 distinct files.  A person, an assistant through MCP (``search``'s k is 5) or anyone else's benchmark reads
the first k hits instead, and when several of them are passages of one page, that page takes several of the k places.
This bench reads each judged corpus (bench/retrieval_corpora.py) both ways under the built-in policy with
``fusion.one_hit_per_page`` off and on (``Index.reload_policy``, same snapshot, same process):

- ``files@50``: bench_retrieval's reading (nDCG@10 of the files of 50 hits, copies included);
- ``hits@10`` / ``hits@5``: nDCG@10 / nDCG@5 of the first 10 / 5 hits' own files in order, a page already named
  earlier gains nothing again (it holds a place, as it does on the reader's screen); ``mrr@5`` the same hits' MRR;
- ``pages@10`` / ``pages@5``: the distinct pages those hits name, on average.

The choice was made on the Midnight dev half (docs/architecture.md); the test halves are read for the report.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_quality import ndcg_at_10, reciprocal_rank  # noqa: E402
from bench.bench_retrieval import SEARCH_K, _file, response_files  # noqa: E402
from bench.common import policy_overlay, report_section  # noqa: E402
from bench.retrieval_corpora import judged_bench_args, open_judged  # noqa: E402

POLICIES = {"one hit per passage": "[fusion]\none_hit_per_page = false\n", "one hit per page": ""}
READINGS = ("files@50", "hits@10", "hits@5", "mrr@5", "pages@10", "pages@5")


def as_read(files: list[str]) -> list[str]:
    """Hit files in order, a repeat of an earlier one replaced by a file no judgment names (it keeps its place)."""
    seen: set[str] = set()
    out = []
    for i, f in enumerate(files):
        out.append(f if f not in seen else f"(page already named, hit {i + 1})")
        seen.add(f)
    return out


def readings(index, q, source: str) -> dict[str, float]:
    """Every reading of READINGS for one judged question."""
    wide = index.search(q.query, k=SEARCH_K)
    hits = [_file(h["provenance"], source) for h in index.search(q.query, k=10)["hits"]]
    return {
        "files@50": ndcg_at_10(response_files(wide, True, source), q.relevant),
        "hits@10": ndcg_at_10(as_read(hits), q.relevant),
        "hits@5": ndcg_at_10(as_read(hits[:5]), q.relevant, k=5),
        "mrr@5": reciprocal_rank(as_read(hits[:5]), q.relevant, k=5),
        "pages@10": float(len(set(hits))),
        "pages@5": float(len(set(hits[:5]))),
    }


def section(table: dict) -> list[str]:
    lines = [
        "## One hit per page, read as a reader of the hits reads it (issue 43)",
        "",
        "`bench/bench_page_hits.py`: the built-in policy with `fusion.one_hit_per_page` off and on, same snapshot",
        "and process. `files@50` is bench_retrieval's reading (the files of 50 hits, copies included); `hits@10` /",
        "`hits@5` read the first 10 / 5 hits' own files in order, a page named again gaining nothing (nDCG@10 /",
        "nDCG@5); `mrr@5` the first 5 hits' MRR; `pages@k` the distinct pages among the first k hits, on average.",
        "",
        "| corpus | split | hits | " + " | ".join(READINGS) + " |",
        "|---|---|---|" + "---|" * len(READINGS),
    ]
    for corpus, splits in table.items():
        for split, by_policy in splits.items():
            for policy, cells in by_policy.items():
                row = " | ".join(f"{cells[r]:.2f}" if r.startswith("pages") else f"{cells[r]:.4f}" for r in READINGS)
                lines.append(f"| {corpus} | {split} ({cells['n']}) | {policy} | {row} |")
    return lines


def main(argv=None) -> int:
    a = judged_bench_args(__doc__.splitlines()[0], argv)
    t0 = time.perf_counter()
    table: dict = {}
    snapshots = {}
    for name, (corpus, index, qs) in open_judged(a.data, "page hits").items():
        snapshots[name] = index.snapshot_id
        for split in ("dev", "test"):
            for policy_name, overlay in POLICIES.items():
                index.reload_policy(policy_overlay(overlay, policy_name))
                rows = [readings(index, q, corpus.source) for q in qs if q.split == split]
                cells = {r: round(float(np.mean([x[r] for x in rows])), 4) for r in READINGS} | {"n": len(rows)}
                table.setdefault(name, {}).setdefault(split, {})[policy_name] = cells
                print(f"  {name} {split} {policy_name}: {cells}", flush=True)
    result = {
        "table": table,
        "snapshots": snapshots,
        "wall_s": round(time.perf_counter() - t0, 1),
        "figures": [],
        "section": section(table),
        "method": "bench/bench_page_hits.py: the judged corpora's questions searched under the built-in policy with "
        "fusion.one_hit_per_page off and on, read as files of 50 hits and as the first 10 / 5 hits.",
    }
    report_section("page_hits", "page hits", result, saved=not a.no_save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
