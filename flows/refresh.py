"""The refresh flow: crawl and extract each source, embed, index, publish.

Orchestration only: each task wraps one coarse stage (a whole source: flows/source_task.py, the whole embedding
pass), because a Prefect task run costs 10–90 ms here.  A source that fails is reported, keeps serving its last
good tables, and the others still publish.  The flows take the operator's configuration (``BuildConfig``) and a
``RefreshRequest``, and return typed results (schemas/refresh_run.py) whose JSON is the run's record.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from trustindex.crawl.git import SourceError
from trustindex.encoder.embedding_cache import EmbeddingCache
from trustindex.encoder.factory import make_embedder, model_loads, release_loaded_models
from trustindex.encoder.pipeline import overlap_enabled, worker_mode
from trustindex.encoder.worker import SharedEmbedWorker, cancel, release, shared_worker
from trustindex.flows.embed_cluster import embed_on_cluster
from trustindex.flows.source_task import SourceOutcome, SourceRun, ingest_source_task
from trustindex.flows.sources_run import run_sources, sources_at_once
from trustindex.ingest.keys import context_key
from trustindex.runtime import progress
from trustindex.runtime.memory import return_freed_memory
from trustindex.schemas.config import BuildConfig, Source
from trustindex.schemas.embedding_model import encoder_cache_dir
from trustindex.schemas.refresh_run import (
    FAILED,
    BuildResult,
    ConfigFiles,
    EmbeddingCounts,
    RefreshRequest,
    RefreshResult,
    Resources,
    SourceRow,
)
from trustindex.warehouse.build import build_inputs_key, linked_sha256, write_snapshot_files
from trustindex.warehouse.publish_gate import publish_snapshot
from trustindex.warehouse.runs import write_run_record
from trustindex.warehouse.snapshots import finish_snapshot, list_snapshots, new_build_dir
from trustindex.warehouse.tables import last_source_meta, load_source_tables, saved_source_tables


@task(name="embed-index-publish", cache_policy=NO_CACHE)
def build_and_publish(
    cfg: BuildConfig, request: RefreshRequest, per_source: dict, source_rows: list[dict], inputs: str
) -> BuildResult:
    """Embed, index and write the snapshot of ``per_source`` (unless one already holds ``inputs``: the build's
    key), then publish it past the safety gate when the request asks to."""
    log = get_run_logger()
    data, policy = Path(request.data_dir), cfg.policy
    existing = snapshot_holding(data, inputs, request.rebuild)
    embeddings = EmbeddingCounts()
    with progress.recording() as stages:
        if existing is not None:
            sid, counts, reused = existing.snapshot_id, existing.row_counts, True
            log.info("inputs unchanged: snapshot %s already holds this build", sid)
        else:
            # what the sources' stage held and freed, back to the system before the build's peak: the encoder's
            # arenas (the build embeds only what the cache lacks: nothing, when the sources embedded their texts)
            # and the heaps; a refresh whose snapshot exists already builds nothing and keeps both
            release_loaded_models()
            return_freed_memory()
            with progress.stage("model"):  # loaded, or exported once into the encoder cache
                embedder = make_embedder(request.backend, cache_dir=encoder_cache_dir(data))
            cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
            build = new_build_dir(data)
            counts, st = write_snapshot_files(
                build,
                per_source,
                source_rows,
                embedder,
                cache,
                ann_min_rows=policy.dense.exact_below,
                components=cfg.components,
            )
            embeddings = EmbeddingCounts(st.total, st.distinct, st.cache_hits, st.encoded)
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
            gate = publish_snapshot(data, sid, policy, request.force, log.warning) if request.publish else []
    return BuildResult(
        sid, request.publish, reused, counts, embeddings, tuple(gate) if request.force else (), tuple(stages)
    )


def snapshot_holding(data: Path, inputs: str, rebuild: bool = False):
    """The newest snapshot built from these inputs (the build's key), whose build a refresh reuses; None when
    there is none or the request asks to rebuild."""
    if rebuild:
        return None
    return next((m for m in reversed(list_snapshots(data)) if m.extra.get("build_inputs") == inputs), None)


def _compile_step(per_source: dict, rows: list[dict], cfg: BuildConfig, data: Path, log) -> tuple[dict, dict]:
    """Every source's Compact code checked by each compiler (none configured: nothing changes)."""
    if not cfg.compilers:
        return per_source, {}
    from trustindex.flows.compile_step import compile_sources, resolve_compilers
    from trustindex.warehouse.compile_cache import CompileCache

    with progress.recording() as stages, progress.stage("compile"):
        resolved, notes = resolve_compilers(cfg.compilers, {s.name: s for s in cfg.sources}, data, fetch=False)
        out, report = compile_sources(per_source, rows, data, resolved, CompileCache(data))
    report.notes[:0] = notes
    for note in report.notes:
        log.warning("%s", note)
    log.info("compile checks: %d compiled, %d from the cache (%.2f s)", report.compiled, report.cached, report.seconds)
    compilers_used = [c.identity.key for c in resolved]
    return out, {**report.as_dict(), "compilers": compilers_used, "digest": report.digest, "stages": stages}


def _failed_source(s: Source, error: BaseException, cfg: BuildConfig, data: Path) -> tuple[SourceRow, str | None]:
    """A failed source's row, and the key of its last good tables when they were made under today's context."""
    tier = cfg.ids.tier_of(s.publisher)
    last = last_source_meta(data, s.name)
    tables = load_source_tables(data, s.name, last[0]) if last else None
    if tables is None or last[1].get("context") != context_key(s, cfg.ids, cfg.ledger, cfg.policy):
        note = "failed; no earlier tables to serve"
        return SourceRow.of(s, tier, status=FAILED, error=str(error), note=note), None
    commit = last[1]["commit"]
    note = f"failed; serving its last good tables (commit {commit[:12]})"
    row = SourceRow.of(
        s, tier, commit=commit, commit_date=last[1].get("commit_date"), status=FAILED, error=str(error), note=note
    )
    return row, last[0]


def final_embed_counts(records: list[dict], worker: SharedEmbedWorker) -> list[dict]:
    """A source's stage records with its "embed" stage's counts made final: a source that handed over its texts
    without waiting (embed_worker.py) recorded what was embedded by then; the stopped worker knows the rest."""
    out = []
    for r in records:
        feed = worker.feeds.get(r["source"]) if r["stage"] == "embed" and r.get("waited") is False else None
        if feed is not None:
            # the stage ran from the source's first document to its last text in the cache, as a waiting one's does
            tail = (feed.flushed_at or feed.handed_over or 0.0) - (feed.handed_over or 0.0)
            seconds = round(r["seconds"] + max(tail, 0.0), 4)
            rate = round(feed.encoded / seconds, 1) if feed.encoded and seconds > 0 else None
            r = r | {
                "count": feed.encoded,
                "cache_hits": feed.cache_hits,
                "shared": feed.shared,
                "distinct": len(feed.seen),
                "seconds": seconds,
                "per_second": rate,
            }
        out.append(r)
    return out


def adding_up(build_stages: tuple[dict, ...], earlier: list[dict], early: int) -> list[dict]:
    """The build's stage records with its "embed" record counting only what no earlier record counted, so that the
    run's embed records add up to its summary (issue 41 item 4): the build found in the cache the ``early`` texts
    the sources (or a cluster) encoded this run and the texts the sources found there already; what is left of its
    cache hits are texts no source submitted this run (a source whose tables were reused)."""
    counted = sum(r.get("cache_hits", 0) for r in earlier if r["stage"] == "embed")
    out = []
    for r in build_stages:
        if r["stage"] == "embed" and "cache_hits" in r:
            from_sources = min(r["cache_hits"], early + counted)
            r = r | {"cache_hits": r["cache_hits"] - from_sources, "counted_by_sources": from_sources}
        out.append(r)
    return out


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
def refresh_flow(cfg: BuildConfig, request: RefreshRequest) -> RefreshResult:
    """Every configured source at the request's commits (else its ref), built into a snapshot and published when
    the request asks to.  ``cfg.compilers``: compilers.toml's entries; every source's Compact code is checked with
    each (flows.compile_step)."""
    freeze_start_up_heap()
    log = get_run_logger()
    started = time.monotonic()
    data, backend = Path(request.data_dir), request.backend
    # the switches are read here, once per run; with a cluster the sources embed nothing: the shards do
    embed_early = backend if overlap_enabled() and not request.dask_address else None
    mode, limit, loads = worker_mode(), sources_at_once(len(cfg.sources), request.max_sources), model_loads()
    run = SourceRun(cfg, request, embed_early, mode)
    worker = shared_worker(backend, data)
    worker.drained_by_flow = True  # the sources in this process hand over their texts and end (embed_worker.py)
    # the run's own stages: "sources" (every source task, which record their own stages within it) and "drain"
    with progress.recording() as flow_stages:
        try:
            futures = run_sources(cfg.sources, lambda s: ingest_source_task.submit(s, run), limit, worker.waiting_texts)
        except BaseException:  # stopped (SIGTERM, Ctrl-C) or crashed: keep what was encoded, end the sources now
            cancel(backend, data)
            raise
        release(backend, data)  # the texts still queued, embedded (a "drain" stage with their count)
    ran = [r for r in flow_stages if r["stage"] == "sources"]  # first; the sources' own records follow it
    per_source, rows, failures, keys, stages, embedded = {}, [], {}, {}, ran, 0
    for s in cfg.sources:
        out = futures[s.name].result(raise_on_failure=False)
        if isinstance(out, SourceOutcome):
            # the tables stay on disk (save_source_tables): the build reads them (SavedSourceTables)
            per_source[s.name], keys[s.name] = saved_source_tables(data, s.name, out.key), out.key
            stages.extend(final_embed_counts(out.stages, worker))
            embedded += out.embedded
            tier = cfg.ids.tier_of(s.publisher)
            rows.append(SourceRow.of(s, tier, commit=out.commit, commit_date=out.commit_date, note=out.note))
            continue
        failures[s.name] = str(out)
        log.error("source %s failed: %s", s.name, out)
        row, key = _failed_source(s, out, cfg, data)
        if key is not None:
            per_source[s.name], keys[s.name] = saved_source_tables(data, s.name, key), key
        rows.append(row)
    stages.extend(r for r in flow_stages if r["stage"] != "sources")  # the drain, after the sources' own records
    embedded += worker.encoded  # this process's shared worker (its sources left their counts to it: 0 above)
    if not per_source:
        raise SourceError("every source failed: " + "; ".join(f"{k}: {v}" for k, v in failures.items()))
    row_dicts = [r.to_json() for r in rows]
    per_source, compiled = _compile_step(per_source, row_dicts, cfg, data, log)
    digest = cfg.components.digest if cfg.components else ""
    exact_below = cfg.policy.dense.exact_below
    inputs = build_inputs_key(keys, row_dicts, backend, exact_below, digest, compiled.get("digest", ""))
    stages.extend(compiled.get("stages", []))
    if request.dask_address and snapshot_holding(data, inputs, request.rebuild) is None:
        with progress.recording() as cluster_stages:  # what the cache lacks, embedded on the cluster's workers
            embedded += embed_on_cluster(request.dask_address, backend, data, per_source).encoded
        stages.extend(cluster_stages)
    built = build_and_publish(cfg, request, per_source, row_dicts, inputs)
    result = RefreshResult.of(
        built,
        # the sources in configured order, the compile checks, the cluster's embedding, then the build
        stages=(*stages, *adding_up(built.stages, stages, embedded)),
        # texts the sources' pipelines (or the cluster) encoded are this run's work, not the cache's, though the
        # build found them
        embeddings=built.embeddings.with_encoded_early(embedded),
        compile={k: v for k, v in compiled.items() if k not in ("digest", "stages")} if compiled else None,
        failures=failures,
        resources=Resources(limit, mode, model_loads() - loads),
        sources=tuple(rows),
        seconds=round(time.monotonic() - started, 3),
        flow_run_id=str(flow_run.id) if flow_run.id else None,
    )
    write_run_record(data, result.to_json())
    publish_run_artifact(data, result)
    return result


def publish_run_artifact(data_dir: Path, result: RefreshResult) -> None:
    """A markdown artifact on the flow run: what was built, from what, and how each source went."""
    from prefect.artifacts import create_markdown_artifact

    lines = [f"**snapshot {result.snapshot_id}** ({'published' if result.published else 'built'})", ""]
    lines += [f"- {s.source}: {s.status} at {(s.commit or '')[:12]} — {s.note}" for s in result.sources]
    lines += ["", f"**time**: {result.seconds:.2f} s in the flow", "", "| stage | source | seconds | count | rate |"]
    lines += ["|---|---|---:|---:|---|"]
    for r in result.stages:
        count = f"{r['count']:,} {r['unit']}" if r.get("unit") else ""
        lines.append(
            f"| {r['stage']} | {r['source'] or ''} | {r['seconds']:.2f} | {count} | {', '.join(progress.rates(r))} |"
        )
    try:
        from trustindex.report.html import report_markdown

        body = report_markdown(data_dir) if result.published else ""
    except Exception as e:  # the report is a courtesy; the run's result stands without it
        body = f"(report unavailable: {e})"
    create_markdown_artifact(
        "\n".join(lines) + "\n\n" + body, key="trustindex-run", description="trustindex refresh summary"
    )


def with_task_runner(flow_fn, dask_address: str | None):
    """The flow as is (Prefect's thread pool), or running its tasks (the per-source tasks: ``--dask-sources``) on
    an existing Dask cluster, which then needs the data directory shared.  The embedding shards go to the cluster
    named by ``RefreshRequest.dask_address`` whichever runner the flow has (flows/embed_cluster.py)."""
    if not dask_address:
        return flow_fn
    from prefect_dask import DaskTaskRunner

    return flow_fn.with_options(task_runner=DaskTaskRunner(address=dask_address))


@flow(name="trustindex-refresh-files")
def refresh_from_files(files: ConfigFiles, request: RefreshRequest) -> dict:
    """The refresh of the configuration ``files`` name: what a Prefect deployment runs (deploy/prefect.yaml, its
    parameters ``files`` and ``request`` as JSON objects); ``request.dask_address``: embed on that Dask cluster
    (its workers reach the deployment's Prefect API)."""
    from trustindex.warehouse.lock import data_dir_lock

    cfg = files.load()
    # a worker's log, not a terminal: a progress line per stage at a bounded rate instead of silence
    shown = None if sys.stderr.isatty() else progress.LINES
    with data_dir_lock(Path(request.data_dir), wait_seconds=600, what="refresh (deployment)"), progress.enabled(shown):
        return refresh_flow(cfg, request).to_json()
