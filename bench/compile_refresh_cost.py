"""What compile checks add to a refresh of the whole real docs, in one run (docs/benchmarks.md, "Compile checks").

    PYTHONPATH=. .venv/bin/python bench/compile_refresh_cost.py COMPACTC [COMPACTC ...] [--without]

The full real-docs corpus (bench/bench_refresh.py ``make_corpus``) is built with ``trustindex refresh`` in a fresh
process with a ``compilers.toml`` naming the given compilers; then refreshed again unchanged (it must compile
nothing).  ``--without``: the same build on a second, empty data directory without compilers, in the same run,
for the whole-build comparison.  Prints the flow's seconds, the compile stage's, the run's compile record, and
the judged version queries of the Compact components (bench/eval/version_queries.jsonl) on each build: with
``--strict``, how many hits a compiler of the target rejects (must be none) and how many are ``satisfies
(compiled)``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_refresh import make_corpus  # noqa: E402
from bench.refresh_full import cli_refresh  # noqa: E402


def _record(data: Path) -> dict:
    from trustindex.warehouse.runs import RUN_RECORD

    return json.loads((data / RUN_RECORD).read_text())


ROOT = Path(__file__).resolve().parents[1]
COMPACT = ("compact-language", "compact-compiler")


def version_check(data: Path) -> dict:
    import bench.bench_version_queries as bvq
    from trustindex.query.index import Index

    bvq.DOCS_SOURCE = "docs"  # make_corpus names the source "docs": ranked paths are then the bare paths
    load, version_modes = bvq.load, bvq.version_modes

    queries = [q for q in load(ROOT / "bench" / "eval" / "version_queries.jsonl") if set(q["targets"]) <= set(COMPACT)]
    index = Index.open(data_dir=data)
    modes = version_modes(index, queries)
    rejected = compiled = 0
    for q in queries:
        for h in index.search(q["query"], k=10, targets=q["targets"], strict=True)["hits"]:
            for t in h["factors"]["version_match"]["evidence"].get("targets", []):
                rejected += t["origin"] == "compile_rejected"
                compiled += t["status"] == "satisfies" and t["origin"] == "compiled"
    s = modes["strict"]
    return {
        "queries": len(queries),
        "strict_right_first": s["right_first"],
        "strict_abstained": s["abstained"],
        "strict_hits_rejected_by_a_target_compiler": rejected,
        "strict_hits_satisfies_compiled": compiled,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("compilers", nargs="+")
    ap.add_argument("--without", action="store_true")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ti-compile-cost-"))
    sources, paths = make_corpus(root, None, None)
    toml = "".join(f"[[compiler]]\npath = {json.dumps(str(Path(c).resolve()))}\n\n" for c in a.compilers)
    (root / "compilers.toml").write_text(toml, encoding="utf-8")
    shutil.copy(ROOT / "examples" / "components.toml", root / "components.toml")
    out: dict = {"files": len(paths), "load_average_start": os.getloadavg()}
    build = cli_refresh(sources, root / "data")
    rec = _record(root / "data")
    out["with_compilers"] = {
        "flow_s": build["flow_s"],
        "compile_s": build["stages_s"].get("compile"),
        "compile": rec.get("compile", {}).get("compiled"),
        "compile_seconds": rec.get("compile", {}).get("seconds"),
        "counts": rec.get("compile", {}).get("counts"),
        "compilers": rec.get("compile", {}).get("compilers"),
    }
    again = cli_refresh(sources, root / "data")
    rec2 = _record(root / "data")
    out["no_change_refresh"] = {
        "flow_s": again["flow_s"],
        "compiled": rec2.get("compile", {}).get("compiled"),
        "cached": rec2.get("compile", {}).get("cached"),
        "compile_s": again["stages_s"].get("compile"),
    }
    if a.without:
        (root / "compilers.toml").unlink()
        plain = cli_refresh(sources, root / "data-plain")
        out["without_compilers"] = {"flow_s": plain["flow_s"]}
    out["version_queries_with_compilers"] = version_check(root / "data")
    if a.without:
        out["version_queries_without_compilers"] = version_check(root / "data-plain")
    out["load_average_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
