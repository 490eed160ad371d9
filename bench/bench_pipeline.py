"""A whole build of the real docs with the extraction → embedding overlap and without it (issue 17 item 1).

Each variant is a command-line refresh into a fresh data directory (the sources copied beside it, the repository
linked, the shared encoder export): ``--variant NAME=CODE_DIR`` (a checkout; ``NAME=CODE_DIR,off`` sets
``TRUSTINDEX_OVERLAP=off``), run one after another in the order given. The command's wall time, the flow's and
every stage's seconds from ``last_run.json`` go into results.json (key ``pipeline``) and a section of
docs/benchmarks.md. ``--record NAME=DIR`` reads a variant already run that way instead (``DIR/data``,
``DIR/command_seconds``).

    python bench/bench_pipeline.py --sources REAL/sources.toml --identities REAL/identities.toml \\
        --repo REAL/repo --variant before=/tmp/base-src --variant on=. --variant off=.,off
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import WORK, bench_env, machine, save  # noqa: E402
from trustindex.encoder.pipeline import OVERLAP_ENV  # noqa: E402


def run_variant(name: str, spec: str, a) -> Path:
    code, _, mode = spec.partition(",")
    d = WORK / f"pipeline-{name}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    shutil.copy(a.sources, d / "sources.toml")
    shutil.copy(a.identities, d / "identities.toml")
    os.symlink(a.repo.resolve(), d / "repo")
    env = dict(bench_env(), PYTHONPATH=str(Path(code).resolve()))
    env.pop("PREFECT_API_URL", None)
    env.pop("PREFECT_HOME", None)
    if mode == "off":
        env[OVERLAP_ENV] = "off"
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", "sources.toml", "--data", "data"]
        + ["--quiet"],
        cwd=d,
        env=env,
        check=True,
        timeout=7200,
    )
    (d / "command_seconds").write_text(f"{time.perf_counter() - t:.3f}\n")
    return d


def summary(name: str, d: Path) -> dict:
    rec = json.loads((d / "data" / "last_run.json").read_text())
    return {
        "variant": name,
        "command_s": round(float((d / "command_seconds").read_text()), 1),
        "flow_s": round(rec["seconds"], 1),
        "snapshot_id": rec["snapshot_id"],
        "stages": [
            {"stage": r["stage"], "source": r.get("source"), "seconds": round(r["seconds"], 2)} for r in rec["stages"]
        ],
    }


def section(rows: list[dict], note: str) -> list[str]:
    names = [r["variant"] for r in rows]
    stages: list[tuple[str, str]] = []
    for r in rows:
        for s in r["stages"]:
            key = (s["stage"], s["source"] or "")
            if key not in stages:
                stages.append(key)
    out = [
        "## Build pipeline: extraction overlapping embedding (real docs)",
        "",
        "`bench/bench_pipeline.py`: a whole command-line refresh of the real docs (2,426 files) into a fresh data",
        "directory per variant, back to back. Stage seconds from `last_run.json`; a source's `model` and `embed`",
        "are the worker embedding during its extraction (they run inside `ingest`), the unnamed ones the build",
        f"task's. {note}",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
        "| command (s) | " + " | ".join(str(r["command_s"]) for r in rows) + " |",
        "| flow (s) | " + " | ".join(str(r["flow_s"]) for r in rows) + " |",
    ]
    for stage, source in stages:
        cells = []
        for r in rows:
            hit = [s["seconds"] for s in r["stages"] if (s["stage"], s["source"] or "") == (stage, source)]
            cells.append(str(hit[0]) if hit else "")
        out.append(f"| {stage} {source} | " + " | ".join(cells) + " |")
    out.append("| snapshot | " + " | ".join(f"`{r['snapshot_id']}`" for r in rows) + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=Path)
    ap.add_argument("--identities", type=Path)
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--variant", action="append", default=[], help="NAME=CODE_DIR[,off]")
    ap.add_argument("--record", action="append", default=[], help="NAME=DIR of a variant run already")
    ap.add_argument("--note", default="", help="what the reader should know (the load, what ran beside it)")
    a = ap.parse_args()
    dirs = [(n, Path(p)) for n, _, p in (r.partition("=") for r in a.record)]
    dirs += [(n, run_variant(n, spec, a)) for n, _, spec in (v.partition("=") for v in a.variant)]
    rows = [summary(n, d) for n, d in dirs]
    for r in rows:
        print(f"{r['variant']}: command {r['command_s']} s, flow {r['flow_s']} s, snapshot {r['snapshot_id']}")
    save("pipeline", {"variants": rows, "section": section(rows, a.note), "machine": machine()})


if __name__ == "__main__":
    main()
