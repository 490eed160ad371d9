"""The refresh flow: crawl and extract each source, embed, index, publish.

Orchestration only: each task wraps one coarse stage (a whole source, the
whole embedding pass), because a Prefect task run costs 10–90 ms here.
A source that fails is reported, keeps serving its last good tables, and the
others still publish.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from trustindex.crawl.git import SourceError, commit_time, ensure_mirror, mirror_path, open_mirror, resolve_ref
from trustindex.flows.sources_run import run_sources, sources_at_once
from trustindex.ingest import progress
from trustindex.ingest.incremental import Previous
from trustindex.ingest.keys import context_key, source_key
from trustindex.ingest.source import ingest_source
from trustindex.schemas.compilers import CompilerSpec
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.config import Identities, LedgerEntry, Source
from trustindex.schemas.embedding_model import DEFAULT_BACKEND, encoder_cache_dir
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import INDEX_FORMAT, SNAPSHOTS_DIR
from trustindex.schemas.tables import SCHEMA_VERSION
from trustindex.warehouse.build import linked_sha256, write_snapshot_files
from trustindex.warehouse.catalog import refresh_catalog
from trustindex.warehouse.embed_pipeline import SHARED, EmbedPipeline, overlap_enabled, worker_mode
from trustindex.warehouse.embed_worker import release, shared_worker
from trustindex.warehouse.embedder_factory import embedder_identity, make_embedder, model_loads
from trustindex.warehouse.embeddings import EmbeddingCache
from trustindex.warehouse.publish_gate import PublishRefused, check_publish
from trustindex.warehouse.runs import write_run_record
from trustindex.warehouse.snapshots import current_id, finish_snapshot, list_snapshots, new_build_dir, set_current
from trustindex.warehouse.tables import last_source_meta, load_source_tables, save_source_tables
from trustindex.warehouse.tokens import token_counter


def _transient(task, task_run, state) -> bool:
    """Retry git failures (network, a busy remote); a bug or a bad file is not retried."""
    return isinstance(state.result(raise_on_failure=False), SourceError)


@task(name="source", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1, retry_condition_fn=_transient)
def ingest_source_task(
    source: Source,
    data_dir: str,
    ids: Identities,
    ledger: list[LedgerEntry],
    policy: Policy,
    commit: str | None = None,
    fetch: bool = True,
    embed_backend: str | None = None,
    embed_mode: str = SHARED,
) -> dict:
    """``embed_backend``: embed chunk texts with this backend while extracting (warehouse.embed_pipeline), on the
    process's one worker or (``embed_mode`` per-source) a worker of this task's own; None leaves all embedding to
    the build task."""
    data = Path(data_dir)
    with progress.recording() as stages:
        # made inside the recording: its worker's stages (model, embed) are recorded with this task's
        pipeline = EmbedPipeline(embed_backend, data, source.name, embed_mode) if embed_backend else None
        # The one fetch of this source in this run (a backfill has made it already: fetch=False).
        with progress.stage("fetch", source=source.name):
            dest = mirror_path(data, source.name)
            repo = (
                ensure_mirror(source.url, dest, source.blob_limit, source.follows_head) if fetch else open_mirror(dest)
            )
            commit = commit or resolve_ref(repo, source.ref, source.url)
        ctx = context_key(source, ids, ledger, policy)
        key = source_key(source, commit, ids, ledger, policy)
        # history, tree, signatures and extraction (which has its own record, "extract"), the tables saved
        with progress.stage("ingest", source=source.name):
            tables = load_source_tables(data, source.name, key)
            note = "unchanged: tables reused"
            if tables is None:
                previous = None
                last = last_source_meta(data, source.name)
                if last and last[1].get("context") == ctx:
                    prev_tables = load_source_tables(data, source.name, last[0])
                    previous = Previous(last[1]["commit"], prev_tables) if prev_tables else None
                try:
                    result = ingest_source(
                        source,
                        data,
                        ids,
                        ledger,
                        policy,
                        token_counter(),
                        commit=commit,
                        previous=previous,
                        repo=repo,
                        on_chunks=pipeline.submit if pipeline else None,
                    )
                finally:
                    if pipeline is not None:
                        pipeline.close()  # the worker drained: the cache holds what it embedded
                tables, note = result.tables, result.note
            commit_date = iso_utc(commit_time(repo, commit))
            meta = {"commit": commit, "context": ctx, "commit_date": commit_date}
            save_source_tables(data, source.name, key, tables, meta)
    get_run_logger().info("source %s at %s: %s", source.name, commit[:12], note)
    if pipeline is not None and pipeline.stats.failed:
        get_run_logger().warning(
            "source %s: embedding during extraction failed: %s", source.name, pipeline.stats.failed
        )
    return {
        "source": source.name,
        "commit": commit,
        "commit_date": commit_date,
        "key": key,
        "tables": tables,
        "note": note,
        "stages": stages,
        # texts this task put in the embedding cache (a failed worker put none: the build embedded them)
        "embedded": pipeline.stats.encoded if pipeline and not pipeline.stats.failed else 0,
    }


def iso_utc(epoch_seconds: int) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat().replace("+00:00", "Z")


def build_inputs_key(
    keys: dict[str, str], rows: list[dict], backend: str, ann_min_rows: int, components: str = "", compiled: str = ""
) -> str:
    """Everything a snapshot's files depend on; equal keys give byte-identical snapshots.

    ``components``: the component registry's digest (it renames the stored version targets); ``compiled``: the
    compile checks' digest (flows.compile_step)."""
    payload = {
        "schema": SCHEMA_VERSION,
        "index_format": INDEX_FORMAT,
        "sources": sorted(keys.items()),
        "embedder": embedder_identity(backend),
        "ann_min_rows": ann_min_rows,
        **({"components": components} if components else {}),
        **({"compiled": compiled} if compiled else {}),
        "rows": sorted(
            (r["source"], r["status"], r["commit"] or "", r["config_sha256"], r["error"] or "") for r in rows
        ),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]


