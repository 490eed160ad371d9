"""Shared fixtures: the demo corpus built once, refreshed once through a real Prefect flow."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from trustindex.schemas.embedding_model import ENCODER_CACHE_ENV

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

from tests.kits.compilerkit import compactc, why_not  # noqa: E402, F401  (compactc: the session's built compiler)
from tests.kits.realdata import WHY_NO_REAL_DOCS  # noqa: E402
from trustindex.cli.common import prefect_env  # noqa: E402  (after the path set-up above)

# pytest-xdist (make test runs two workers): each worker is its own process with its own Prefect state, and the
# workers of one run share one encoder cache (exports are renamed into place, so concurrent builders are safe).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
# What this run made in the temp directory and removes when it ends (CI's disk is shared: a run that leaves its
# ~60 MB encoder export and Prefect databases behind fills it within a few hundred runs). The controller (or a run
# without workers) makes them; the workers it spawns inherit its environment and so use the same ones.
_MADE: list[Path] = []


def _temp_dir(prefix: str) -> str:
    made = Path(tempfile.mkdtemp(prefix=prefix))
    _MADE.append(made)
    return str(made)


# The command line's environment, with Prefect's state in a fresh directory (unless one is given).
if os.environ.get("PREFECT_HOME") and _WORKER:
    os.environ["PREFECT_HOME"] = str(Path(os.environ["PREFECT_HOME"]) / _WORKER)
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
prefect_env(Path(os.environ.get("PREFECT_HOME") or _temp_dir("prefect-home-")))
# one ONNX export for the whole run (it takes tens of seconds), shared by every data directory
if _RUN and _WORKER:  # a worker whose controller did not hand it a cache (run outside this conftest's controller)
    os.environ.setdefault(ENCODER_CACHE_ENV, str(Path(tempfile.gettempdir()) / f"trustindex-encoders-{_RUN}"))
if not os.environ.get(ENCODER_CACHE_ENV):
    os.environ[ENCODER_CACHE_ENV] = _temp_dir("trustindex-encoders-")


def pytest_unconfigure(config):
    """Remove what this process made (a worker makes nothing its controller shares: it inherited those)."""
    for made in _MADE:
        shutil.rmtree(made, ignore_errors=True)


# The slow kinds (registered in pyproject.toml; `make test-fast` runs everything else). A test of a kind whose
# resource this machine lacks is skipped here with the reason, so a marker is all a test needs to say.
SLOW_KINDS = ("real_corpus", "browser", "cluster", "compiler", "serving_load", "slow")
_MISSING = {"real_corpus": WHY_NO_REAL_DOCS, "compiler": why_not()}


def pytest_collection_modifyitems(config, items):
    for item in items:
        for kind, why in _MISSING.items():
            if why and item.get_closest_marker(kind):
                item.add_marker(pytest.mark.skip(reason=why))


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
    from trustindex.schemas.refresh_run import RefreshRequest

    data = tmp_path_factory.mktemp("data")
    cfg = load_build_config(str(demo))
    result = run_refresh(cfg, RefreshRequest(str(data)))
    return {"data": data, "result": result, "config": cfg}


@pytest.fixture(scope="session")
def index(refreshed):
    from trustindex.query.index import Index

    return Index.open(data_dir=refreshed["data"])
