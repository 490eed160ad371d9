"""Backfills: build the index as the sources stood at a date or at given commits.

Each source is taken at its last commit on or before the end of the given day
(UTC), all sources in parallel through the refresh flow's per-source tasks.
The same request gives the same snapshot id; CURRENT moves only with
``publish=True``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from trustindex.crawl.git import SourceError, commit_as_of, ensure_mirror, mirror_path, resolve_ref
from trustindex.flows.refresh import refresh_flow
from trustindex.schemas.config import Source
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.refresh_run import BackfillRequest, BackfillResult, ConfigFiles


def end_of_day(as_of: str) -> str:
    """'2025-06-01' → the last second of that day in UTC; a full timestamp is kept as given."""
    try:
        if len(as_of) == 10:
            return datetime.combine(date.fromisoformat(as_of), time(23, 59, 59), UTC).isoformat()
        dt = datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError("--as-of", None, f"{as_of!r} is not a date (YYYY-MM-DD) or an ISO timestamp") from None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).isoformat()


@task(name="resolve-as-of", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def resolve_commit(source: Source, data_dir: str, as_of_end: str | None, pinned: str | None) -> str:
    repo = ensure_mirror(source.url, mirror_path(Path(data_dir), source.name), source.blob_limit, source.follows_head)
    if pinned:
        return resolve_ref(repo, pinned, source.url)
    if as_of_end:
        return commit_as_of(repo, source.ref, as_of_end, source.url)
    return resolve_ref(repo, source.ref, source.url)


@flow(name="trustindex-backfill")
def backfill_flow(files: ConfigFiles, request: BackfillRequest) -> BackfillResult:
    """The sources of ``files`` as they stood at ``request.as_of`` (or its pinned commits), built by the refresh
    flow; CURRENT moves only when the request asks to publish."""
    cfg = files.load()
    commits = dict(request.commits)
    unknown = sorted(set(commits) - {s.name for s in cfg.sources})
    if unknown:
        raise ConfigError(files.sources, f"source[{unknown[0]}]", "--commit names a source that is not configured")
    if request.as_of is None and not commits:
        raise ConfigError("backfill", None, "give --as-of DATE or --commit SOURCE=SHA")
    as_of_end = end_of_day(request.as_of) if request.as_of else None
    data_dir = request.data_dir
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    chosen = list(cfg.sources)  # sources without --commit are taken as of the date, else at their ref
    futures = {s.name: resolve_commit.submit(s, data_dir, as_of_end, commits.get(s.name)) for s in chosen}
    resolved = {}
    for name, fut in futures.items():
        out = fut.result(raise_on_failure=False)
        if isinstance(out, BaseException):
            raise SourceError(f"backfill: source {name}: {out}")
        resolved[name] = out
    # resolve_commit fetched each source for this run: the refresh opens the mirrors as they are
    return BackfillResult.of(refresh_flow(cfg, request.refresh(resolved)), as_of=as_of_end, commits=resolved)