@task(name="embed-index-publish", cache_policy=NO_CACHE)
def build_and_publish(
    data_dir: str,
    per_source: dict,
    source_rows: list[dict],
    policy: Policy,
    backend: str,
    publish: bool,
    force: bool,
    inputs: str,
    rebuild: bool,
    components: ComponentRegistry | None = None,
) -> dict:
    log = get_run_logger()
    data = Path(data_dir)
    existing = (
        None
        if rebuild
        else next((m for m in reversed(list_snapshots(data)) if m.extra.get("build_inputs") == inputs), None)
    )
    stats = {"total": 0, "distinct": 0, "cache_hits": 0, "encoded": 0}
    with progress.recording() as stages:
        if existing is not None:
            sid, counts, reused = existing.snapshot_id, existing.row_counts, True
            log.info("inputs unchanged: snapshot %s already holds this build", sid)
        else:
            with progress.stage("model"):  # loaded, or exported once into the encoder cache
                embedder = make_embedder(backend, cache_dir=encoder_cache_dir(data))
            cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
            build = new_build_dir(data)
            counts, st = write_snapshot_files(
                build,
                per_source,
                source_rows,
                embedder,
                cache,
                ann_min_rows=policy.dense.exact_below,
                components=components,
            )
            stats = {"total": st.total, "distinct": st.distinct, "cache_hits": st.cache_hits, "encoded": st.encoded}
            with progress.stage("hash") as hashing:  # fsync, content hashes, the manifest
                known = linked_sha256(build, embedder)  # the encoder's files, verified at load: not hashed again
                hashed = [f for f in build.rglob("*") if f.is_file() and f.relative_to(build).as_posix() not in known]
                hashing.note(megabytes=round(sum(f.stat().st_size for f in hashed) / 1e6, 3))
                manifest = finish_snapshot(
                    data,
                    build,
                    sources=sorted(source_rows, key=lambda r: r["source"]),
                    embedding_model=embedder.info(),
                    row_counts=counts,
                    build_policy_id=policy.policy_id,
                    extra={"build_inputs": inputs},
                    known_sha256=known,
                )
            sid, reused = manifest.snapshot_id, False
        with progress.stage("publish"):  # the safety gate, CURRENT, the catalog
            gate = _publish(data, sid, policy, publish, force, log)
    return {
        "snapshot_id": sid,
        "published": publish,
        "reused_snapshot": reused,
        "row_counts": counts,
        "embeddings": stats,
        "forced_past_gate": gate if force else [],
        "stages": stages,
    }


def _publish(data: Path, sid: str, policy: Policy, publish: bool, force: bool, log) -> list[str]:
    """Move CURRENT to ``sid`` past the safety gate (or refuse), refresh the catalog; the gate's findings."""
    live = current_id(data)
    gate = []
    if publish and live != sid:
        gate = check_publish(data / SNAPSHOTS_DIR / live if live else None, data / SNAPSHOTS_DIR / sid, policy)
        if gate and not force:
            raise PublishRefused(
                f"refusing to publish snapshot {sid} (CURRENT stays {live}): "
                + "; ".join(gate)
                + ". If this loss is intended, run again with --force."
            )
        for g in gate:
            log.warning("publishing despite the safety gate (--force): %s", g)
        set_current(data, sid)
        refresh_catalog(data, data / SNAPSHOTS_DIR / sid)
    elif publish:
        refresh_catalog(data, data / SNAPSHOTS_DIR / sid)
    return gate


