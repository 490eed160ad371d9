"""``trustindex backfill``: the index built as the sources stood at a date or at given commits."""

from __future__ import annotations

import time
from pathlib import Path

from trustindex.cli.extras import require
from trustindex.schemas.errors import TrustIndexError

ABOUT = "build the index as the sources stood at a date or commits"
EXAMPLES = (
    "trustindex backfill --sources sources.toml --as-of 2026-06-01 --data data",
    "trustindex backfill --sources sources.toml --commit midnight-docs=COMMIT_SHA --publish",
)
OPTIONS = ("build", "data", "json")


def arguments(b) -> None:
    b.add_argument("--quiet", action="store_true", help="no progress bars")
    b.add_argument("--as-of", metavar="DATE", help="each source as it stood on this date (YYYY-MM-DD)")
    b.add_argument("--commit", action="append", metavar="SOURCE=SHA", help="pin one source to a commit (repeatable)")
    b.add_argument("--publish", action="store_true", help="also move CURRENT to the backfilled snapshot")
    b.add_argument("--force", action="store_true", help="with --publish: publish even past the safety gate")


def pinned_commits(items: list[str] | None) -> dict[str, str]:
    """``--commit SOURCE=SHA`` flags as a commit per source name."""
    commits = {}
    for item in items or []:
        name, sep, sha = item.partition("=")
        if not sep or not name or not sha:
            raise TrustIndexError(f"--commit {item!r}: expected SOURCE=SHA")
        commits[name] = sha
    return commits


def run(a) -> int:
    started = time.monotonic()
    require("build")
    data = Path(a.data)
    commits = pinned_commits(a.commit)
    if not a.as_of and not commits:
        raise TrustIndexError("backfill: give --as-of DATE or --commit SOURCE=SHA")
    from trustindex.schemas.refresh_run import BackfillRequest, ConfigFiles

    files = ConfigFiles(a.sources)
    files.load()  # validate before starting Prefect
    data.mkdir(parents=True, exist_ok=True)
    from trustindex.cli.common import prefect_env, print_json, show_progress

    prefect_env(data / ".prefect")
    from trustindex.cli.build import describe_refresh, in_process_settings
    from trustindex.flows.backfill import backfill_flow
    from trustindex.runtime import progress
    from trustindex.warehouse.lock import data_dir_lock

    with (
        data_dir_lock(data, wait_seconds=a.wait, what="backfill"),
        progress.enabled(show_progress(a)),
        in_process_settings(),
    ):
        request = BackfillRequest(str(data), a.as_of, commits, a.publish, a.backend, a.force)
        result = backfill_flow(files, request).to_json()
    result["command_seconds"] = round(time.monotonic() - started, 3)
    if a.json:
        print_json(result)
    else:
        print(describe_refresh(result))
        for name, sha in result["commits"].items():
            print(f"  {name} as of {result['as_of'] or 'pinned'}: {sha[:12]}")
    return 0 if not result["failures"] else 3
