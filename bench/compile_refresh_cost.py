"""What compile checks add to a refresh of the whole real docs, in one run (docs/benchmarks.md, "Compile checks").

    PYTHONPATH=. .venv/bin/python bench/compile_refresh_cost.py COMPACTC [COMPACTC ...] [--without]

The full real-docs corpus (bench/bench_refresh.py ``make_corpus``) is built with ``trustindex refresh`` in a fresh
process with a ``compilers.toml`` naming the given compilers; then refreshed again unchanged (it must compile
nothing).  ``--without``: the same build on a second, empty data directory without compilers, in the same run,
for the whole-build comparison.  Prints the flow's seconds, the compile stage's, and the run's compile record.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_refresh import make_corpus  # noqa: E402
from bench.refresh_full import cli_refresh  # noqa: E402


def _record(data: Path) -> dict:
    from trustindex.warehouse.runs import RUN_RECORD

    return json.loads((data / RUN_RECORD).read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("compilers", nargs="+")
    ap.add_argument("--without", action="store_true")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ti-compile-cost-"))
    sources, paths = make_corpus(root, None, None)
    toml = "".join(f"[[compiler]]\npath = {json.dumps(str(Path(c).resolve()))}\n\n" for c in a.compilers)
    (root / "compilers.toml").write_text(toml, encoding="utf-8")
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
    out["load_average_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
