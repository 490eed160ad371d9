"""Issue 42's version questions (bench/eval/version_truth.jsonl) and the judged version queries, strict, per class.

    python bench/bench_version_truth.py --snapshot DIR [--snapshot DIR ...] [--label NAME ...] [--json OUT]

Each ``--snapshot`` is a real-docs snapshot directory (built from the complete midnight-docs repository, with its
Docusaurus config; with or without examples/components.toml); every question is asked ``--strict`` with its
target.  Per question: right first (a page judged 2 at rank 1), a wrong-version page anywhere in the hits, abstained
(and why), or, for a misspelt name, refused in one line naming the expected close match.  The same figures for
bench/eval/version_queries.jsonl (right first, wrong-version page in the top 5), the bench's own measure.
Run from a checkout whose code is the one to measure (PYTHONPATH puts another tree's package first).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import trustindex.query  # noqa: E402,F401  (first: a PYTHONPATH that puts another tree's package first keeps it)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_version_queries import VERSION_QUERIES, load, ranked_paths  # noqa: E402
from bench.common import ROOT, setup_env  # noqa: E402

QUESTIONS = ROOT / "bench" / "eval" / "version_truth.jsonl"


def ask(index, q: dict) -> dict:
    """One strict question: its outcome and the top pages."""
    from trustindex.schemas.errors import QueryError

    try:
        r = index.search(q["query"], k=10, targets=q["targets"], strict=True)
    except QueryError as e:
        line = str(e)
        want = q.get("refused_suggesting")
        ok = bool(want) and "\n" not in line and want in line.partition("did you mean")[2]
        return {"id": q["id"], "outcome": "refused", "right": ok, "wrong": False, "error": line, "top": []}
    if q.get("refused_suggesting"):
        return {"id": q["id"], "outcome": "answered (should refuse)", "right": False, "wrong": False, "top": []}
    paths = ranked_paths(r)
    wrong = [p for p in paths if p in set(q["wrong_version"])]
    right = bool(paths) and q["relevant"].get(paths[0], 0) >= 2
    outcome = f"abstained ({r['abstention_reason']})" if r["abstained"] and not paths else "answered"
    return {"id": q["id"], "outcome": outcome, "right": right, "wrong": bool(wrong), "wrong_pages": wrong,
            "top": paths[:3]}  # fmt: skip


def judged(index) -> dict:
    """bench/eval/version_queries.jsonl, strict: right first and a wrong-version page in the top 5."""
    first = wrong5 = abstained = 0
    qs = load(VERSION_QUERIES)
    from trustindex.schemas.errors import QueryError

    for q in qs:
        try:
            r = index.search(q["query"], k=10, targets=q["targets"], strict=True)
        except QueryError:
            abstained += 1
            continue
        paths = ranked_paths(r)
        first += bool(paths) and q["relevant"].get(paths[0], 0) >= 2
        wrong5 += any(p in set(q["wrong_version"]) for p in paths[:5])
        abstained += bool(r["abstained"])
    return {"queries": len(qs), "right_first": first, "wrong_in_top5": wrong5, "abstained_or_refused": abstained}


def measure(snapshot: Path) -> dict:
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    index = Index.open(snapshot, policy=Policy.default()).warm()
    questions = load(QUESTIONS)
    per = [ask(index, q) | {"class": q["class"]} for q in questions]
    by_class: dict[str, Counter] = {}
    for p in per:
        c = by_class.setdefault(p["class"], Counter())
        c["questions"] += 1
        c["right_first"] += p["right"]
        c["wrong_version"] += p["wrong"]
        c["abstained"] += p["outcome"].startswith("abstained")
    return {"per_question": per, "by_class": {k: dict(v) for k, v in by_class.items()}, "judged": judged(index)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", type=Path, action="append", required=True)
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    setup_env()
    print(f"code: {Path(trustindex.query.__file__).parent}")
    out = {}
    for i, snap in enumerate(args.snapshot):
        label = args.label[i] if i < len(args.label) else snap.name
        res = out[label] = measure(snap)
        total = Counter()
        for c in res["by_class"].values():
            total.update(c)
        print(f"== {label}: right first {total['right_first']}/{total['questions']}, wrong-version "
              f"{total['wrong_version']}, abstained {total['abstained']}; judged {res['judged']}")  # fmt: skip
        for cls, c in res["by_class"].items():
            print(f"   {cls}: {dict(c)}")
        for p in res["per_question"]:
            mark = "ok " if p["right"] else ("WRONG" if p["wrong"] else "-- ")
            print(f"   {mark} {p['id']} {p['outcome']}: {p.get('error') or p['top'][:2]}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
