"""A synthetic snapshot of any size, written with the warehouse's own functions, for query benchmarks.

Text: each passage is a window of 60–140 tokens cut at random from the real Midnight
docs' token stream (tokenized by ``schemas.lexical``), so term frequencies follow the
real corpus (Zipf's law and all); the BM25 index is built from those tokens directly
by ``warehouse.bm25.build_bm25_from_tokens`` (``build_bm25`` without re-tokenizing
100k passages).

Vectors: Gaussian with the mean and covariance of real passage embeddings (512 real
passages embedded by the real encoder), then L2-normalised and stored as float16, as a
build stores them.  Isotropic random vectors would be the worst case for HNSW (no low
intrinsic dimension, every distance alike) and unlike any sentence embedding; matching
the real spectrum keeps recall and build-time figures honest without embedding 100k
passages.  Queries are embedded with the real encoder at query time.

Snapshots are cached under the bench work directory by their parameters, so a second
run does not rebuild them (the first run's build times are kept in ``build.json``).
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC
from pathlib import Path

import numpy as np

from bench.common import CORPUS, ENCODER_CACHE, WORK
from trustindex.schemas.embedding_model import MODEL_ID, Backend, weights_sha256

FORMAT = 1  # bump when what this module writes changes (invalidates cached snapshots)
CHUNKS_PER_DOC = 8


def token_stream(max_words: int = 300_000, root: Path = CORPUS, work: Path = WORK) -> list[str]:
    """Real tokens of the corpus in path order (cached under the work directory)."""
    from trustindex.schemas.lexical import tokenize

    cache = work / f"tokens-{max_words}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    out: list[str] = []
    for p in sorted(root.rglob("*.md*")):
        if ".git" in p.parts or not p.is_file():
            continue
        out.extend(tokenize(p.read_text(encoding="utf-8", errors="replace")))
        if len(out) >= max_words:
            break
    work.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def encoder_dir() -> Path:
    from trustindex.encoder.onnx_export import ensure_encoder

    return ensure_encoder(ENCODER_CACHE).directory


def real_spectrum(n: int = 512, work: Path = WORK) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of real passage embeddings (cached)."""
    cache = work / f"spectrum-{n}.npz"
    if cache.is_file():
        z = np.load(cache)
        return z["mean"], z["cov"]
    from bench.bench_embedding import corpus_passages
    from trustindex.query.onnx_encoder import OnnxEncoder

    emb = OnnxEncoder(encoder_dir()).encode(corpus_passages(n=n)).astype(np.float64)
    mean, cov = emb.mean(0), np.cov(emb.T)
    work.mkdir(parents=True, exist_ok=True)
    np.savez(cache, mean=mean, cov=cov)
    return mean, cov


