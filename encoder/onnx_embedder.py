"""The fast embedding backend: all-MiniLM-L6-v2 exported to ONNX and quantized to int8.

The export (encoder/onnx_export.py) is made once per encoder cache and source
weights, verified against sentence-transformers, and its files travel into every
snapshot built with it (``encoder/``), so the query side embeds queries with exactly
the model that embedded the documents.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from trustindex.encoder.embedding_cache import Embedder
from trustindex.encoder.onnx_export import ensure_encoder
from trustindex.query.onnx_encoder import OnnxEncoder
from trustindex.schemas.embedding_model import MODEL_ID, Backend
from trustindex.schemas.snapshot import ENCODER_DIR


class OnnxEmbedder(Embedder):
    backend = Backend.ONNX_INT8

    def __init__(self, cache_dir: Path, recipe: int | None = None, threads: int | None = None):
        """``cache_dir``: where exports are kept (``schemas.embedding_model.encoder_cache_dir``); ``recipe``: which
        export (default: ``encoder_export.encoder_recipe()``); ``threads``: the encoder's (default: the cores)."""
        self.files = ensure_encoder(Path(cache_dir), recipe=recipe)
        # ensure_encoder has just checked every file's sha256: not read and hashed a second time here
        self.encoder = OnnxEncoder(self.files.directory, threads=threads, verify=False)
        self.dimensions = int(self.encoder.dimensions)
        self.meta = json.loads(self.files.manifest.read_text())

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), np.float32)
        return np.asarray(self.encoder.encode(list(texts)), dtype=np.float32)

    def release_memory(self) -> None:
        self.encoder.release_sessions()  # onnxruntime's arenas: ~0.6 GB after a bulk encode

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
            "encoder_dir": ENCODER_DIR,
        }

    def verified_sha256(self) -> dict[str, str]:
        # encoder.json's own hashes, which ensure_encoder has just checked the model and tokenizer against
        files = self.meta.get("files", {})
        return {
            f"{ENCODER_DIR}/{p.name}": files[p.name]
            for p in (self.files.model, self.files.tokenizer)
            if isinstance(files.get(p.name), str)
        }

    def snapshot_files(self) -> dict[str, Path]:
        return {f"{ENCODER_DIR}/{p.name}": p for p in (self.files.model, self.files.tokenizer, self.files.manifest)}
