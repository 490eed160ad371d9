"""Configuration loading and flow invocation for the build commands."""
from __future__ import annotations

from warehouse.embeddings import DEFAULT_BACKEND

from pathlib import Path

from schemas.config import BuildConfig, load_build_config  # noqa: F401  (re-exported for the command line)


def run_refresh(cfg: BuildConfig, data_dir: Path, backend: str = DEFAULT_BACKEND,
                commits: dict[str, str] | None = None, publish: bool = True, force: bool = False,
                rebuild: bool = False, dask_address: str | None = None) -> dict:
    from flows.refresh import refresh_flow, with_task_runner

    data_dir.mkdir(parents=True, exist_ok=True)
    return with_task_runner(refresh_flow, dask_address)(
        cfg.sources, cfg.ids, cfg.ledger, cfg.policy, str(data_dir), commits=commits, publish=publish,
        backend=backend, force=force, rebuild=rebuild)


def describe_refresh(result: dict) -> str:
    lines = [f"snapshot {result['snapshot_id']} {'published' if result['published'] else 'built'}"]
    for s in result["sources"]:
        lines.append(f"  {s['source']}: {s['status']}" + (f" at {s['commit'][:12]}" if s["commit"] else "")
                     + (f" — {s['error']}" if s["error"] else "") + (f" ({s['note']})" if s.get("note") else ""))
    rc = result["row_counts"]
    e = result["embeddings"]
    if result.get("reused_snapshot"):
        lines.append(f"  {rc.get('documents', 0)} documents, {rc.get('chunks', 0)} chunks; nothing changed: the "
                     f"snapshot already holds this build")
    else:
        lines.append(f"  {rc.get('documents', 0)} documents, {rc.get('chunks', 0)} chunks; embeddings: "
                     f"{e['encoded']} encoded, {e['cache_hits']} from cache ({e['distinct']} distinct)")
    for g in result.get("forced_past_gate") or []:
        lines.append(f"  published despite the safety gate (--force): {g}")
    return "\n".join(lines)