def vectors(n: int, mean: np.ndarray, cov: np.ndarray, seed: int) -> np.ndarray:
    w, v = np.linalg.eigh(cov)
    scale = np.sqrt(np.clip(w, 0, None))
    rng = np.random.default_rng(seed)
    out = np.empty((n, mean.shape[0]), np.float16)
    for s in range(0, n, 20_000):  # bounded temporary memory
        m = min(20_000, n - s)
        x = mean + (rng.standard_normal((m, mean.shape[0])) * scale) @ v.T
        out[s : s + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def _tables(n: int, docs_tokens: list[list[str]], seed: int) -> dict:
    from datetime import datetime, timedelta

    from trustindex.schemas.tables import chunk_id_of, doc_id_of, sha256_text, table_from_rows

    rng = np.random.default_rng(seed + 1)
    ndocs = (n + CHUNKS_PER_DOC - 1) // CHUNKS_PER_DOC
    now = datetime(2026, 6, 1, tzinfo=UTC)
    docs, attr, chunks = [], [], []
    for d in range(ndocs):
        path = f"docs/section-{d // 100:04d}/page-{d:06d}.md"
        did = doc_id_of("synthetic", path)
        changed = now - timedelta(days=int(rng.integers(0, 900)))
        docs.append(
            {
                "doc_id": did,
                "source": "synthetic",
                "repo": "https://example.invalid/synthetic.git",
                "commit": "0" * 40,
                "path": path,
                "kind": "markdown",
                "content_sha256": sha256_text(path),
                "size": 4000,
                "last_modified": changed,
                "last_modified_commit": "0" * 40,
                "last_substantive_change": changed,
                "last_substantive_commit": "0" * 40,
                "front_matter": "{}",
                "url": None,
                "warnings": [],
            }
        )
        attr.append(
            {
                "doc_id": did,
                "publisher": "midnight",
                "publisher_name": "Midnight",
                "tier": "official",
                "origin": "source",
                "author_name": None,
                "author_email": None,
                "author_publisher": None,
            }
        )
    for i in range(n):
        d = i // CHUNKS_PER_DOC
        text = " ".join(docs_tokens[i])
        sha = sha256_text(text)
        path = docs[d]["path"]
        ordinal = i % CHUNKS_PER_DOC
        chunks.append(
            {
                "chunk_id": chunk_id_of("synthetic", path, ordinal * 10 + 1, ordinal * 10 + 9, sha, ordinal),
                "doc_id": docs[d]["doc_id"],
                "source": "synthetic",
                "path": path,
                "ordinal": ordinal,
                "heading_path": [f"Section {d}"],
                "symbol_path": None,
                "start_line": ordinal * 10 + 1,
                "end_line": ordinal * 10 + 9,
                "text": text,
                "content_sha256": sha,
                "token_count": len(docs_tokens[i]),
                "anchor": f"section-{d}",
            }
        )
    sources = [
        {
            "source": "synthetic",
            "repo": "https://example.invalid/synthetic.git",
            "ref": "main",
            "commit": "0" * 40,
            "publisher": "midnight",
            "tier": "official",
            "config_sha256": "0" * 64,
            "status": "ok",
            "error": None,
        }
    ]
    return {
        "documents": table_from_rows("documents", docs),
        "chunks": table_from_rows("chunks", chunks),
        "attribution": table_from_rows("attribution", attr),
        "sources": table_from_rows("sources", sources),
    }


def build(
    n: int,
    ann: bool,
    seed: int = 0,
    work: Path = WORK,
    ann_threads: int = 0,
    backend: str = Backend.ONNX_INT8,
    spectrum: tuple[np.ndarray, np.ndarray] | None = None,
    max_words: int = 300_000,
    ann_expansion_add: int | None = None,
) -> tuple[Path, dict]:
    """A data directory whose live snapshot holds ``n`` synthetic passages (+ an HNSW index when ``ann``).

    The ANN snapshot is the exact one's files plus ``dense.usearch`` (the same passages and
    vectors, so the two compare like for like).  ``backend`` names the query encoder the
    snapshot declares (onnx-int8 carries its files); ``spectrum`` (mean, covariance)
    replaces the real embeddings' one (small test runs).  ``ann_expansion_add`` builds the HNSW graph with
    another efConstruction than the product's (``query.dense.EXPANSION_ADD``; a cheaper build at 1M rows).
    """
    from trustindex.query.dense import EXPANSION_ADD, build_ann_index
    from trustindex.schemas.snapshot import (
        DENSE_INDEX,
        EMBEDDINGS,
        MANIFEST,
        read_manifest,
        resolve_current,
        verify_snapshot,
    )
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

    ef = ann_expansion_add or EXPANSION_ADD
    mode = ("ann" if ef == EXPANSION_ADD else f"ann-ef{ef}") if ann else "exact"
    data = work / f"query-n{n}-{mode}-s{seed}-{backend}-f{FORMAT}"
    info_file = data / "build.json"
    if info_file.is_file():
        try:
            verify_snapshot(resolve_current(data), checksums=False)
            return data, json.loads(info_file.read_text())
        except Exception:  # half-written by an interrupted run, or an older snapshot format: rebuild it
            pass
    if not ann:
        return _build_exact(data, n, seed, work, backend, spectrum, max_words)
    base_dir, base_info = build(n, False, seed, work, ann_threads, backend, spectrum, max_words)
    base = resolve_current(base_dir)
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    bdir = new_build_dir(data)
    for f in base.rglob("*"):
        if f.is_file() and f.name != MANIFEST:
            (bdir / f.relative_to(base)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, bdir / f.relative_to(base))
    t0 = time.perf_counter()
    build_ann_index(
        np.load(bdir / EMBEDDINGS, mmap_mode="r"), bdir / DENSE_INDEX, threads=ann_threads, expansion_add=ef
    )
    ann_s = time.perf_counter() - t0
    m = read_manifest(base)
    new = finish_snapshot(
        data,
        bdir,
        sources=m.sources,
        embedding_model=m.embedding_model,
        row_counts=m.row_counts,
        build_policy_id=m.build_policy_id,
    )
    set_current(data, new.snapshot_id)
    info = {
        **base_info,
        "ann": True,
        "snapshot_id": new.snapshot_id,
        "ann_build_s": round(ann_s, 2),
        "ann_threads": ann_threads,
        "ann_expansion_add": ef,
    }
    info_file.write_text(json.dumps(info, indent=2) + "\n")
    return data, info


def _build_exact(data: Path, n: int, seed: int, work: Path, backend: str, spectrum, max_words: int):
    from trustindex.query.onnx_encoder import MODEL_FILE, OnnxEncoder
    from trustindex.schemas.policy import Policy
    from trustindex.schemas.snapshot import BM25_DIR, EMBEDDINGS, ENCODER_DIR, TABLE_FILES
    from trustindex.warehouse.bm25 import build_bm25_from_tokens
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current
    from trustindex.warehouse.tables import write_table

    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    times = {}
    t0 = time.perf_counter()
    stream = token_stream(max_words, work=work)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(60, 141, size=n)
    starts = rng.integers(0, len(stream) - 141, size=n)
    docs_tokens = [stream[s : s + k] for s, k in zip(starts, lengths, strict=True)]
    bdir = new_build_dir(data)
    for name, t in _tables(n, docs_tokens, seed).items():
        write_table(t, bdir / TABLE_FILES[name])
    times["tables_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_bm25_from_tokens(docs_tokens, bdir / BM25_DIR)
    times["bm25_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mean, cov = spectrum if spectrum is not None else real_spectrum(work=work)
    emb = vectors(n, mean, cov, seed)
    np.save(bdir / EMBEDDINGS, emb, allow_pickle=False)
    times["vectors_s"] = time.perf_counter() - t0
    if backend == Backend.ONNX_INT8:
        enc = encoder_dir()
        (bdir / ENCODER_DIR).mkdir()
        for f in sorted(enc.iterdir()):
            shutil.copyfile(f, bdir / ENCODER_DIR / f.name)
        encoder = OnnxEncoder(bdir / ENCODER_DIR)
        model = {
            "id": MODEL_ID,
            "backend": backend,
            "dimensions": encoder.dimensions,
            "sha256": encoder.meta["files"][MODEL_FILE],
            "encoder_dir": ENCODER_DIR,
            "max_seq_length": encoder.max_seq_length,
        }
    elif backend == Backend.SENTENCE_TRANSFORMERS:
        model = {"id": MODEL_ID, "backend": backend, "dimensions": int(emb.shape[1]), "sha256": weights_sha256()}
    else:
        raise ValueError(f"unknown backend {backend!r}")
    m = finish_snapshot(
        data,
        bdir,
        sources=[{"source": "synthetic", "commit": "0" * 40, "status": "ok"}],
        embedding_model=model,
        row_counts={"chunks": n, "embeddings": n},
        build_policy_id=Policy.default().policy_id,
    )
    set_current(data, m.snapshot_id)
    info = {
        "n": n,
        "ann": False,
        "seed": seed,
        "snapshot_id": m.snapshot_id,
        **{k: round(v, 2) for k, v in times.items()},
    }
    (data / "build.json").write_text(json.dumps(info, indent=2) + "\n")
    return data, info
