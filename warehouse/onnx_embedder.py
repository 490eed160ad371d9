"""The fast embedding backend: all-MiniLM-L6-v2 exported to ONNX and quantized to int8.

The export (warehouse/encoder_export.py) is made once per data directory and
source weights, verified against sentence-transformers, and its files travel
into every snapshot built with it (``encoder/``), so the query side embeds
queries with exactly the model that embedded the documents.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from trustindex.warehouse.embeddings import MODEL_ID, Embedder


class OnnxEmbedder(Embedder):
    backend = "onnx-int8"

    def __init__(self, cache_dir: Path | None = None):
        from trustindex.query.encoder import OnnxEncoder
        from trustindex.warehouse.encoder_export import ensure_encoder

        cache_dir = Path(
            cache_dir
            or os.environ.get("TRUSTINDEX_ENCODER_CACHE")
            or Path.home() / ".cache" / "trustindex" / "encoders"
        )
        self.files = ensure_encoder(cache_dir)
        self.encoder = OnnxEncoder(self.files.directory)
        self.dimensions = int(self.encoder.dimensions)
        self.meta = json.loads(self.files.manifest.read_text())

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), np.float32)
        return np.asarray(self.encoder.encode(list(texts)), dtype=np.float32)

    def info(self) -> dict:
        files = self.meta.get("files", {})
        model_sha = files.get(self.files.model.name, {})
        model_sha = model_sha.get("sha256") if isinstance(model_sha, dict) else model_sha
        return {
            "id": MODEL_ID,
            "backend": self.backend,
            "dimensions": self.dimensions,
            "sha256": model_sha,
            "source_sha256": self.files.source_sha256,
            "max_seq_length": int(self.encoder.max_seq_length),
            "encoder_dir": "encoder",
        }

    def snapshot_files(self) -> dict[str, Path]:
        return {f"encoder/{p.name}": p for p in (self.files.model, self.files.tokenizer, self.files.manifest)}


def place_file(src: Path, dst: Path) -> None:
    """Hard-link an immutable file into a build (same filesystem), else copy it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
