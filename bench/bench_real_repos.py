"""The real Midnight repositories end to end: a real refresh, then evidence coverage per source.

    python bench/bench_real_repos.py --mirrors DIR [--work DIR] [--only NAME ...] [--no-save]

``--mirrors`` (or ``TRUSTINDEX_REAL_MIRRORS``): a directory holding ``<owner>+<name>/repo``, a complete bare
repository per source.  Get them with the search tool's ``fetch`` ("github:owner/name") and rebuild complete
repositories with ``../shared/tools/repair_mirrors.sh`` (its ``FIXED`` output is such a directory); nothing of
them is committed.  The bench writes a sources.toml pointing at them, an identities file and
examples/components.toml beside it under ``--work``, runs one in-process refresh (Prefect, the real encoder),
publishes, and reads the live snapshot back.  Per source it prints: chunks; the share with a docs version, a
language version (``compact-language``), a package/component target (any other component but ``network``), a
network; legacy chunks; verification links by method; ingest accounting (ingested, skipped by rule, failed by
stage).  For midnight-docs also the issue's checks: chunks under docs/ with docs version ``current``, chunks
under main_versioned_docs/version-0.0.0/ with ``0.0.0`` and legacy.  The snapshot stays under ``--work`` for
bench/bench_version_queries.py.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ENCODER_CACHE, ROOT, WORK, figure, save, setup_env  # noqa: E402

REAL_WORK = WORK / "real-repos"
DOCS_VERSION, LANGUAGE, NETWORK = "docs", "compact-language", "network"
CODE = ["**/*.md", "**/*.mdx", "**/*.compact", "**/*.ts", "**/package.json"]
NOT_BUILT = ["**/node_modules/**", "**/dist/**", "**/managed/**", "**/gen/**"]
# name, mirror folder, publisher, include, exclude
SOURCES = [
    ("midnight-docs", "midnightntwrk+midnight-docs", "midnight-foundation", ["**/*.md", "**/*.mdx"], []),
    ("example-counter", "midnightntwrk+example-counter", "midnight-foundation", CODE, NOT_BUILT),
    ("example-bboard", "midnightntwrk+example-bboard", "midnight-foundation", CODE, NOT_BUILT),
    ("compact-contracts", "OpenZeppelin+compact-contracts", "openzeppelin", CODE, NOT_BUILT),
    ("compact", "LFDT-Minokawa+compact", "lfdt-minokawa", ["**/*.md", "**/*.compact", "**/package.json"], NOT_BUILT),
]
IDENTITIES = """\
[[publisher]]
id = "midnight-foundation"
name = "Midnight Foundation"
tier = "foundation"

[[publisher]]
id = "lfdt-minokawa"
name = "LF Decentralized Trust (Minokawa)"
tier = "foundation"