def _compile_step(per_source: dict, rows: list[dict], sources: list[Source], data_dir: str, compilers, log):
    """Every source's Compact code checked by each compiler (none configured: nothing changes)."""
    if not compilers:
        return per_source, {}
    from trustindex.flows.compile_step import compile_sources, resolve_compilers
    from trustindex.warehouse.compile_cache import CompileCache

    with progress.recording() as stages, progress.stage("compile"):
        resolved, notes = resolve_compilers(compilers, {s.name: s for s in sources}, Path(data_dir), fetch=False)
        out, report = compile_sources(per_source, rows, Path(data_dir), resolved, CompileCache(Path(data_dir)))
    report.notes[:0] = notes
    for note in report.notes:
        log.warning("%s", note)
    log.info("compile checks: %d compiled, %d from the cache (%.2f s)", report.compiled, report.cached, report.seconds)
    compilers_used = [c.identity.key for c in resolved]
    return out, {**report.as_dict(), "compilers": compilers_used, "digest": report.digest, "stages": stages}


@functools.cache  # once per process: what is alive at the first run
def freeze_start_up_heap() -> None:
    """Put every object alive now (imported modules, Prefect's and pydantic's schemas, the loaded libraries: ~300k
    objects) out of the cyclic collector's reach with ``gc.freeze``.

    Why: a refresh allocates enough to set off a full (generation 2) collection every few runs, and each one walked
    that whole start-up heap: 0.38 s inside a 1.6 s 1%-change refresh, measured with gc.callbacks, which made every
    third refresh 25% slower.  Frozen, a full collection takes ~0.04 s.  The cost: cyclic garbage alive at this
    moment is never collected; at the first run that is import-time leftovers, so it is done once, not per run."""
    gc.freeze()


@flow(name="trustindex-refresh")
def refresh_flow(
    sources: list[Source],
    ids: Identities,
    ledger: list[LedgerEntry],
    policy: Policy,
    data_dir: str,
    commits: dict[str, str] | None = None,
    publish: bool = True,
    backend: str = DEFAULT_BACKEND,
    force: bool = False,
    rebuild: bool = False,
    fetch: bool = True,
    components: ComponentRegistry | None = None,
    compilers: list[CompilerSpec] | None = None,
    max_sources: int | str | None = None,
) -> dict:
    """``fetch=False``: the caller has fetched every source's mirror in this run (a backfill, to resolve its
    commits); each is opened as it is, so a run fetches each source once.  ``compilers``: compilers.toml's
    entries; every source's Compact code is checked with each (flows.compile_step).  ``max_sources``: source
    tasks run at once (a number or "all"; default TRUSTINDEX_SOURCES_AT_ONCE, else the usable cores), the rest
    queued."""
    freeze_start_up_heap()
    log = get_run_logger()
    started = time.monotonic()
    commits = commits or {}
    embed_early = backend if overlap_enabled() else None  # the switches are read here, once per run
    mode, limit, loads = worker_mode(), sources_at_once(len(sources), max_sources), model_loads()
    worker = shared_worker(backend, Path(data_dir))
    try:
        futures = run_sources(
            sources,
            lambda s: ingest_source_task.submit(
                s, data_dir, ids, ledger, policy, commits.get(s.name), fetch, embed_early, mode
            ),
            limit,
            lambda: worker.pending_texts,
        )
    finally:
        release(backend, Path(data_dir))
    per_source, rows, failures, keys, stages, embedded = {}, [], {}, {}, [], 0
    for s in sources:
        out = futures[s.name].result(raise_on_failure=False)
        row = {
            "source": s.name,
            "repo": s.url,
            "ref": s.ref,
            "commit": None,
            "commit_date": None,
            "publisher": s.publisher,
            "tier": ids.tier_of(s.publisher),
            "config_sha256": s.config_sha256,
            "status": "ok",
            "error": None,
            "note": None,
        }
        if isinstance(out, BaseException):
            failures[s.name] = str(out)
            log.error("source %s failed: %s", s.name, out)
            row.update(status="failed", error=str(out))
            last = last_source_meta(Path(data_dir), s.name)
            tables = load_source_tables(Path(data_dir), s.name, last[0]) if last else None
            if tables is not None and last[1].get("context") == context_key(s, ids, ledger, policy):
                per_source[s.name], keys[s.name] = tables, last[0]
                row.update(
                    commit=last[1]["commit"],
                    commit_date=last[1].get("commit_date"),
                    note=f"failed; serving its last good tables (commit {last[1]['commit'][:12]})",
                )
            else:
                row["note"] = "failed; no earlier tables to serve"
        else:
            per_source[s.name], keys[s.name] = out["tables"], out["key"]
            stages.extend(out["stages"])
            embedded += out["embedded"]
            row.update(commit=out["commit"], commit_date=out["commit_date"], note=out["note"])
        rows.append(row)
    if not per_source:
        raise SourceError("every source failed: " + "; ".join(f"{k}: {v}" for k, v in failures.items()))
    digest = components.digest if components else ""
    per_source, compiled = _compile_step(per_source, rows, sources, data_dir, compilers, log)
    inputs = build_inputs_key(keys, rows, backend, policy.dense.exact_below, digest, compiled.get("digest", ""))
    result = build_and_publish(data_dir, per_source, rows, policy, backend, publish, force, inputs, rebuild, components)
    # texts the sources' pipelines encoded are this run's work, not the cache's, though the build found them there
    early = min(embedded, result["embeddings"]["cache_hits"])
    result["embeddings"]["encoded"] += early
    result["embeddings"]["cache_hits"] -= early
    if compiled:
        result["compile"] = {k: v for k, v in compiled.items() if k not in ("digest", "stages")}
        stages.extend(compiled["stages"])
    result["failures"] = failures
    result["resources"] = {"sources_at_once": limit, "embed_worker": mode, "model_loads": model_loads() - loads}
    result["sources"] = rows
    result["stages"] = stages + result["stages"]  # the sources in their configured order, then the build
    result["seconds"] = round(time.monotonic() - started, 3)
    result["flow_run_id"] = str(flow_run.id) if flow_run.id else None
    write_run_record(Path(data_dir), result)
    publish_run_artifact(Path(data_dir), result)
    return result


