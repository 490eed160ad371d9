"""Shared by the bench scripts: the machine's description, results.json, docs/benchmarks.md.

Every script measures its own reference in the same run and reports ratios, because
on a shared machine absolute times drift with the neighbours' load (the 1-minute load
average is recorded beside every result for that reason).  Each script merges its
figures into ``bench/results.json`` under its own key and re-renders the table in
``docs/benchmarks.md`` from the whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

from trustindex.schemas.embedding_model import ENCODER_CACHE_ENV, Backend, encoder_cache_dir
from trustindex.schemas.policy import Policy

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results.json"
DOCS = ROOT / "docs" / "benchmarks.md"
CORPUS = Path(os.environ.get("TRUSTINDEX_BENCH_CORPUS", ROOT.parent / "shared" / "corpus" / "midnight-docs"))
# Per checkout: two checkouts (worktrees) on one machine build with their own code, so each has its own work folder
# (a snapshot under it is reused while it was built with the same extractor and index versions:
# bench/corpus_build.py built_with).
WORK = Path(
    os.environ.get(
        "TRUSTINDEX_BENCH_WORK",
        f"/tmp/trustindex-bench/{ROOT.name}-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]}",
    )
)


def in_work(path: Path) -> str:
    """A path under the bench work folder as results.json records it: relative to ``$TRUSTINDEX_BENCH_WORK`` (a
    machine's own folders never go into a tracked file)."""
    try:
        return "$TRUSTINDEX_BENCH_WORK/" + Path(path).resolve().relative_to(WORK.resolve()).as_posix()
    except ValueError:
        return Path(path).name


# One encoder export shared by every bench script (and bench_embedding.py's default cache).
ENCODER_CACHE = encoder_cache_dir(WORK)
# How the figures name the two embedding paths.
FAST = f"{Backend.ONNX_INT8}"
REFERENCE = f"{Backend.SENTENCE_TRANSFORMERS} (torch fp32)"


def bench_env() -> dict[str, str]:
    """Environment for the processes the benches start (offline, quiet, one shared encoder export)."""
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_LOGGING_LEVEL": "WARNING",
            ENCODER_CACHE_ENV: str(ENCODER_CACHE),
        }
    )
    # A loaded 2-core machine can take minutes to start the ephemeral Prefect server.
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = str(
        max(300, int(env.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS") or 0))
    )
    return env


def setup_env() -> None:
    os.environ.update(bench_env())
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def policy_overlay(toml_text: str, label: str) -> Policy:
    """A bench row's policy overlay, written as TOML, read as ``Policy.load`` reads a file (``label`` names it in
    an error): the benches that swap policies on one index (``Index.reload_policy``) need no file for it."""
    return Policy.from_dict(tomllib.loads(toml_text), label)


def machine() -> dict:
    """nproc, memory and CPU model (from /proc), and the load at the time of the run."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 1
    return {
        "nproc": nproc,
        "memory_gib": mem_gib,
        "cpu_model": model,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def percentile_ms(seconds: list[float]) -> dict:
    a = np.asarray(seconds) * 1000
    return {
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "samples": int(a.size),
    }


def peak_rss_mib() -> float:
    """This process's peak resident memory (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_measured(cmd: list[str], env: dict | None = None, timeout: float = 600) -> dict:
    """Run ``cmd`` in a fresh wrapper process; return its wall time, peak RSS, exit code and output.

    The wrapper has that one child, so RUSAGE_CHILDREN's ru_maxrss is the child's own peak.
    """
    code = (
        "import json,resource,subprocess,sys,time\n"
        "t=time.perf_counter(); p=subprocess.run(sys.argv[1:],capture_output=True,text=True)\n"
        "w=time.perf_counter()-t\n"
        "print(json.dumps({'wall_s':w,'rss_mib':resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
        "'rc':p.returncode,'stdout':p.stdout[-4000:],'stderr':p.stderr[-4000:]}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *cmd],
        capture_output=True,
        text=True,
        env=env or bench_env(),
        cwd=ROOT,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise RuntimeError(f"measurement wrapper failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0


def figure(
    name: str,
    value: float,
    unit: str,
    reference: str | None = None,
    reference_value: float | None = None,
    ratio: float | None = None,
    goal: str | None = None,
    met: bool | None = None,
) -> dict:
    """One row of the table: a measured value, the reference measured in the same run, their ratio, a goal."""
    return {
        "name": name,
        "value": _r(value),
        "unit": unit,
        "reference": reference,
        "reference_value": _r(reference_value),
        "ratio": _r(ratio),
        "goal": goal,
        "met": met,
    }


def _r(x):
    if x is None:
        return None
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    x = float(x)
    return round(x, 4) if abs(x) < 10 else round(x, 1)


def print_figures(title: str, figures: list[dict]) -> None:
    print(f"== {title}")
    for f in figures:
        ref = f" | reference {f['reference']}: {f['reference_value']}" if f["reference"] else ""
        ratio = f" | ratio {f['ratio']}" if f["ratio"] is not None else ""
        goal = f" | goal {f['goal']}: {'met' if f['met'] else 'NOT met'}" if f["goal"] else ""
        print(f"  {f['name']}: {f['value']} {f['unit']}{ref}{ratio}{goal}", flush=True)


def report_section(key: str, title: str, result: dict, saved: bool = True) -> None:
    """A bench that brings its own section (``result["section"]``): its figures and section printed, the result
    saved under ``key`` unless ``saved`` is False (the bench's ``--no-save``)."""
    print_figures(title, result["figures"])
    print("\n".join(result["section"]))
    if saved:
        save(key, result)


def save(key: str, result: dict, results: Path = RESULTS, docs: Path | None = DOCS) -> None:
    """Merge ``result`` under ``key`` in results.json (other keys kept) and re-render the docs table."""
    data = json.loads(results.read_text()) if results.is_file() else {}
    result = dict(result)
    result.setdefault("machine", machine())
    result.setdefault("measured_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    data[key] = result
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    if docs is not None:
        docs.write_text(render(data))


ORDER = [
    "extraction",
    "embedding",
    "encoder_anchor",
    "quality",
    "retrieval",
    "retrieval_midnight-repo",
    "retrieval_react",
    "retrieval_flask",
    "retrieval_flask-repo",
    "retrieval_fastapi",
    "retrieval_fastapi-repo",
    "retrieval_vue",
    "lexical",
    "query",
    "serve",
    "refresh",
    "signatures",
]


# bench/version_coverage.py over ../shared/corpus/midnight-docs with its Docusaurus config (--config-from the
# midnightntwrk/midnight-docs mirror) and examples/components.toml; measured by hand, not by `make bench`.
VERSION_COVERAGE = [
    "## Version evidence on the real docs",
    "",
    "`bench/version_coverage.py` (the ingest's own evidence per Markdown file, approximate token counter, so",
    "17,837 chunks rather than the index's 20,613; the Docusaurus config read from the real repository;",
    "`examples/components.toml` as the registry). Share of chunks with a target of each kind, per folder:",
    "",
    "| folder | chunks | docs version | language version | component/package | network | legacy |",
    "|---|---|---|---|---|---|---|",
    "| docs/ | 3,651 | 100% (current) | 14.6% | 29.8% | 0.16% | 0 |",
    "| main_versioned_docs/ | 7,058 | 100% (0.0.0) | 3.9% | 16.4% | 0 | 100% |",
    "| api-reference/ | 6,376 | 0 | 0 | 0 | 0 | 0 |",
    "| blog/, sdks/, other | 752 | 0 | 0.8% | 0.8% | 0 | 0 |",
    "| all | 17,837 | 60.0% | 4.6% | 12.6% | 0.03% | 39.6% |",
    "",
    "Targets by origin (all folders): docs folder 1,364 pages, release notes 376, compatibility-table rows",
    "166 (plus network per tab), package.json snippets 85, fenced pragmas 63 (62 chunks), version stamps 13,",
    "install commands with a version 6; no fence disagrees with its page. api-reference/ (TypeDoc output) states",
    "no version in its text, so it carries none.",
]


def content_risk_section(r: dict | None) -> list[str]:
    """Every real passage bench/bench_content_risk.py flagged (path, line, reason; never the text), to be judged."""
    if not isinstance(r, dict) or "real_docs" not in r:
        return []
    d, h = r["real_docs"], r["hostile"]
    lines = [
        "## Content risk",
        "",
        "`bench/bench_content_risk.py`. Hostile corpus (tests/kits/hostile_content.py): "
        + ", ".join(
            f"{k} {h['caught'].get(k, 0)}/{n} caught" for k, n in sorted(h["cases"].items()) if k != "look-alike"
        )
        + f"; {len(h['false_flags'])} of {h['cases'].get('look-alike', 0)} look-alikes (warnings, legitimate steps) "
        f"flagged. Real docs: {d['flagged']} of {d['passages']:,} passages flagged "
        f"({d['flagged'] / max(1, d['passages']):.3%}; by kind: "
        + ", ".join(f"{k} {n}" for k, n in d["by_kind"].items())
        + "). Each real finding:",
        "",
        "| path | line | kind | rule | reason |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {f['path']} | {f['line']} | {f['kind']} | {f['rule']} | {f['reason']} |" for f in d["findings"]]
    if "by_rule" in d:  # each rule's false-positive rate on the real docs (none of their passages is hostile)
        lines += [
            "",
            "Passages of the real docs each rule flags (every one a false positive or a real finding to judge above):",
            "",
            "| rule | passages | share |",
            "|---|---|---|",
        ]
        lines += [f"| {rule} | {n} | {n / max(1, d['passages']):.3%} |" for rule, n in d["by_rule"].items()]
    if "served_text_trimmed" in d:
        lines += [
            "",
            f"Served text trimmed (HTML comments outside code and invisible characters left out of what is served "
            f"and embedded): {d['served_text_trimmed']} passages.",
        ]
    return [*lines, ""]


def render(data: dict) -> str:
    """docs/benchmarks.md from results.json."""
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`bench/run_all.py`) from `bench/results.json`; do not edit by hand.",
        "Every figure is set against a reference measured in the same run (ratio = ours / reference, or",
        "the ratio the goal names), because absolute times on a shared machine move with the load.",
        "Scripts: `bench/bench_extract.py`, `bench/bench_embedding.py`, `bench/bench_quality.py` (judged",
        "queries: `bench/eval/`), `bench/bench_lexical.py`, `bench/bench_query.py`, `bench/bench_refresh.py`,",
        "`bench/bench_serve.py`, `bench/bench_signatures.py`, `bench/bench_retrieval.py`,",
        "`bench/encoder_anchor.py`; method notes follow the table.",
        "",
    ]
    machines = {
        json.dumps({k: v for k, v in r.get("machine", {}).items() if k != "load_average_1m"}, sort_keys=True)
        for r in data.values()
        if isinstance(r, dict) and r.get("machine")  # a record saved without its machine names none
    }
    for m in sorted(machines):
        d = json.loads(m)
        lines.append(
            f"Machine: {d.get('nproc')} cores (`nproc`), {d.get('memory_gib')} GiB memory, "
            f"CPU {d.get('cpu_model')}; Python {d.get('python')}, numpy {d.get('numpy')}."
        )
    lines += [
        "",
        "| area | figure | value | reference (same run) | ratio | goal | met | load (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key in ORDER + sorted(k for k in data if k not in ORDER):
        r = data.get(key)
        if not isinstance(r, dict):
            continue
        load = r.get("machine", {}).get("load_average_1m", "")
        for f in r.get("figures", []):
            ref = f"{f['reference']}: {f['reference_value']}" if f.get("reference") else ""
            met = "" if f.get("met") is None else ("yes" if f["met"] else "**no**")
            ratio = "" if f.get("ratio") is None else f["ratio"]
            lines.append(
                f"| {key} | {f['name']} | {f['value']} {f['unit']} | {ref} | {ratio} | {f.get('goal') or ''} "
                f"| {met} | {load} |"
            )
    lines += [
        "",
        "## Dense search",
        "",
        "Passage vectors are stored as float16 (`embeddings.npy`, memory-mapped). Below the policy's",
        "`dense.exact_below` rows (1,500,000 by default) search is exact: a kernel proposes candidates, which",
        "are re-scored in float32 with a bound that proves the result equals a full float32 scan",
        "(query/dense.py). The kernel is usearch's float16 brute-force scan, or in a warmed process",
        "(`Index.warm()`: the MCP server, `--batch`, these warm figures) an int8 `MatMulInteger` in",
        "onnxruntime whose per-row error bounds give the same proof (query/dense_int8.py); a one-shot",
        "query skips its build (~1.5 s at 100k, ~30 s at 1M). The int8 matrix is handed to onnxruntime as",
        "an external initializer, so a warm 1M process holds one copy of it (384 MB), and the embeddings'",
        "mapped pages are dropped as warm-up reads them. From `exact_below` rows on, the build also writes",
        "an HNSW index (`dense.usearch`, usearch, M 16, efConstruction 128, single-threaded so the bytes are",
        "reproducible) that the query side opens memory-mapped and searches with efSearch 2048 (the least",
        "that reached recall@10 ≥ 0.99 at 100k on these synthetic vectors), re-scoring its candidates",
        "exactly. At 100k exact search is about twice as fast as that HNSW search; at 1M it is as fast, with",
        "less memory, while the HNSW's recall@10 fell to 0.92 (its graph took 2,014 s to build on both",
        "cores): hence the 1.5M default. Past 1M the crossover was not measured.",
        "",
        *VERSION_COVERAGE,
        "",
        *content_risk_section(data.get("content_risk")),
    ]
    # Benches measured by hand (bench_real_repos, bench_version_queries) bring their own section.
    for key in sorted(data):
        r = data[key]
        if isinstance(r, dict) and r.get("section"):
            lines += [*r["section"], ""]
    lines += [
        "## Method",
        "",
    ]
    for key in ORDER + sorted(k for k in data if k not in ORDER):
        r = data.get(key)
        if isinstance(r, dict) and r.get("method"):
            note = f" *Note: {r['note']}*" if r.get("note") else ""
            lines += [f"**{key}** ({r.get('measured_at', '')}): {r['method']}{note}", ""]
    return "\n".join(lines).rstrip() + "\n"
