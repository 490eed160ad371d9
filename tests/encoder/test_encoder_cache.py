"""Where exported encoders are kept (issue 30 item 2): once per user and machine, not per data directory, and
keyed by the versions that wrote them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from trustindex.encoder.onnx_export import exporter_key
from trustindex.schemas.embedding_model import ENCODER_CACHE_ENV, encoder_cache_dir


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(ENCODER_CACHE_ENV, raising=False)
    return monkeypatch


def test_the_named_directory_wins(no_override, tmp_path):
    no_override.setenv(ENCODER_CACHE_ENV, str(tmp_path / "named"))
    assert encoder_cache_dir(tmp_path / "data") == tmp_path / "named"


def test_two_data_directories_share_the_user_cache(no_override, tmp_path):
    no_override.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    one, two = encoder_cache_dir(tmp_path / "a"), encoder_cache_dir(tmp_path / "b")
    assert one == two == tmp_path / "xdg" / "trustindex" / "encoders" and one.is_dir()


def test_an_unwritable_user_cache_falls_back_to_the_data_directory(no_override, tmp_path):
    blocker = tmp_path / "xdg"
    blocker.write_text("a file where the cache folder would go")
    no_override.setenv("XDG_CACHE_HOME", str(blocker))
    assert encoder_cache_dir(tmp_path / "data") == tmp_path / "data" / "cache" / "encoders"


def test_the_exporter_key_follows_the_installed_versions():
    key = exporter_key()
    assert len(key) == 8 and int(key, 16) >= 0
    assert key == exporter_key()  # stable in one environment
    # another process with another version of one exporter library sees another key
    code = (
        "import importlib.metadata as m; real = m.version; "
        "m.version = lambda n: '0.0.0' if n == 'onnx' else real(n); "
        "from trustindex.encoder.onnx_export import exporter_key; print(exporter_key())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert len(other) == 8 and other != key
