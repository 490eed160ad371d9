"""The reference embedding backend: sentence-transformers on torch fp32.

Every figure of the fast backend (``onnx_embedder``) is measured against this one
(docs/embedding.md).  A snapshot it builds carries no encoder files: serving it needs
torch and the same weights, which ``query.query_encoder`` checks by their sha256.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from trustindex.encoder.embedding_cache import Embedder
from trustindex.schemas.embedding_model import MODEL_ID, Backend, model_path, weights_sha256


class SentenceTransformerEmbedder(Embedder):
    backend = Backend.SENTENCE_TRANSFORMERS

    def __init__(self, path: Path | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        self.path = path or model_path()
        self.model = SentenceTransformer(str(self.path), device="cpu")
        self.dimensions = int(
            self.model.get_embedding_dimension()
            if hasattr(self.model, "get_embedding_dimension")
            else self.model.get_sentence_embedding_dimension()
        )
        self._sha = weights_sha256(self.path)

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), np.float32)
        return np.asarray(
            self.model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )

    def info(self) -> dict:
        return {
            "id": MODEL_ID,
            "backend": self.backend,
            "dimensions": self.dimensions,
            "sha256": self._sha,
            "max_seq_length": int(self.model.max_seq_length),
        }
