"""The ``cited`` term (issue 43, query/page_links.py: the pages the question's best passages link to) chosen by
cross-validation on the dev halves of the three judged corpora, then read once on the test halves.

    PYTHONPATH=. .venv/bin/python bench/cv_cited_pages.py [--test] [--no-save]

The procedure is bench/cv_page_focus.py's (``run``): every row a policy overlay ranked by the search itself, nDCG@10
of the files a response names, folds by a hash of the query id, each response checked by query/explain.py.  The
grid was fixed from a screen of the dev halves alone (their 50 shown passages re-ordered with the term added).  The
rule (docs/architecture.md): kept only when Midnight's test half gains and no corpus's test half loses more than 0.01.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.cv_page_focus import SHIPPED, run  # noqa: E402


def _grid() -> dict[str, str]:
    rows = {SHIPPED: ""}
    for passages in (5, 10):
        for half in (0.25, 0.5, 1.0):
            for w in (0.05, 0.075, 0.1, 0.15):
                rows[f"cited {w} (passages {passages}, half {half})"] = (
                    f"cited_weight = {w}\ncited_passages = {passages}\ncited_half = {half}\n"
                )
    return {name: f"[fusion]\n{body}" if body else "" for name, body in rows.items()}


GRID = _grid()


def main(argv=None) -> int:
    return run(GRID, "cited pages", "cited_pages", argv)


if __name__ == "__main__":
    raise SystemExit(main())
