"""The page focus and problem-section terms (issue 43, query/page_focus.py) chosen by cross-validation on the dev
halves of the three judged corpora, then read once on the test halves.

    PYTHONPATH=. .venv/bin/python bench/cv_page_focus.py [--test] [--no-save]

Every row of ``GRID`` is a policy overlay ranked by the search itself over each corpus's snapshot
(bench/retrieval_corpora.py; ``Index.reload_policy``), nDCG@10 of the files a response names (bench_retrieval's
reading), and every response is checked by query/explain.py.  The dev queries of all corpora are pooled and split
into ``FOLDS`` folds by a hash of the query id (never by text, judgments or results); each fold's queries are scored
by the row the other folds rank best (the shipped row wins ties).  ``--test`` then reads the test halves for the
shipped row and the row chosen on all dev queries, once.  The rule (docs/architecture.md): kept only when
Midnight's test half gains and no corpus's test half loses more than 0.01.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_quality import ndcg_at_10  # noqa: E402
from bench.bench_retrieval import SEARCH_K, response_files  # noqa: E402
from bench.common import print_figures, save, setup_env  # noqa: E402
from bench.retrieval_corpora import open_judged  # noqa: E402

FOLDS = 5
SHIPPED = "as shipped"


def _grid() -> dict[str, str]:
    rows = {SHIPPED: ""}
    for share in (0.4, 0.5, 0.6, 0.7):
        for w in (0.05, 0.1, 0.2, 0.3):
            rows[f"focus {w} (share {share})"] = f"page_focus_weight = {w}\nfocus_share = {share}\n"
    for p in (0.03, 0.05, 0.1):
        rows[f"problem {p}"] = f"problem_section_weight = {p}\n"
        for share in (0.5, 0.6):
            for w in (0.1, 0.2):
                rows[f"focus {w} (share {share}) + problem {p}"] = (
                    f"page_focus_weight = {w}\nfocus_share = {share}\nproblem_section_weight = {p}\n"
                )
    return {name: f"[fusion]\n{body}" if body else "" for name, body in rows.items()}


GRID = _grid()


def fold(query_id: str) -> int:
    return int(hashlib.sha256(query_id.encode()).hexdigest(), 16) % FOLDS


def scores(index, queries, source: str) -> tuple[dict[str, float], int]:
    """Per query its nDCG@10, and how many responses query/explain.py found a problem in."""
    from trustindex.query.explain import check

    out, problems = {}, 0
    for q in queries:
        r = index.search(q.query, k=SEARCH_K)
        problems += bool(check(r, index.policy))
        out[q.id] = ndcg_at_10(response_files(r, True, source), q.relevant)
    return out, problems


def cross_validated(table: dict[str, dict[str, dict[str, float]]]) -> tuple[dict[str, float], list[str]]:
    """Per corpus the mean nDCG@10 of its dev queries, each scored by the row its fold's complement ranks best."""
    pooled = {row: [(c, q, v) for c, per in by.items() for q, v in per.items()] for row, by in table.items()}
    held: dict[str, dict[str, float]] = {c: {} for c in next(iter(table.values()))}
    chosen = []
    for f in range(FOLDS):
        best = max(pooled, key=lambda row: (np.mean([v for _, q, v in pooled[row] if fold(q) != f]), row == SHIPPED))
        chosen.append(best)
        for c, q, v in pooled[best]:
            if fold(q) == f:
                held[c][q] = v
    return {c: float(np.mean(list(v.values()))) for c, v in held.items()}, chosen


def run(grid: dict[str, str], label: str, key: str, argv=None) -> int:
    """Rank every row of ``grid`` on the dev halves, cross-validate, and with ``--test`` read the test halves once
    for the shipped row and the row chosen on all dev queries; saved in bench/results.json under ``key``."""
    ap = argparse.ArgumentParser(description=label)
    ap.add_argument("--test", action="store_true", help="read the test halves once for the chosen row")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    opened = open_judged([], label)
    dev: dict[str, dict[str, dict[str, float]]] = {}
    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        policy = Path(tmp) / "row.toml"

        def ranked(row: str, split: str) -> dict[str, dict[str, float]]:
            nonlocal problems
            policy.write_text(grid[row])
            out = {}
            for name, (corpus, index, qs) in opened.items():
                index.reload_policy(str(policy))
                out[name], bad = scores(index, [q for q in qs if q.split == split], corpus.source)
                problems += bad
            return out

        for row in grid:
            dev[row] = ranked(row, "dev")
            print(f"  {row}: " + ", ".join(f"{n} {np.mean(list(v.values())):.4f}" for n, v in dev[row].items()))
        cv, chosen = cross_validated(dev)
        pooled = {row: np.mean([v for per in by.values() for v in per.values()]) for row, by in dev.items()}
        pick = max(pooled, key=lambda row: (pooled[row], row == SHIPPED))
        test = {row: ranked(row, "test") for row in dict.fromkeys([SHIPPED, pick])} if a.test else {}
    mean = lambda per: {n: round(float(np.mean(list(v.values()))), 4) for n, v in per.items()}  # noqa: E731
    result = {
        "dev": {row: mean(by) for row, by in dev.items()},
        "cross_validated": {n: round(v, 4) for n, v in cv.items()},
        "folds_chose": chosen,
        "chosen": pick,
        "test": {row: mean(by) for row, by in test.items()},
        "explain_problems": problems,
        "snapshots": {n: ix.snapshot_id for n, (_, ix, _) in opened.items()},
        "figures": [],
    }
    print_figures(label, [])
    print(f"cross-validated dev: {result['cross_validated']} (folds chose {chosen})")
    print(f"shipped dev: {result['dev'][SHIPPED]}; chosen on all dev: {pick} {result['dev'][pick]}")
    for row, m in result["test"].items():
        print(f"test, {row}: {m}")
    print(f"responses query/explain.py found a problem in: {problems}")
    if not a.no_save:
        save(key, result)
    return 0


def main(argv=None) -> int:
    return run(GRID, "page focus", "page_focus", argv)


if __name__ == "__main__":
    raise SystemExit(main())