def publish_run_artifact(data_dir: Path, result: dict) -> None:
    """A markdown artifact on the flow run: what was built, from what, and how each source went."""
    from prefect.artifacts import create_markdown_artifact

    lines = [f"**snapshot {result['snapshot_id']}** ({'published' if result['published'] else 'built'})", ""]
    lines += [f"- {s['source']}: {s['status']} at {(s['commit'] or '')[:12]} — {s['note']}" for s in result["sources"]]
    lines += ["", f"**time**: {result['seconds']:.2f} s in the flow", "", "| stage | source | seconds | count | rate |"]
    lines += ["|---|---|---:|---:|---|"]
    for r in result["stages"]:
        count = f"{r['count']:,} {r['unit']}" if r.get("unit") else ""
        lines.append(
            f"| {r['stage']} | {r['source'] or ''} | {r['seconds']:.2f} | {count} | {', '.join(progress.rates(r))} |"
        )
    try:
        from trustindex.warehouse.report_html import report_markdown

        body = report_markdown(data_dir) if result["published"] else ""
    except Exception as e:  # the report is a courtesy; the run's result stands without it
        body = f"(report unavailable: {e})"
    create_markdown_artifact(
        "\n".join(lines) + "\n\n" + body, key="trustindex-run", description="trustindex refresh summary"
    )


def with_task_runner(flow_fn, dask_address: str | None):
    """The flow as is (Prefect's thread pool), or running its tasks on an existing Dask cluster."""
    if not dask_address:
        return flow_fn
    from prefect_dask import DaskTaskRunner

    return flow_fn.with_options(task_runner=DaskTaskRunner(address=dask_address))


@flow(name="trustindex-refresh-files")
def refresh_from_files(
    sources_file: str,
    data_dir: str = "data",
    identities_file: str | None = None,
    policy_file: str | None = None,
    ledger_file: str | None = None,
    backend: str = DEFAULT_BACKEND,
    publish: bool = True,
    force: bool = False,
) -> dict:
    """The refresh with file-path parameters: what a Prefect deployment (deploy/prefect.yaml) runs."""
    from trustindex.schemas.config import load_build_config
    from trustindex.warehouse.lock import data_dir_lock

    cfg = load_build_config(sources_file, identities_file, policy_file, ledger_file)
    # a worker's log, not a terminal: a progress line per stage at a bounded rate instead of silence
    shown = None if sys.stderr.isatty() else progress.LINES
    with data_dir_lock(Path(data_dir), wait_seconds=600, what="refresh (deployment)"), progress.enabled(shown):
        return refresh_flow(
            cfg.sources,
            cfg.ids,
            cfg.ledger,
            cfg.policy,
            data_dir,
            publish=publish,
            backend=backend,
            force=force,
            components=cfg.components,
        )
