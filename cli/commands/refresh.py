"""``trustindex refresh``: every configured source crawled, extracted, embedded, indexed and published."""

from __future__ import annotations

import time
from pathlib import Path

from trustindex.cli.extras import require
from trustindex.cli.options import policy_option
from trustindex.schemas.errors import TrustIndexError

ABOUT = "crawl, extract, index, publish"
EXAMPLES = (
    "trustindex refresh --sources examples/sources.toml --data data",
    "trustindex refresh --sources sources.toml --task-runner dask --dask-address tcp://127.0.0.1:8786",
)
OPTIONS = ("build", "data", "json")


def arguments(r) -> None:
    policy_option(r, "beside the sources file, if present; else built-in")
    r.add_argument("--quiet", action="store_true", help="print nothing but errors (and no progress bars)")
    r.add_argument("--identities", metavar="FILE", help="default: identities.toml beside the sources file")
    r.add_argument("--compilers", metavar="FILE", help="compilers.toml (default: beside the sources file, if present)")
    r.add_argument("--ledger", metavar="FILE", help="verifications.toml (default: beside the sources file, if present)")
    r.add_argument("--force", action="store_true", help="publish even past the safety gate (and say so)")
    r.add_argument(
        "--task-runner",
        choices=["threads", "dask"],
        default="threads",
        help="dask: the texts to embed go in content-hash shards to an existing Dask cluster (--dask-address); "
        "its workers need the package, their own encoder cache and the run's Prefect API, no shared filesystem",
    )
    r.add_argument("--dask-address", metavar="ADDR", help="the Dask scheduler, e.g. tcp://127.0.0.1:8786")
    r.add_argument(
        "--dask-sources",
        action="store_true",
        help="with --task-runner dask: run the per-source tasks (fetch, extract) on the cluster too; every worker "
        "then needs the data directory at the same path (a shared filesystem)",
    )
    r.add_argument(
        "--max-sources",
        metavar="N",
        help="source tasks run at once, the rest queued (a number or 'all'; default: $TRUSTINDEX_SOURCES_AT_ONCE, "
        "else the usable cores)",
    )


def dask_address(a) -> str | None:
    if a.task_runner == "dask" and not a.dask_address:
        raise TrustIndexError("--task-runner dask needs --dask-address tcp://HOST:PORT (a running Dask scheduler)")
    if getattr(a, "dask_sources", False) and a.task_runner != "dask":
        raise TrustIndexError("--dask-sources needs --task-runner dask --dask-address tcp://HOST:PORT")
    return a.dask_address if a.task_runner == "dask" else None


def run(a) -> int:
    started = time.monotonic()  # the command's time includes Prefect's start, which the flow's does not
    require("build")
    from trustindex.cli.build import run_refresh
    from trustindex.cli.common import prefect_env, print_json, show_progress
    from trustindex.schemas.refresh_run import ConfigFiles, RefreshRequest

    data = Path(a.data)
    cfg = ConfigFiles(a.sources, a.identities, a.policy, a.ledger, a.compilers).load()
    data.mkdir(parents=True, exist_ok=True)
    prefect_env(data / ".prefect")
    from trustindex.runtime import progress
    from trustindex.warehouse.lock import data_dir_lock

    with data_dir_lock(data, wait_seconds=a.wait, what="refresh"), progress.enabled(show_progress(a)):
        request = RefreshRequest(
            str(data), backend=a.backend, force=a.force, max_sources=a.max_sources, dask_address=dask_address(a)
        )
        result = run_refresh(cfg, request, dask_sources=a.dask_sources)
    result["command_seconds"] = round(time.monotonic() - started, 3)
    if a.json:
        print_json(result)
    elif not a.quiet:
        from trustindex.cli.build import describe_refresh

        print(describe_refresh(result))
    return 0 if not result["failures"] else 3
