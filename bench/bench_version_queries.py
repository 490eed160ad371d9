"""The judged version queries over the real docs: strict, targeted, untargeted; and legacy demotion.

    python bench/bench_version_queries.py [--work DIR] [--no-save]

Runs over the live snapshot that bench/bench_real_repos.py built under ``--work`` (default its own).

1. bench/eval/version_queries.jsonl (each query with its target, right pages and wrong-version pages), in three
   modes: the target with ``strict``, the target without it, no target.  Per mode: queries with a wrong-version
   page in the top 5 (goal with strict: none), right page first (a page judged 2 at rank 1; goal with strict:
   >= 75%), abstentions, nDCG@10 over the distinct pages of the top 10 hits.
2. Every judged query of bench/eval/*.jsonl without its target, with the policy as shipped and with
   ``deprecation.legacy_docs_multiplier = 1.0`` (no demotion): nDCG@10, and for every judged current page that
   has a legacy copy (the legacy page's ``superseded_by``) and where either is in the top 10, whether the current
   page ranks above its copy.
Paths are the docs repository's; a hit from another source counts under ``<source>:<path>`` (never judged).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_quality import ndcg_at_10  # noqa: E402
from bench.bench_real_repos import REAL_WORK  # noqa: E402
from bench.common import ROOT, figure, save, setup_env  # noqa: E402

EVAL = ROOT / "bench" / "eval"
VERSION_QUERIES = EVAL / "version_queries.jsonl"
DOCS_SOURCE = "midnight-docs"
MODES = ("strict", "target", "untargeted")


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ranked_paths(response: dict) -> list[str]:
    out = []
    for h in response["hits"]:
        p = h["provenance"]
        out.append(p["path"] if p["source"] == DOCS_SOURCE else f"{p['source']}:{p['path']}")
    return list(dict.fromkeys(out))


def version_modes(index, queries: list[dict]) -> dict[str, dict]:
    from trustindex.schemas.errors import QueryError

    out = {}
    for mode in MODES:
        wrong5, first, abstained, nd, per = 0, 0, 0, [], []
        for q in queries:
            targets = q["targets"] if mode != "untargeted" else None
            try:
                r = index.search(q["query"], k=10, targets=targets, strict=mode == "strict")
            except QueryError as e:  # a component the snapshot has never seen: no answer, counted as abstained
                r = {"hits": [], "abstained": True, "error": str(e)}
            paths = ranked_paths(r)
            bad = [p for p in paths[:5] if p in set(q["wrong_version"])]
            right = bool(paths) and q["relevant"].get(paths[0], 0) >= 2
            wrong5 += bool(bad)
            first += right
            abstained += bool(r["abstained"])
            nd.append(ndcg_at_10(paths, q["relevant"]))
            per.append({"id": q["id"], "top": paths[:3], "wrong_in_top5": bad, "right_first": right})
        n = len(queries)
        out[mode] = {
            "queries": n,
            "wrong_version_in_top5": wrong5,
            "right_first": first / n,
            "abstained": abstained,
            "ndcg10": sum(nd) / n,
            "per_query": per,
        }
    return out


def legacy_pairs(index) -> dict[str, str]:
    """Current page → its legacy copy, from the legacy pages' deprecation reasons."""
    from trustindex.schemas.docs_versions import LEGACY_MARKER, superseded_by

    d = index.data
    out = {}
    for doc_id, rows in d.doc_deprecations.items():
        for r in rows:
            newer = superseded_by(r.reason) if r.marker == LEGACY_MARKER else None
            doc = d.docs.get(doc_id)
            if newer and doc and doc["source"] == DOCS_SOURCE:
                out[newer] = doc["path"]
    return out


def demotion(index, queries: list[dict], pairs: dict[str, str]) -> dict:
    nd, above, compared = [], 0, 0
    for q in queries:
        paths = ranked_paths(index.search(q["query"], k=10))
        nd.append(ndcg_at_10(paths, q["relevant"]))
        rank = {p: i for i, p in enumerate(paths)}
        for cur in q["relevant"]:
            legacy = pairs.get(cur)
            if legacy and (cur in rank or legacy in rank):
                compared += 1
                above += rank.get(cur, 99) < rank.get(legacy, 99)
    return {"queries": len(queries), "ndcg10": sum(nd) / len(nd), "current_above_legacy": above, "pairs": compared}


