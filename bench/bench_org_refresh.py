"""A whole organisation's registry refreshed two ways in one run: bounded (issue 29) against today's behaviour.

    python bench/bench_org_refresh.py --mirrors DIR [--registry FILE] [--work DIR] [--only N] [--no-save]

``--mirrors``: a directory of ``<owner>+<name>/repo`` complete bare repositories (the search tool's fetch, then
``../shared/tools/repair_mirrors.sh``; nothing of them is committed).  The registry (default
examples/midnight-org/sources.toml) is copied under ``--work`` with each source's url pointed at its mirror
(sources without one are left out and listed); identities and components come with it.

Each mode is a ``trustindex refresh --json`` in its own process with its own data directory:

- ``today``: every source task at once, an embedding worker per source (TRUSTINDEX_SOURCES_AT_ONCE=all,
  TRUSTINDEX_EMBED_WORKER=per-source);
- ``bounded``: the defaults (the usable cores at once, one shared worker).

Reported per mode: wall time, peak RSS of the refresh process, models loaded, bytes on disk (the data directory,
and its mirrors), the snapshot id (the two must agree); then a no-change refresh of the bounded data directory:
its exit code and the tracebacks it printed.  Goals (issue 29): bounded peak RSS <= 1.5 GB and wall time <= 0.8 of
today's.  Nothing is timed in tests; the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ROOT, WORK, bench_env, figure, machine, print_figures, run_measured, save  # noqa: E402

REGISTRY = ROOT / "examples" / "midnight-org" / "sources.toml"
# bounded first: what the first run leaves in the page cache (the mirrors' objects) helps the second, today's
MODES = {
    "bounded": {},
    "today": {"TRUSTINDEX_SOURCES_AT_ONCE": "all", "TRUSTINDEX_EMBED_WORKER": "per-source"},
}


def local_registry(registry: Path, mirrors: Path, work: Path, only: int | None) -> tuple[Path, list[str], list[str]]:
    """The registry with each url pointed at ``mirrors/<owner>+<name>/repo``; the sources kept and left out."""
    text = registry.read_text()
    kept, missing = [], []
    blocks = re.split(r"(?m)^(?=\[\[source\]\])", text)
    out = [blocks[0]]
    for block in blocks[1:]:
        m = re.search(r'(?m)^url = "https://github\.com/([^/]+)/([^/"]+?)(?:\.git)?"$', block)
        name = re.search(r'(?m)^name = "([^"]+)"$', block)
        repo = mirrors / f"{m.group(1)}+{m.group(2)}" / "repo" if m else None
        if m is None or name is None or repo is None or not (repo / "HEAD").is_file() or (only and len(kept) >= only):
            missing.append(name.group(1) if name else "?")
            continue
        kept.append(name.group(1))
        out.append(block.replace(m.group(0), f'url = "{repo.resolve()}"'))
    work.mkdir(parents=True, exist_ok=True)
    dest = work / "sources.toml"
    dest.write_text("".join(out))
    tomllib.loads(dest.read_text())  # still valid TOML
    for beside in ("identities.toml", "components.toml", "policy.toml"):
        if (registry.parent / beside).is_file():
            shutil.copyfile(registry.parent / beside, work / beside)
    return dest, kept, missing


def du(path: Path) -> int:
    """Bytes on disk under ``path`` (files counted once: hard links are not counted twice)."""
    seen, total = set(), 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def refresh(sources: Path, data: Path, extra_env: dict[str, str], timeout: float) -> dict:
    env = {**bench_env(), **extra_env, "PREFECT_HOME": str(data / ".prefect")}
    env.pop("PREFECT_API_URL", None)  # its own ephemeral server, as an operator's command line has
    cmd = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(sources), "--data", str(data)]
    out = run_measured([*cmd, "--quiet"], env=env, timeout=timeout)
    record = data / "last_run.json"  # the run's own record (stdout comes back truncated)
    result = json.loads(record.read_text()) if out["rc"] in (0, 3) and record.is_file() else {}
    return {**out, "result": result}


def figures_of(modes: dict, no_change: dict) -> list[dict]:
    """The table's rows: bounded against today's behaviour, and the no-change refresh."""
    t, b = modes["today"], modes["bounded"]

    def ratio(k: str) -> float | None:
        return b[k] / t[k] if t[k] else None

    return [
        figure(
            "org refresh wall time, bounded",
            b["wall_s"],
            "s",
            "today",
            t["wall_s"],
            ratio("wall_s"),
            "<= 0.8 of today",
            (ratio("wall_s") or 9) <= 0.8,
        ),
        figure(
            "org refresh peak RSS, bounded",
            b["rss_mib"],
            "MiB",
            "today",
            t["rss_mib"],
            ratio("rss_mib"),
            "<= 1536 MiB",
            b["rss_mib"] <= 1536,
        ),
        figure("org refresh models loaded, bounded", b["model_loads"] or 0, "loads", "today", t["model_loads"]),
        figure(
            "org refresh data dir, bounded",
            b["data_bytes"] / 2**20,
            "MiB",
            "today",
            t["data_bytes"] / 2**20,
            ratio("data_bytes"),
        ),
        figure(
            "org no-change refresh tracebacks",
            no_change["tracebacks"],
            "tracebacks",
            goal="0",
            met=no_change["tracebacks"] == 0 and no_change["rc"] == 0,
        ),
    ]


def section(result: dict) -> list[str]:
    """docs/benchmarks.md's paragraph for this run, from its own figures (a rerun replaces it whole)."""
    b, t, nc = result["modes"]["bounded"], result["modes"]["today"], result["no_change"]
    same = "the same" if result["same_snapshot"] else "DIFFERENT"
    return [
        "## A whole organisation in one registry (issue 29)",
        "",
        "`bench/bench_org_refresh.py --mirrors DIR`: examples/midnight-org/sources.toml pointed at",
        f"{result['sources']} real repositories ({len(result['left_out'])} of the registry could not be fetched),",
        "refreshed from empty in its own process once bounded (the usable cores at once, one shared embedding",
        "worker) and once as before issue 29 (every source at once, a worker per source), then a no-change",
        "refresh of the bounded data dir.",
        f"Snapshots {b['snapshot_id']} and {t['snapshot_id']} ({same}; {b['documents']:,} documents,",
        f"{b['chunks']:,} chunks, {b['failures']} failed sources).",
        f"Peak RSS {b['rss_mib']:,.0f} MiB bounded against {t['rss_mib']:,.0f} MiB; wall {b['wall_s']:,.0f} s at",
        f"load {b.get('load', '?')} against {t['wall_s']:,.0f} s at load {t.get('load', '?')} (the 1-minute",
        "load average as each mode started and ended: the wall ratio means something only at like loads).",
        f"No-change refresh: exit {nc['rc']}, {nc['wall_s']} s, {nc['tracebacks']} tracebacks.",
    ]


