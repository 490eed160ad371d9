"""What a scheduled or command-line build pays every time, one cost at a time (issue 17 item 2).

Each cost is measured in fresh processes with the code of two checkouts, ``--before`` (the reference, e.g. a
``git archive`` of the commit before the trims) and this one, run alternately ``--repeat`` times (medians;
the machine is shared). ``--data`` names a data directory holding a built snapshot of the sources in
``--sources`` (the real docs: bench_refresh's corpus), for the catalog, the publish hashing and a whole
refresh that finds nothing changed.

    python bench/bench_startup.py --before /tmp/pipe-base-src --sources S/sources.toml --data S/data
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, bench_env, figure, print_figures, save  # noqa: E402

# Each probe prints one JSON object of seconds; it runs in a fresh interpreter with one checkout's code.
PROBES = {
    "interpreter": "import json; print(json.dumps({}))",
    "imports": """
import json, sys, time
t = time.perf_counter()
import trustindex.cli.main, trustindex.cli.build, trustindex.flows.refresh
s = time.perf_counter() - t
assert trustindex.flows.refresh.__file__.startswith(sys.argv[1]), trustindex.flows.refresh.__file__
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "scipy", "bm25s") if m in sys.modules)
print(json.dumps({"imports": s, "heavy": heavy}))
""",
    "prefect_server": """
import json, time
t = time.perf_counter()
from prefect.server.api.server import SubprocessASGIServer
i = time.perf_counter() - t
s = SubprocessASGIServer(); t = time.perf_counter(); s.start(); b = time.perf_counter() - t; s.stop()
print(json.dumps({"server_import": i, "server_boot": b}))
""",
    "model": """
import json, sys, time
from pathlib import Path
from trustindex.schemas.embedding_model import encoder_cache_dir
from trustindex.encoder.factory import embedder_identity, make_embedder
t = time.perf_counter(); embedder_identity("onnx-int8"); ident = time.perf_counter() - t
cache = encoder_cache_dir(Path(sys.argv[1]))
t = time.perf_counter(); make_embedder("onnx-int8", cache_dir=cache); m = time.perf_counter() - t
print(json.dumps({"weights_identity": ident, "model_load": m}))
""",
    "publish": """
import json, sys, time
from pathlib import Path
from trustindex.schemas.embedding_model import encoder_cache_dir
from trustindex.schemas.snapshot import list_files
from trustindex.warehouse.catalog import refresh_catalog
from trustindex.warehouse.snapshots import current_id
data = Path(sys.argv[1]); snap = data / "snapshots" / current_id(data)
try:  # after the trims, a build takes the encoder files' sha256 from the verified export (not timed: done at load)
    from trustindex.warehouse.build import linked_sha256
    from trustindex.encoder.factory import make_embedder
    known = linked_sha256(snap, make_embedder("onnx-int8", cache_dir=encoder_cache_dir(data)))
except ImportError:
    known = None
