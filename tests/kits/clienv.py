"""The environment for ``python -m trustindex.cli.main`` run by a test in a process of its own (killed, timed)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_env(home: Path) -> dict:
    """Offline, quiet, Prefect's state under ``home``; the session's test server when there is one."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PREFECT_HOME": str(home),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    if url:  # the session's test server (conftest): saves an ephemeral server start (10-60 s) per process
        env["PREFECT_API_URL"] = str(url)
    return env
