"""The user's cache: what a machine keeps for every data directory (issue 30: fixed costs paid once)."""

from __future__ import annotations

import os
from pathlib import Path

ENCODERS = "encoders"  # ONNX exports of the embedding model (schemas/embedding_model.py)
PREFECT_DB = "prefect-db"  # Prefect's migrated empty database, per Prefect version (cli/prefect_db.py)


def user_cache_dir(name: str) -> Path | None:
    """``$XDG_CACHE_HOME/trustindex/<name>`` (``~/.cache/...`` without it), made if need be; None where it cannot
    be written (no home, a read-only one)."""
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache" if Path.home() != Path("/") else None)
    if not base:
        return None
    folder = Path(base) / "trustindex" / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None
