"""The query encoder named by the snapshot: the same model that embedded the documents.

``onnx-int8`` snapshots carry their encoder files (numpy + onnxruntime +
tokenizers only); ``sentence-transformers`` snapshots need torch and load the
model the manifest names, checked by its weights' sha256 before it is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import numpy as np

from trustindex.schemas.embedding_model import MODEL_ID, Backend, model_path, weights_sha256
from trustindex.schemas.errors import EmbeddingModelError, EmbeddingModelMismatch, SnapshotError
from trustindex.schemas.snapshot import ENCODER_DIR, Manifest

# onnxruntime intra-op threads of the query side's encoder: a search embeds one short query, and a second thread,
# asleep between searches, must be woken for every operator's share of the work and waits for a core on a busy
# machine.  On the 2-core AMD EPYC (loads 3-5) bench/bench_query.py's warm worker, one thread against two in
# alternation: the query embedding alone 1.37-1.54 against 1.54-1.85 ms, the whole search p50 3.6-4.5 against
# 4.0-4.4 ms at 10k passages and 7.2-11.9 against 7.6-11.4 ms at 100k; the vectors are the same bits (230 queries;
# issue 41).  A server's concurrent searches each run on their own thread.
QUERY_ENCODER_THREADS = 1


class QueryEncoder(Protocol):
    dimensions: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


class _SentenceTransformerQueryEncoder:
    def __init__(self, manifest: Manifest):
        info = manifest.embedding_model
        try:
            path = model_path()
            actual = weights_sha256(path)
        except EmbeddingModelError as e:
            raise SnapshotError(f"snapshot {manifest.snapshot_id}: its query encoder cannot be loaded: {e}") from None
        expected = info.get("sha256")
        if info.get("id") != MODEL_ID or actual != expected:
            raise EmbeddingModelMismatch(
                manifest.snapshot_id, str(info.get("id")), str(expected), f"{MODEL_ID} at {path}", actual
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(path), device="cpu")
        self.dimensions = int(info["dimensions"])

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True, show_progress_bar=False), np.float32)


def open_encoder(snapshot_dir: Path, manifest: Manifest, checksums_verified: bool = False) -> QueryEncoder:
    """``checksums_verified``: the snapshot's files were just checked against its manifest (which lists the
    encoder's files), so hashing the 20+ MB model again would only cost a cold query time."""
    info = manifest.embedding_model
    backend = info.get("backend")
    if backend == Backend.ONNX_INT8:
        from trustindex.query.onnx_encoder import MODEL_FILE, TOKENIZER_FILE, EncoderError, OnnxEncoder

        listed = all(f"{ENCODER_DIR}/{name}" in manifest.files for name in (MODEL_FILE, TOKENIZER_FILE))
        try:
            enc = OnnxEncoder(
                Path(snapshot_dir) / ENCODER_DIR,
                threads=QUERY_ENCODER_THREADS,
                verify=not (checksums_verified and listed),
            )
        except (EncoderError, OSError) as e:
            raise SnapshotError(f"snapshot {manifest.snapshot_id}: its query encoder cannot be loaded: {e}") from None
        if enc.model_id != info.get("id") or enc.dimensions != int(info.get("dimensions", -1)):
            raise SnapshotError(
                f"snapshot {manifest.snapshot_id}: its encoder ({enc.model_id}, {enc.dimensions} "
                f"dims) disagrees with its embeddings ({info.get('id')}, {info.get('dimensions')})"
            )
        return enc
    if backend == Backend.SENTENCE_TRANSFORMERS:
        return _SentenceTransformerQueryEncoder(manifest)
    raise SnapshotError(f"snapshot {manifest.snapshot_id}: unknown embedding backend {backend!r}")