t = time.perf_counter(); files = list_files(snap, known) if known is not None else list_files(snap)
h = time.perf_counter() - t
t = time.perf_counter(); refresh_catalog(data, snap); c = time.perf_counter() - t
mb = sum(f["size"] for f in files.values()) / 1e6
print(json.dumps({"publish_hash": h, "publish_mb": mb, "publish_known": len(known or {}), "catalog": c}))
""",
}


def probe(code_dir: Path, name: str, *args: str, env: dict | None = None) -> dict:
    env = dict(env or bench_env(), PYTHONPATH=str(code_dir))
    t = time.perf_counter()
    # run from the checkout: `python -c` puts the working directory first on sys.path, before PYTHONPATH
    out = subprocess.run(
        [sys.executable, "-c", PROBES[name], *args], capture_output=True, text=True, env=env, cwd=code_dir, timeout=900
    )
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"probe {name} with {code_dir} failed: {out.stderr[-2000:]}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), f"{name}_process": wall}


def no_change_refresh(code_dir: Path, sources: Path, data: Path) -> dict:
    """A whole `trustindex refresh` that finds nothing changed: the command's time and the flow's."""
    env = dict(bench_env(), PYTHONPATH=str(code_dir))
    for name in ("PREFECT_API_URL", "PREFECT_HOME"):  # as from a shell: the data's own Prefect home, ephemeral
        env.pop(name, None)
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(sources), "--data", str(data)]
        + ["--json", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=code_dir,
        timeout=900,
    )
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"refresh with {code_dir} failed: {out.stderr[-2000:]}")
    r = json.loads(out.stdout)
    return {"refresh_command": wall, "refresh_flow": r["seconds"], "refresh_startup": wall - r["seconds"]}


def measure(code_dir: Path, sources: Path, data: Path) -> dict:
    # the Prefect home the command line keeps in the data directory (cli.common.prefect_env): what every run after
    # the first pays (the first also creates its database)
    env = dict(bench_env(), PREFECT_HOME=str((data / ".prefect").resolve()))
    out = {
        **probe(code_dir, "interpreter"),
        **probe(code_dir, "imports", str(code_dir.resolve())),
        **probe(code_dir, "prefect_server", env=env),
        **probe(code_dir, "model", str(data)),
        **probe(code_dir, "publish", str(data)),
        **no_change_refresh(code_dir, sources, data),
    }
    out.pop("prefect_server_process", None)
    return out


FIGURES = [  # key, what it is
    ("interpreter_process", "python start (no imports)"),
    ("imports", "import the CLI and the refresh flow"),
    ("server_import", "import Prefect's server module"),
    ("server_boot", "ephemeral server boot (the data's Prefect home)"),
    ("weights_identity", "model weights identity (sha256, 90 MB)"),
    ("model_load", "int8 encoder load (export checked)"),
    ("publish_hash", "publish: hash every snapshot file"),
    ("catalog", "publish: DuckDB catalog rewrite"),
    ("refresh_startup", "no-change refresh: command minus flow"),
    ("refresh_flow", "no-change refresh: the flow"),
    ("refresh_command", "no-change refresh: whole command"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the reference checkout (code before the trims)")
    ap.add_argument("--sources", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True, help="a data directory with a built snapshot of --sources")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--after-first", action="store_true", help="the first alternation measures this checkout first")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    no_change_refresh(ROOT, a.sources, a.data)  # a warm-up: the data's Prefect home exists before any figure
    code = {"before": a.before, "after": ROOT}
    for i in range(a.repeat):  # alternated, each first in turn, so that a drift in the neighbours' load hits both
        first = ("after", "before") if (i % 2 == 0) == a.after_first else ("before", "after")
        for which in first:
            runs[which].append(measure(code[which], a.sources, a.data))
    med = {k: {f: statistics.median(r[f] for r in v) for f, _ in FIGURES} for k, v in runs.items()}
    figures = [
        figure(
            f"{what} (s)",
            med["after"][key],
            "s",
            reference="before the trims",
            reference_value=med["before"][key],
            ratio=med["after"][key] / med["before"][key] if med["before"][key] else None,
        )
        for key, what in FIGURES
    ]
    print_figures("start-up and fixed costs (medians)", figures)
    heavy = {k: v[-1]["heavy"] for k, v in runs.items()}
    print("heavy modules imported by the refresh path:", heavy)
    if not a.no_save:
        save(
            "startup",
            {
                "figures": figures,
                "runs": runs,
                "heavy_imports": heavy,
                "method": (
                    f"bench/bench_startup.py: each fixed cost of a command-line build in fresh processes, the code "
                    f"before the trims and after, alternated {a.repeat} times (medians); the no-change refresh "
                    f"and the publish costs on the real docs' snapshot ({a.data.name}). Decisions: "
                    "docs/architecture.md (fixed costs)."
                ),
            },
        )


if __name__ == "__main__":
    main()
