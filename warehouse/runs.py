"""The record of the last run (``data/last_run.json``): how each source was built.

Kept outside the snapshot on purpose: a snapshot's bytes depend only on its
content, while how a run got there (full build, incremental, rewritten
history, a failed source serving old tables) is the run's story.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

RUN_RECORD = "last_run.json"


def write_run_record(data_dir: Path, result: dict) -> None:
    record = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **{
            k: result.get(k)
            for k in (
                "snapshot_id",
                "published",
                "reused_snapshot",
                "row_counts",
                "embeddings",
                "failures",
                "sources",
                "forced_past_gate",
                "seconds",  # the flow's wall time
                "stages",  # each stage's seconds, count, unit and rate (runtime/progress.py)
                "resources",  # sources at once, the embedding worker, models loaded (flows/sources_run.py)
                "flow_run_id",  # the Prefect flow run, whose markdown artifact tells the same story
                "compile",  # compile checks: compiled now, from the cache, outcomes per source and compiler
            )
        },
    }
    tmp = Path(data_dir) / f".{RUN_RECORD}.tmp"
    tmp.write_text(json.dumps(record, indent=2, default=str))
    os.replace(tmp, Path(data_dir) / RUN_RECORD)


def read_run_record(data_dir: Path) -> dict | None:
    try:
        return json.loads((Path(data_dir) / RUN_RECORD).read_text())
    except (OSError, ValueError):
        return None
