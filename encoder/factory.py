"""The embedder for a backend name, and what its vectors depend on.

The factory is its own module (txtai style) so the base class (``embeddings``) and
the implementations (``sentence_transformer_embedder``, ``onnx_embedder``) import
each other in one direction only.  Implementations are imported when asked for:
the torch backend costs seconds to import and the ONNX one needs neither torch nor
its exporter until it runs.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from trustindex.encoder.embedding_cache import Embedder
from trustindex.schemas.embedding_model import BACKENDS, DEFAULT_BACKEND, MODEL_ID, Backend, model_path, weights_sha256


def backend_of(name: str) -> Backend:
    try:
        return Backend(name)
    except ValueError:
        raise ValueError(f"unknown embedding backend {name!r} (known: {', '.join(BACKENDS)})") from None


def embedder_identity(backend: str) -> str:
    """What the embedding of a text depends on, without loading the model (for build-input keys)."""
    kind = backend_of(backend)
    recipe = ""
    if kind is Backend.ONNX_INT8:
        from trustindex.encoder.onnx_export import encoder_recipe

        recipe = f"r{encoder_recipe()}"  # 5 (static scales, batched) is a new identity; 4 stays what it was
    return hashlib.sha256(f"{MODEL_ID}\0{kind}{recipe}\0{weights_sha256(model_path())}".encode()).hexdigest()[:16]


_LOADED: dict[tuple[Backend, str, int, int | None], Embedder] = {}
_LOADS = [0]  # models loaded by this process (the benches report it)
_LOADING = threading.Lock()  # sources' pipelines (embed_pipeline) may ask for the model at the same time


def make_embedder(
    backend: str = DEFAULT_BACKEND, cache_dir: Path | None = None, threads: int | None = None
) -> Embedder:
    """The embedder for a backend; loaded once per process (a model load costs seconds).

    ``cache_dir``: where the ONNX backend keeps its exports (``schemas.embedding_model.encoder_cache_dir``);
    the torch backend needs none.  ``threads``: the ONNX encoder's threads (default: the usable cores); a Dask
    worker of one thread asks for one, so that workers side by side do not each spread over every core.  It
    changes how fast, never what: a vector is the same bits on any number of threads (docs/embedding.md).
    """
    kind = backend_of(backend)
    key: tuple[Backend, str, int, int | None] = (kind, "", 0, None)
    if kind is Backend.ONNX_INT8:
        from trustindex.encoder.onnx_export import encoder_recipe

        key = (kind, str(cache_dir), encoder_recipe(), threads)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _make(kind, cache_dir, key[2], threads)
            _LOADS[0] += 1
        return _LOADED[key]


def release_loaded_models() -> None:
    """Every loaded model gives back its run-time memory (the models stay loaded): a refresh calls this when its
    sources have embedded their texts and the build, which finds them in the cache, begins."""
    with _LOADING:
        loaded = list(_LOADED.values())
    for embedder in loaded:
        embedder.release_memory()


def model_loads() -> int:
    """How many embedding models this process has loaded so far (each backend and encoder cache once)."""
    return _LOADS[0]


def _make(kind: Backend, cache_dir: Path | None, recipe: int, threads: int | None) -> Embedder:
    if kind is Backend.SENTENCE_TRANSFORMERS:
        from trustindex.encoder.sentence_transformers_embedder import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    from trustindex.encoder.onnx_embedder import OnnxEmbedder

    if cache_dir is None:
        raise ValueError(f"the {kind} backend needs cache_dir, where its ONNX exports are kept")
    return OnnxEmbedder(cache_dir, recipe, threads)
