"""What several commands do the same way: the build commands' Prefect environment and progress display, JSON on
standard output, the servers' snapshot source."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def prefect_env(prefect_home: Path) -> None:
    """The environment a build runs Prefect and the model under, where the caller has not set it:
    Prefect's state in ``prefect_home``, a patient ephemeral server, no analytics, quiet logs, and
    no network for the model (the tests use it too)."""
    os.environ.setdefault("PREFECT_HOME", str(prefect_home.resolve()))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def show_progress(a) -> str | None:
    """Progress bars for a person at a terminal, plain lines at a bounded rate in a log (cron, CI), none with
    --quiet; --json keeps bars off (lines on standard error leave the JSON on standard output intact)."""
    from trustindex.runtime.progress import BARS, LINES

    if getattr(a, "quiet", False):
        return None
    if sys.stderr.isatty():
        return None if getattr(a, "json", False) else BARS
    return LINES


def print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def source_spec(a, cache: str):
    """``serve``'s and ``mcp``'s snapshot source: a data directory or an export target, and how it is trusted."""
    from trustindex.schemas.signing import parse_duration
    from trustindex.serve.live import SourceSpec

    max_age = parse_duration(a.max_snapshot_age, "--max-snapshot-age") if a.max_snapshot_age else 0.0
    extra = {} if getattr(a, "query_cache", None) is None else {"query_cache": a.query_cache}  # default: QUERY_CACHE
    spec = SourceSpec(
        data=None if a.source else str(a.data),
        uri=a.source,
        cache=str(Path(cache).expanduser().resolve()),
        endpoint=a.endpoint,
        grace_seconds=getattr(a, "grace", 600.0),
        policy=a.policy,
        trusted_keys=tuple(str(Path(k).resolve()) for k in a.trusted_key),
        keep_retired=getattr(a, "keep_retired", 2),
        cache_max_bytes=getattr(a, "cache_max_bytes", 0),
        max_snapshot_age=max_age,
        **extra,
    )
    spec.check()
    return spec