def section(modes: dict, demo: dict, took: float, over: str) -> list[str]:
    n = modes["strict"]["queries"]
    lines = [
        "## Judged version queries on the real docs",
        "",
        f"`bench/bench_version_queries.py` over {over} ({took:.0f} s): the {n} queries of",
        "`bench/eval/version_queries.jsonl`, each with its target, right page and wrong-version pages (a target",
        "naming a component the snapshot never saw answers nothing: counted as abstained).",
        "",
        "| mode | wrong-version page in a top 5 | right page first | abstained | nDCG@10 |",
        "|---|---|---|---|---|",
    ]
    for mode, label in zip(MODES, ("target, `--strict`", "target", "no target"), strict=True):
        m = modes[mode]
        lines.append(
            f"| {label} | {m['wrong_version_in_top5']} of {n} | {100 * m['right_first']:.0f}% | {m['abstained']} "
            f"| {m['ndcg10']:.3f} |"
        )
    d, u = demo["default"], demo["no_demotion"]
    lines += [
        "",
        f"Untargeted, all {d['queries']} judged queries of `bench/eval/*.jsonl` (targets dropped): nDCG@10",
        f"{d['ndcg10']:.3f} with legacy pages demoted (policy default) against {u['ndcg10']:.3f} without",
        "(`deprecation.legacy_docs_multiplier = 1.0`); a judged current page ranks above its legacy copy in",
        f"{d['current_above_legacy']} of {d['pairs']} pairs where either is in the top 10 (without demotion:",
        f"{u['current_above_legacy']} of {u['pairs']}).",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--work",
        type=Path,
        default=REAL_WORK,
        help="a bench work folder holding data/ (default: bench_real_repos.py's; or bench_retrieval.py's for "
        "--corpus midnight-repo, the docs repository alone)",
    )
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    setup_env()
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    t0 = time.perf_counter()
    index = Index.open(data_dir=args.work / "data", policy=Policy.default()).warm()
    queries = load(VERSION_QUERIES)
    modes = version_modes(index, queries)
    # Off-topic queries (bench/eval/off_topic.jsonl) judge no page: nothing to demote or rank there.
    judged = [q for f in sorted(EVAL.glob("*.jsonl")) for q in load(f) if q.get("relevant")]
    pairs = legacy_pairs(index)
    demo = {"default": demotion(index, judged, pairs)}
    index.reload_policy(Policy.from_dict({"deprecation": {"legacy_docs_multiplier": 1.0}}))
    demo["no_demotion"] = demotion(index, judged, pairs)
    took = time.perf_counter() - t0
    sources = ", ".join(sorted(index.data.manifest.source_rows()))
    lines = section(modes, demo, took, f"snapshot {index.snapshot_id} ({sources})")
    print("\n".join(lines))
    for m in MODES:
        for p in modes[m]["per_query"]:
            if p["wrong_in_top5"] or not p["right_first"]:
                print(f"  {m} {p['id']}: top {p['top']} wrong {p['wrong_in_top5']}")
    if not args.no_save:
        s = modes["strict"]
        figures = [
            figure("strict: queries with a wrong-version page in top 5", s["wrong_version_in_top5"], "queries",
                   goal="0", met=s["wrong_version_in_top5"] == 0),
            figure("strict: right page first", 100 * s["right_first"], "%", goal=">= 75%",
                   met=s["right_first"] >= 0.75),
        ]  # fmt: skip
        summary = {m: {k: v for k, v in r.items() if k != "per_query"} for m, r in modes.items()}
        result = {"figures": figures, "section": lines, "modes": summary, "demotion": demo}
        save("version_queries", result | {"method": "judged version queries over the real-docs snapshot"})


if __name__ == "__main__":
    main()
