"""The refresh's per-source task: fetch one source, extract it (or reuse its tables), save its tables.

A task per source, not per file: a Prefect task run costs 10–90 ms here.  Git failures are retried; the flow
(flows/refresh.py) reports a source that still fails and serves its last good tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from trustindex.crawl.git import SourceError, commit_date_iso, ensure_mirror, mirror_path, open_mirror, resolve_ref
from trustindex.encoder.pipeline import EmbedPipeline
from trustindex.encoder.tokens import token_counter
from trustindex.ingest.incremental import Previous
from trustindex.ingest.keys import context_key, source_key
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.runtime import progress
from trustindex.schemas.config import BuildConfig, Source
from trustindex.schemas.refresh_run import RefreshRequest
from trustindex.warehouse.tables import last_source_meta, load_source_tables, save_source_tables


@dataclass(frozen=True)
class SourceRun:
    """What every source task of one run shares: the configuration, the request, and the run's embedding switches
    (read once per run by the flow).

    ``embed_backend``: embed chunk texts with this backend while extracting (encoder.pipeline), on the
    process's one worker or (``embed_mode`` per-source) a worker of the task's own; None leaves all embedding to
    the build task."""

    cfg: BuildConfig
    request: RefreshRequest
    embed_backend: str | None
    embed_mode: str


@dataclass(frozen=True)
class SourceOutcome:
    """One source's task result: the commit taken, the key its tables were saved under (they stay on disk: the
    build reads them, warehouse.tables.SavedSourceTables), how they were made, the stages' records, and the chunk
    texts the task put in the embedding cache (a failed worker put none: the build embedded them)."""

    source: str
    commit: str
    commit_date: str
    key: str
    note: str
    stages: list[dict]
    embedded: int


def _transient(task, task_run, state) -> bool:
    """Retry git failures (network, a busy remote); a bug or a bad file is not retried."""
    return isinstance(state.result(raise_on_failure=False), SourceError)


@task(name="source", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1, retry_condition_fn=_transient)
def ingest_source_task(source: Source, run: SourceRun) -> SourceOutcome:
    cfg, data = run.cfg, Path(run.request.data_dir)
    with progress.recording() as stages:
        # made inside the recording: its worker's stages (model, embed) are recorded with this task's
        pipeline = EmbedPipeline(run.embed_backend, data, source.name, run.embed_mode) if run.embed_backend else None
        # The one fetch of this source in this run (a backfill has made it already: fetch=False).
        with progress.stage("fetch", source=source.name):
            dest = mirror_path(data, source.name)
            repo = (
                ensure_mirror(source.url, dest, source.blob_limit, source.follows_head)
                if run.request.fetch
                else open_mirror(dest)
            )
            commit = run.request.commits.get(source.name) or resolve_ref(repo, source.ref, source.url)
        ctx = context_key(source, cfg.ids, cfg.ledger, cfg.policy)
        key = source_key(source, commit, cfg.ids, cfg.ledger, cfg.policy)
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
                        cfg.ids,
                        cfg.ledger,
                        cfg.policy,
                        token_counter(),
                        IngestRun(commit, previous, repo, pipeline.submit if pipeline else None),
                    )
                finally:
                    if pipeline is not None:
                        pipeline.close()  # handed over (or, when the flow does not drain the worker, embedded)
                tables, note = result.tables, result.note
            commit_date = commit_date_iso(repo, commit)
            meta = {"commit": commit, "context": ctx, "commit_date": commit_date}
            save_source_tables(data, source.name, key, tables, meta)
    get_run_logger().info("source %s at %s: %s", source.name, commit[:12], note)
    if pipeline is not None and pipeline.stats.failed:
        get_run_logger().warning(
            "source %s: embedding during extraction failed: %s", source.name, pipeline.stats.failed
        )
    # a source that did not wait for its texts leaves their count to the flow (the shared worker's total)
    embedded = pipeline.stats.encoded if pipeline and pipeline.stats.waited and not pipeline.stats.failed else 0
    return SourceOutcome(source.name, commit, commit_date, key, note, stages, embedded)
