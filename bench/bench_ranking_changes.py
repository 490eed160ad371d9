"""Ranking changes of issue 43, each measured on both judged corpora in one run (dev decides, test confirms once).

    PYTHONPATH=. .venv/bin/python bench/bench_ranking_changes.py [--data CORPUS=DIR ...] [--no-save]

Every row is a policy overlay on the built-in policy, ranked over the same two snapshots (bench/retrieval_corpora.py:
the real Midnight docs and React's docs), one index per corpus with the policy swapped (``Index.reload_policy``).
A row's dev nDCG@10 is what decided it; test is read only for the rows that were kept (``kept``), as
docs/architecture.md's rule says ("the dev half decides, the test half must agree").  A change that helps one
corpus and costs the other more than 0.01 is not kept.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_quality import ndcg_at_10  # noqa: E402
from bench.bench_retrieval import trustindex_files  # noqa: E402
from bench.common import policy_overlay, report_section  # noqa: E402
from bench.retrieval_corpora import judged_bench_args, open_judged  # noqa: E402

# (what changed, the policy overlay, kept).  The built-in policy is the row "as shipped".
ROWS: list[tuple[str, str, bool]] = [
    ("as shipped", "", True),
    ("freshness floor 0.6 (before issue 43)", "[freshness]\nfloor = 0.6\n", False),
    ("freshness floor 0.8", "[freshness]\nfloor = 0.8\n", False),
    ("freshness floor 0.95", "[freshness]\nfloor = 0.95\n", False),
    ("freshness floor 1.0 (no freshness)", "[freshness]\nfloor = 1.0\n", False),
    ("freshness half-life 4 years (floor 0.6)", "[freshness]\nfloor = 0.6\nhalf_life_days = 1460\n", False),
    ("PRF: Rocchio 0.1, 3 passages", "[feedback]\npassages = 3\ndense_share = 0.1\nlexical_share = 0\n", False),
    ("PRF: Rocchio 0.3, 10 passages", "[feedback]\npassages = 10\ndense_share = 0.3\nlexical_share = 0\n", False),
    ("PRF: RM3 0.1, 10 passages, 10 terms", "[feedback]\npassages = 10\ndense_share = 0\nlexical_share = 0.1\n", False),
    ("PRF: RM3 0.3, 10 passages, 10 terms", "[feedback]\npassages = 10\ndense_share = 0\nlexical_share = 0.3\n", False),
    ("PRF: both 0.1, 10 passages", "[feedback]\npassages = 10\ndense_share = 0.1\nlexical_share = 0.1\n", False),
    # issue 43 item 1's terms at the Midnight dev half's best shapes, fixed before React was read (item 4: a second
    # corpus decides again); item 2a's rule switched off
    ("site's links: authority 0.075 (k 3)", "[fusion]\nauthority_weight = 0.075\nauthority_k = 3\n", False),
    ("site's links: anchor 0.05 (half 2)", "[fusion]\nanchor_weight = 0.05\nanchor_half = 2\n", False),
    (
        "site's links: authority 0.075 + anchor 0.03 (half 8)",
        "[fusion]\nauthority_weight = 0.075\nauthority_k = 3\nanchor_weight = 0.03\nanchor_half = 8\n",
        False,
    ),
    ("unrouted pages not demoted (unrouted_yields = false)", "[fusion]\nunrouted_yields = false\n", False),
    # how much of a page is about the question, and problem sections (query/page_focus.py): the rows the three dev
    # halves' cross-validation chose between; the test halves were read once for the last (docs/benchmarks.md)
    ("page_focus 0.2 (share 0.6)", "[fusion]\npage_focus_weight = 0.2\nfocus_share = 0.6\n", False),
    ("problem_section 0.05", "[fusion]\nproblem_section_weight = 0.05\n", False),
    (
        "page_focus 0.2 (share 0.6) + problem_section 0.05",
        "[fusion]\npage_focus_weight = 0.2\nfocus_share = 0.6\nproblem_section_weight = 0.05\n",
        False,
    ),
]


def ndcg(index, queries, source: str) -> float:
    return float(np.mean([ndcg_at_10(trustindex_files(index, q.query, source=source), q.relevant) for q in queries]))


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def section(table: list[dict], names: list[str]) -> list[str]:
    head = " | ".join(f"{n} dev | {n} test" for n in names)
    lines = [
        "## Ranking changes of issue 43, on both judged corpora",
        "",
        "`bench/bench_ranking_changes.py`: each row a policy overlay on the built-in policy, over the two corpora's",
        "snapshots in one run; nDCG@10 of the files a response names (bench_retrieval's reading). Dev decided; test",
        "was read for the kept rows only. Pseudo-relevance feedback is `[feedback]` (query/feedback.py, off).",
        "",
        f"| change | {head} | kept |",
        "|---|" + "---|" * (2 * len(names)) + "---|",
    ]
    for row in table:
        cells = " | ".join(f"{row[n]['dev']:.4f} | {_cell(row[n].get('test'))}" for n in names)
        lines.append(f"| {row['change']} | {cells} | {'kept' if row['kept'] else '-'} |")
    return lines


def main(argv=None) -> int:
    a = judged_bench_args(__doc__.splitlines()[0], argv)
    opened = open_judged(a.data, "ranking changes")
    t0 = time.perf_counter()
    table = []
    for i, (change, overlay, kept) in enumerate(ROWS):
        policy = policy_overlay(overlay, f"row {i}: {change}")
        row: dict = {"change": change, "kept": kept}
        for name, (corpus, index, qs) in opened.items():
            index.reload_policy(policy)
            row[name] = {"dev": ndcg(index, [q for q in qs if q.split == "dev"], corpus.source)}
            if kept:
                row[name]["test"] = ndcg(index, [q for q in qs if q.split == "test"], corpus.source)
        print(f"  {change}: " + ", ".join(f"{n} {v}" for n, v in row.items() if n in opened), flush=True)
        table.append(row)
    names = list(opened)
    result = {
        "table": table,
        "snapshots": {n: ix.snapshot_id for n, (_, ix, _) in opened.items()},
        "wall_s": time.perf_counter() - t0,
        "figures": [],
        "section": section(table, names),
        "method": "bench/bench_ranking_changes.py: policy overlays over both judged corpora (bench/eval and "
        "bench/eval/react), one snapshot and index per corpus, the policy swapped between rows; nDCG@10 as "
        "bench_retrieval reads a response.",
    }
    report_section("ranking_changes", "ranking changes", result, saved=not a.no_save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
