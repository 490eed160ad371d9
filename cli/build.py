"""Configuration loading and flow invocation for the build commands."""
from __future__ import annotations

from pathlib import Path

from schemas.config import BuildConfig, load_build_config  # noqa: F401  (re-exported for the command line)


def run_refresh(cfg: BuildConfig, data_dir: Path, backend: str = "sentence-transformers",
                commits: dict[str, str] | None = None, publish: bool = True) -> dict:
    from flows.refresh import refresh_flow

    data_dir.mkdir(parents=True, exist_ok=True)
    return refresh_flow(cfg.sources, cfg.ids, cfg.ledger, cfg.policy, str(data_dir), commits=commits,
                        publish=publish, backend=backend)


def describe_refresh(result: dict) -> str:
    lines = [f"snapshot {result['snapshot_id']} {'published' if result['published'] else 'built'}"]
    for s in result["sources"]:
        lines.append(f"  {s['source']}: {s['status']}" + (f" at {s['commit'][:12]}" if s["commit"] else "")
                     + (f" — {s['error']}" if s["error"] else ""))
    rc = result["row_counts"]
    e = result["embeddings"]
    lines.append(f"  {rc.get('documents', 0)} documents, {rc.get('chunks', 0)} chunks; embeddings: "
                 f"{e['encoded']} encoded, {e['cache_hits']} from cache ({e['distinct']} distinct)")
    return "\n".join(lines)
