"""The refresh flow: crawl and extract each source, embed, index, publish.

Orchestration only: each task wraps one coarse stage (a whole source, the
whole embedding pass), because a Prefect task run costs 10–90 ms here.
A source that fails is reported and the others still publish.
"""
from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from crawl.git import SourceError, ensure_mirror, mirror_path, resolve_ref
from ingest.keys import source_key
from ingest.source import ingest_source
from schemas.config import Identities, LedgerEntry, Source
from schemas.policy import Policy
from warehouse.build import write_snapshot_files
from warehouse.catalog import refresh_catalog
from warehouse.embeddings import EmbeddingCache, make_embedder
from warehouse.snapshots import finish_snapshot, new_build_dir, set_current
from warehouse.tables import load_source_tables, save_source_tables
from warehouse.tokens import token_counter


@task(name="source", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1,
      retry_condition_fn=lambda t, tr, state: isinstance(state.result(raise_on_failure=False), SourceError))
def ingest_source_task(source: Source, data_dir: str, ids: Identities, ledger: list[LedgerEntry],
                       policy: Policy, commit: str | None = None) -> dict:
    data = Path(data_dir)
    repo = ensure_mirror(source.url, mirror_path(data, source.name))
    commit = commit or resolve_ref(repo, source.ref, source.url)
    key = source_key(source, commit, ids, ledger, policy)
    tables = load_source_tables(data, source.name, key)
    reused = tables is not None
    if tables is None:
        result = ingest_source(source, data, ids, ledger, policy, token_counter(), commit=commit)
        save_source_tables(data, source.name, key, result.tables)
        tables = result.tables
    return {"source": source.name, "commit": commit, "key": key, "tables": tables, "reused": reused}


@task(name="embed-index-publish", cache_policy=NO_CACHE)
def build_and_publish(data_dir: str, per_source: dict, source_rows: list[dict], policy: Policy,
                      backend: str, publish: bool) -> dict:
    data = Path(data_dir)
    embedder = make_embedder(backend)
    info = embedder.info()
    cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
    build = new_build_dir(data)
    counts, stats = write_snapshot_files(build, per_source, source_rows, embedder, cache)
    manifest = finish_snapshot(data, build, sources=sorted(source_rows, key=lambda r: r["source"]),
                               embedding_model=info, row_counts=counts, build_policy_id=policy.policy_id)
    if publish:
        set_current(data, manifest.snapshot_id)
        refresh_catalog(data, data / "snapshots" / manifest.snapshot_id)
    return {"snapshot_id": manifest.snapshot_id, "published": publish, "row_counts": counts,
            "embeddings": {"total": stats.total, "distinct": stats.distinct, "cache_hits": stats.cache_hits,
                           "encoded": stats.encoded}}


@flow(name="trustindex-refresh")
def refresh_flow(sources: list[Source], ids: Identities, ledger: list[LedgerEntry], policy: Policy,
                 data_dir: str, commits: dict[str, str] | None = None, publish: bool = True,
                 backend: str = "sentence-transformers") -> dict:
    log = get_run_logger()
    commits = commits or {}
    futures = {s.name: ingest_source_task.submit(s, data_dir, ids, ledger, policy, commits.get(s.name))
               for s in sources}
    per_source, rows, failures = {}, [], {}
    for s in sources:
        state = futures[s.name].wait() or futures[s.name].state
        out = futures[s.name].result(raise_on_failure=False)
        tier = ids.tier_of(s.publisher)
        if isinstance(out, BaseException):
            failures[s.name] = str(out)
            log.error("source %s failed: %s", s.name, out)
            rows.append({"source": s.name, "repo": s.url, "ref": s.ref, "commit": None, "publisher": s.publisher,
                         "tier": tier, "config_sha256": s.config_sha256, "status": "failed", "error": str(out)})
            continue
        per_source[s.name] = out["tables"]
        rows.append({"source": s.name, "repo": s.url, "ref": s.ref, "commit": out["commit"],
                     "publisher": s.publisher, "tier": tier, "config_sha256": s.config_sha256,
                     "status": "ok", "error": None})
        log.info("source %s at %s: %s", s.name, out["commit"][:12], "reused" if out["reused"] else "extracted")
    if not per_source:
        raise SourceError("every source failed: " + "; ".join(f"{k}: {v}" for k, v in failures.items()))
    result = build_and_publish(data_dir, per_source, rows, policy, backend, publish)
    result["failures"] = failures
    result["sources"] = rows
    return result


@flow(name="trustindex-refresh-files")
def refresh_from_files(sources_file: str, data_dir: str = "data", identities_file: str | None = None,
                       policy_file: str | None = None, ledger_file: str | None = None,
                       backend: str = "sentence-transformers", publish: bool = True) -> dict:
    """The refresh with file-path parameters: what a Prefect deployment (deploy/prefect.yaml) runs."""
    from schemas.config import load_build_config

    cfg = load_build_config(sources_file, identities_file, policy_file, ledger_file)
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    result = refresh_flow(cfg.sources, cfg.ids, cfg.ledger, cfg.policy, data_dir, publish=publish, backend=backend)
    return {k: v for k, v in result.items() if k != "tables"}