[[publisher]]
id = "openzeppelin"
name = "OpenZeppelin"
tier = "partner"
"""


def write_config(mirrors: Path, work: Path, only: list[str] | None) -> Path:
    lines = []
    for name, folder, publisher, include, exclude in SOURCES:
        if only and name not in only:
            continue
        repo = mirrors / folder / "repo"
        if not (repo / "HEAD").is_file():
            raise SystemExit(f"{repo}: no bare repository here (fetch it, then run repair_mirrors.sh)")
        lines += [
            "[[source]]",
            f'name = "{name}"',
            f'url = "{repo.resolve()}"',
            'ref = "main"',
            f'publisher = "{publisher}"',
            f"include = {include!r}".replace("'", '"'),
            f"exclude = {exclude!r}".replace("'", '"'),
            "",
        ]
    (work / "sources.toml").write_text("\n".join(lines))
    (work / "identities.toml").write_text(IDENTITIES)
    shutil.copy(ROOT / "examples" / "components.toml", work / "components.toml")
    return work / "sources.toml"


def _parsed_components(rows: list[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = collections.defaultdict(set)
    for r in rows:
        if r["status"] == "parsed":
            out[r["component"]].add(r["constraint"])
    return out


def coverage(snapshot: Path) -> dict[str, dict]:
    """Per source (and "(all)"): chunk shares by evidence kind, verification methods, ingest accounting."""
    import pyarrow.parquet as pq

    from trustindex.schemas.docs_versions import LEGACY_MARKER

    t = {n: pq.read_table(snapshot / f"{n}.parquet").to_pylist() for n in ("chunks", "version_targets")}
    t |= {n: pq.read_table(snapshot / f"{n}.parquet").to_pylist() for n in ("deprecations", "verifications")}
    report = pq.read_table(snapshot / "ingest_report.parquet").to_pylist()
    docs_source = {d["doc_id"]: d["source"] for d in pq.read_table(snapshot / "documents.parquet").to_pylist()}
    doc_t, chunk_t = collections.defaultdict(list), collections.defaultdict(list)
    for r in t["version_targets"]:
        (chunk_t[r["chunk_id"]] if r["chunk_id"] else doc_t[r["doc_id"]]).append(r)
    legacy_docs = {d["doc_id"] for d in t["deprecations"] if d["marker"] == LEGACY_MARKER and not d["chunk_id"]}
    legacy_chunks = {d["chunk_id"] for d in t["deprecations"] if d["marker"] == LEGACY_MARKER and d["chunk_id"]}
    out: dict[str, dict] = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for c in t["chunks"]:
        comps = _parsed_components(doc_t[c["doc_id"]] + chunk_t[c["chunk_id"]])
        legacy = c["doc_id"] in legacy_docs or c["chunk_id"] in legacy_chunks
        for key in (c["source"], "(all)"):
            k = out[key]["chunks"]
            k["chunks"] += 1
            k["docs version"] += DOCS_VERSION in comps
            k["language version"] += LANGUAGE in comps
            k["package target"] += bool(set(comps) - {DOCS_VERSION, LANGUAGE, NETWORK})
            k["network"] += NETWORK in comps
            k["legacy"] += legacy
            if c["source"] == "midnight-docs" and key != "(all)":
                if c["path"].startswith("docs/"):
                    k["docs/ chunks"] += 1
                    k["docs/ with docs=current"] += "current" in comps.get(DOCS_VERSION, set())
                if c["path"].startswith("main_versioned_docs/version-0.0.0/"):
                    k["v0 chunks"] += 1
                    k["v0 with docs=0.0.0 and legacy"] += "0.0.0" in comps.get(DOCS_VERSION, set()) and legacy
    for v in t["verifications"]:
        for key in (docs_source.get(v["doc_id"], "?"), "(all)"):
            out[key]["verification links"][v["method"] + (" (stale)" if v["stale"] else "")] += 1
    for r in report:
        what = {
            "ingested": "ingested",
            "skipped": "skipped " + r["rule"].split(":")[0],
            "failed": "failed " + r["stage"],
        }
        for key in (r["source"], "(all)"):
            out[key]["ingest"][what[r["status"]]] += 1
    return {s: {k: dict(v) for k, v in d.items()} for s, d in out.items()}


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else "-"


def section(cov: dict[str, dict], took: dict[str, float], n_sources: int) -> list[str]:
    lines = [
        "## The real Midnight repositories",
        "",
        f"`bench/bench_real_repos.py`: one in-process refresh of {n_sources} real repositories (complete mirrors",
        "rebuilt by `../shared/tools/repair_mirrors.sh`, full history), `examples/components.toml` as the registry;",
        f"refresh {took['refresh_s']:.0f} s on this machine (embedding included). Share of each source's chunks:",
        "",
        "| source | chunks | docs version | language version | package target | network | legacy |",
        "|---|---|---|---|---|---|---|",
    ]
    for s, d in sorted(cov.items(), key=lambda kv: (kv[0] == "(all)", kv[0])):
        c = collections.Counter(d.get("chunks", {}))
        n = c["chunks"]
        cells = [_pct(c[k], n) for k in ("docs version", "language version", "package target", "network", "legacy")]
        lines.append(f"| {s} | {n:,} | " + " | ".join(cells) + " |")
    docs = collections.Counter(cov.get("midnight-docs", {}).get("chunks", {}))
    if docs:
        lines += [
            "",
            f"midnight-docs: {docs['docs/ with docs=current']:,} of {docs['docs/ chunks']:,} chunks under docs/ carry"
            f" docs version `current`; {docs['v0 with docs=0.0.0 and legacy']:,} of {docs['v0 chunks']:,} under"
            " main_versioned_docs/version-0.0.0/ carry `0.0.0` and are legacy.",
        ]
    lines += ["", "| source | verification links by method | ingest accounting |", "|---|---|---|"]
    for s, d in sorted(cov.items(), key=lambda kv: (kv[0] == "(all)", kv[0])):
        links = ", ".join(f"{m} {n:,}" for m, n in sorted(d.get("verification links", {}).items())) or "none"
        ingest = ", ".join(f"{k} {n:,}" for k, n in sorted(d.get("ingest", {}).items()))
        lines.append(f"| {s} | {links} | {ingest} |")
    return lines


def run(mirrors: Path, work: Path, only: list[str] | None) -> dict:
    from trustindex.cli.build import run_refresh
    from trustindex.schemas.config import load_build_config
    from trustindex.schemas.refresh_run import RefreshRequest
    from trustindex.warehouse.snapshots import current_id

    work.mkdir(parents=True, exist_ok=True)
    os.environ["PREFECT_HOME"] = str(work / "prefect-home")
    os.environ["TRUSTINDEX_ENCODER_CACHE"] = str(ENCODER_CACHE)
    from bench.bench_refresh import pick_backend

    cfg = load_build_config(str(write_config(mirrors, work, only)))
    backend = pick_backend()
    t0 = time.perf_counter()
    r = run_refresh(cfg, RefreshRequest(str(work / "data"), backend=backend))
    took = {"refresh_s": time.perf_counter() - t0}
    print(f"  refresh: {took['refresh_s']:.0f} s ({backend}); {r.get('snapshot_id') or r}", flush=True)
    snapshot = work / "data" / "snapshots" / str(current_id(work / "data"))
    cov = coverage(snapshot)
    return {"coverage": cov, "took": took, "snapshot": str(snapshot.relative_to(work)), "n": len(cfg.sources)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default=os.environ.get("TRUSTINDEX_REAL_MIRRORS"), help="<owner>+<name>/repo dirs")
    ap.add_argument("--work", type=Path, default=REAL_WORK, help=f"sources, data and snapshot (default {REAL_WORK})")
    ap.add_argument("--only", nargs="*", help="these sources alone (names as in the table)")
    ap.add_argument("--no-save", action="store_true", help="print only; leave results.json and the docs alone")
    args = ap.parse_args()
    if not args.mirrors:
        raise SystemExit("give --mirrors DIR (or set TRUSTINDEX_REAL_MIRRORS): repair_mirrors.sh's output")
    setup_env()
    res = run(Path(args.mirrors), args.work, args.only)
    lines = section(res["coverage"], res["took"], res["n"])
    print("\n".join(lines))
    if not args.no_save:
        all_docs = res["coverage"]["(all)"]["chunks"]
        figures = [
            figure("real refresh", res["took"]["refresh_s"], "s"),
            figure("chunks", all_docs["chunks"], "chunks"),
        ]
        method = "one in-process refresh of the real repositories; coverage read back from the live snapshot"
        save("real_repos", {"figures": figures, "section": lines, "coverage": res["coverage"], "method": method})


if __name__ == "__main__":
    main()
