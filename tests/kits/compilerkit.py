"""The real Compact compiler for tests: one release tag built from ../shared/toolchains once per test session.

The build goes through the project's own path (crawl.compactc_build, reading the tag's blobs from a mirror of
the bundle) into the session's temp dir, ~2-4 minutes of one core; tests that need it skip with one line where
Chez Scheme or the bundle is absent."""

from __future__ import annotations

import shutil

import pytest

from tests.kits.realdata import SHARED

TOOLCHAINS = SHARED / "toolchains"
BUNDLE = TOOLCHAINS / "compact.bundle"
NANOPASS = TOOLCHAINS / "nanopass-f3100ced.tar.gz"
ROUGH_DRAFT = TOOLCHAINS / "rough-draft-6a5e64aa.tar.gz"
TAG = "compactc-v0.31.1"  # compiler 0.31.1, language 0.23.0


def why_not() -> str | None:
    if not BUNDLE.is_file() or not NANOPASS.is_file() or not ROUGH_DRAFT.is_file():
        return "the Compact compiler's bundle is not at ../shared/toolchains"
    if not (shutil.which("scheme") or shutil.which("chezscheme")):
        return "Chez Scheme is not installed (apt-get install chezscheme)"
    return None


# The marker of the tests that build or run the real compiler (a slow kind); tests/conftest.py skips them with
# why_not()'s reason where it cannot be built.
needs_compiler = pytest.mark.compiler


@pytest.fixture(scope="session")
def compactc(tmp_path_factory):
    """(data dir holding the build cache, the built program) of TAG."""
    from trustindex.crawl.compactc_build import build_compactc
    from trustindex.crawl.git import ensure_mirror, mirror_path

    why = why_not()
    if why:
        pytest.skip(why)
    data = tmp_path_factory.mktemp("compilers-data")
    repo = ensure_mirror(str(BUNDLE), mirror_path(data, "compact"))
    return data, build_compactc(repo, TAG, NANOPASS, ROUGH_DRAFT, data)
