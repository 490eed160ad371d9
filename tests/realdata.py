"""Real material outside the repository, found relative to the repository root (never an absolute path).

CI lays ``shared/`` beside the clone, so these tests run there; on a clone without it they skip and say why."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REAL_DOCS = SHARED / "corpus" / "midnight-docs"

needs_real_docs = pytest.mark.skipif(
    not REAL_DOCS.is_dir(), reason="the real Midnight docs are not at ../shared/corpus/midnight-docs"
)
