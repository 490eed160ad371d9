"""The export deployment's flow: copy the live snapshot to the serving tier.

It runs after every successful nightly refresh: ``deploy/prefect.yaml`` gives
its deployment an event trigger on the refresh deployment's
``prefect.flow-run.Completed`` event (Prefect "deployment triggers"), passing
the refresh run's own ``data_dir``.  A refresh that the publish gate refuses
ends Failed, so nothing is exported; a refresh that rebuilt the same snapshot
makes the export a cheap no-op (``warehouse.export`` skips verified files).

This file is not named ``flows.py``: Prefect loads an entrypoint file under
its own base name, which would shadow the project's ``flows`` package.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from trustindex.warehouse.export import ExportError, export_snapshot

EXPORT_TO_ENV = "TRUSTINDEX_EXPORT_TO"


@task(name="export-snapshot", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=10)
def export_task(data_dir: str, snapshot_id: str, export_to: str, endpoint: str | None) -> dict:
    # Retried: a network blip or a bad upload is repaired by running the (idempotent) export again.
    return export_snapshot(Path(data_dir), snapshot_id, export_to, endpoint=endpoint)


@flow(name="trustindex-export")
def export_live(
    data_dir: str = "data", export_to: str | None = None, endpoint: str | None = None, snapshot_id: str = "current"
) -> dict:
    """Export ``snapshot_id`` (default: the live one) of ``data_dir`` to ``export_to``.

    ``export_to`` defaults to $TRUSTINDEX_EXPORT_TO and ``endpoint`` to $AWS_ENDPOINT_URL in the
    worker's environment, so the serving tier is configured where the credentials are.
    """
    target = export_to or os.environ.get(EXPORT_TO_ENV)
    if not target:
        raise ExportError(
            f"export of snapshot {snapshot_id} from {data_dir}: no target; set the deployment's "
            f"export_to parameter or {EXPORT_TO_ENV} in the worker's environment"
        )
    result = export_task(data_dir, snapshot_id, target, endpoint or os.environ.get("AWS_ENDPOINT_URL"))
    get_run_logger().info(
        "exported snapshot %s to %s: %d uploaded, %d already there (previous: %s)",
        result["snapshot_id"],
        result["target"],
        result["uploaded"],
        result["reused"],
        result["previous"],
    )
    return result
