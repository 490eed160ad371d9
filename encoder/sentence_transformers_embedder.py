"""The reference embedding backend: sentence-transformers on torch fp32 (and ``SentenceTransformerEncoder``, the
same model behind ``OnnxEncoder``'s ``encode`` interface, which the ONNX export is checked against).

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


def load_sentence_transformer(weights_dir: Path, attn: str | None = None):
    """The model on CPU from its local files; ``attn``: the attention implementation (the ONNX export traces
    "eager")."""
    # Imported here: the serving side never imports this module, and the build side pays
    # torch's import only when it actually embeds or exports.
    from sentence_transformers import SentenceTransformer

    kwargs = {"model_kwargs": {"attn_implementation": attn}} if attn else {}
    return SentenceTransformer(str(weights_dir), device="cpu", local_files_only=True, **kwargs)


class SentenceTransformerEncoder:
    """Reference encoder: sentence-transformers on torch fp32, same ``encode`` interface as OnnxEncoder."""

    def __init__(self, weights_dir: Path | None = None, device: str = "cpu"):
        self.weights_dir = Path(weights_dir) if weights_dir else model_path()
        self._st = None
        self._device = device
        self.model_id = MODEL_ID

    @property
    def model(self):
        if self._st is None:
            from sentence_transformers import SentenceTransformer

            self._st = SentenceTransformer(str(self.weights_dir), device=self._device, local_files_only=True)
        return self._st

    @property
    def dimensions(self) -> int:
        return int(self.model[0].auto_model.config.hidden_size)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError("encode expects a list of str")
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        out = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32)
