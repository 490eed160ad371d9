"""Shared fixtures: the demo corpus built once, refreshed once through a real Prefect flow."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="prefect-home-"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# one ONNX export for the whole session (it takes tens of seconds), shared by every data directory
os.environ.setdefault("TRUSTINDEX_ENCODER_CACHE", tempfile.mkdtemp(prefix="trustindex-encoders-"))


@pytest.fixture(scope="session")
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture(scope="session")
def demo(tmp_path_factory) -> Path:
    """The demo corpus: three git repositories and their configuration; returns sources.toml."""
    from build_demo import build_demo

    return build_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def refreshed(demo, prefect_harness, tmp_path_factory) -> dict:
    """The demo corpus refreshed once into a data directory (shared, read-only for tests)."""
    from trustindex.cli.build import load_build_config, run_refresh

    data = tmp_path_factory.mktemp("data")
    cfg = load_build_config(str(demo))
    result = run_refresh(cfg, data)
    return {"data": data, "result": result, "config": cfg}


@pytest.fixture(scope="session")
def index(refreshed):
    from trustindex.query.index import Index

    return Index.open(data_dir=refreshed["data"])