def same_snapshot(modes: dict) -> bool:
    ids = {m["snapshot_id"] for m in modes.values()}
    return len(ids) == 1 and None not in ids


def warm_encoder() -> None:
    """The int8 export made before either mode is timed (the first to need it would pay for it)."""
    code = "from trustindex.encoder.onnx_embedder import OnnxEmbedder as E; import os; E(os.environ[sys.argv[1]])"
    from trustindex.schemas.embedding_model import ENCODER_CACHE_ENV

    subprocess.run([sys.executable, "-c", "import sys;" + code, ENCODER_CACHE_ENV], env=bench_env(), check=True)


def run(mirrors: Path, registry: Path, work: Path, only: int | None, timeout: float) -> dict:
    sources, kept, missing = local_registry(registry, mirrors, work, only)
    warm_encoder()
    print(f"{len(kept)} sources with a mirror, {len(missing)} left out: {', '.join(missing) or 'none'}")
    modes = {}
    for mode, env in MODES.items():
        data = work / f"data-{mode}"
        shutil.rmtree(data, ignore_errors=True)
        load_before = os.getloadavg()[0]
        out = refresh(sources, data, env, timeout)
        res = out["result"]
        modes[mode] = {
            "rc": out["rc"],
            # the 1-minute load average as the mode started and ended: the two modes' times compare only at like loads
            "load": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}",
            "wall_s": round(out["wall_s"], 1),
            "rss_mib": round(out["rss_mib"], 1),
            "model_loads": res.get("resources", {}).get("model_loads"),
            "snapshot_id": res.get("snapshot_id"),
            "documents": res.get("row_counts", {}).get("documents"),
            "chunks": res.get("row_counts", {}).get("chunks"),
            "failures": len(res.get("failures") or {}),
            "data_bytes": du(data),
            "mirror_bytes": du(data / "mirrors"),
        }
        print(f"{mode}: {json.dumps(modes[mode])}  (load {os.getloadavg()[0]:.1f})")
        if out["rc"] not in (0, 3):
            print(out["stderr"][-3000:])
    again = refresh(sources, work / "data-bounded", {}, timeout)
    no_change = {
        "rc": again["rc"],
        "wall_s": round(again["wall_s"], 1),
        "tracebacks": again["stderr"].count("Traceback"),
    }
    figures = figures_of(modes, no_change)
    return {
        "sources": len(kept),
        "left_out": missing,
        "modes": modes,
        "same_snapshot": same_snapshot(modes),
        "no_change": no_change,
        "figures": figures,
        "machine": machine(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=os.environ.get("TRUSTINDEX_REAL_MIRRORS"))
    ap.add_argument("--registry", type=Path, default=REGISTRY)
    ap.add_argument("--work", type=Path, default=WORK / "org-refresh")
    ap.add_argument("--only", type=int, help="the first N sources that have a mirror")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per refresh")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    if not a.mirrors or not Path(a.mirrors).is_dir():
        raise SystemExit("--mirrors DIR (or TRUSTINDEX_REAL_MIRRORS): the fetched, repaired mirrors")
    result = run(Path(a.mirrors), a.registry, a.work, a.only, a.timeout)
    print(json.dumps({k: v for k, v in result.items() if k not in ("machine", "figures")}, indent=2))
    print_figures(f"org refresh ({result['sources']} sources, load {os.getloadavg()[0]:.1f})", result["figures"])
    if not a.no_save:
        save("org_refresh", {**result, "section": section(result)})


if __name__ == "__main__":
    main()
