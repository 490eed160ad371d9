"""Real material outside the repository, found relative to the repository root (never an absolute path).

CI lays ``shared/`` beside the clone, so these tests run there; on a clone without it they skip and say why."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
REAL_DOCS = SHARED / "corpus" / "midnight-docs"

# The marker of the tests that read the real corpus (a slow kind: `make test-fast` leaves them out); tests/conftest.py
# skips them with this reason where the corpus is absent.
needs_real_docs = pytest.mark.real_corpus
WHY_NO_REAL_DOCS = None if REAL_DOCS.is_dir() else "the real Midnight docs are not at ../shared/corpus/midnight-docs"
