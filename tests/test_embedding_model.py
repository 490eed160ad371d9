"""The embedding model's one vocabulary (schemas/embedding_model.py), and a reference-backend snapshot checked
against the weights that embedded it when it is opened."""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime

import pytest

from trustindex.schemas.embedding_model import MODEL_ID, Backend, weights_sha256
from trustindex.schemas.errors import EmbeddingModelError, EmbeddingModelMismatch
from trustindex.schemas.snapshot import MANIFEST, SNAPSHOTS_DIR, read_manifest, resolve_current
from trustindex.schemas.tables import SOURCE_TABLES, chunk_id_of, doc_id_of, sha256_text, table_from_rows


def test_weights_hash_is_the_safetensors_file_else_the_torch_one(tmp_path):
    (tmp_path / "pytorch_model.bin").write_bytes(b"torch weights")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"torch weights").hexdigest()
    (tmp_path / "model.safetensors").write_bytes(b"safetensors weights")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"safetensors weights").hexdigest()


def test_a_folder_without_weights_is_a_clear_error(tmp_path):
    with pytest.raises(EmbeddingModelError, match=f"{tmp_path}: no model weights.*model.safetensors"):
        weights_sha256(tmp_path)


PAGES = {  # path -> passages
    "docs/install.md": ["Install the Compact compiler with the installer script, then add it to your PATH."],
    "docs/wallet.md": ["The wallet SDK signs transactions and keeps the user's keys on their own machine."],
    "docs/node.md": ["Running a node needs 16 GB of memory and a recent four-core CPU."],
}


def tiny_tables(pages: dict[str, list[str]] = PAGES) -> tuple[dict, dict]:
    """Source "tiny"'s tables: one document per path, its passages as chunks (each under the path as heading)."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    docs, chunks, attribution = [], [], []
    for path, passages in pages.items():
        did = doc_id_of("tiny", path)
        docs.append({"doc_id": did, "source": "tiny", "commit": "0" * 40, "path": path, "kind": "markdown"})
        docs[-1].update({"last_modified": when, "last_substantive_change": when, "warnings": []})
        attribution.append({"doc_id": did, "publisher": "midnight", "tier": "official", "origin": "source"})
        for i, text in enumerate(passages):
            sha = sha256_text(text)
            chunks.append(
                {
                    "chunk_id": chunk_id_of("tiny", path, i + 1, i + 1, sha, i),
                    "doc_id": did,
                    "source": "tiny",
                    "path": path,
                    "ordinal": i,
                    "heading_path": [path],
                    "start_line": i + 1,
                    "end_line": i + 1,
                    "text": text,
                    "content_sha256": sha,
                    "token_count": len(text.split()),
                }
            )
    rows = {"documents": docs, "chunks": chunks, "attribution": attribution}
    source = {"source": "tiny", "repo": "https://example.invalid/tiny.git", "commit": "0" * 40, "status": "ok"}
    return {name: table_from_rows(name, rows.get(name, [])) for name in SOURCE_TABLES}, source


def build_tiny(data, embedder, pages: dict[str, list[str]] = PAGES):
    """The pages built by the real build path (tables, embeddings, BM25, manifest) and published; the snapshot's
    folder and the embedding stats."""
    from trustindex.schemas.policy import Policy
    from trustindex.warehouse.build import write_snapshot_files
    from trustindex.warehouse.embeddings import EmbeddingCache
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

    cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
    tables, source = tiny_tables(pages)
    build = new_build_dir(data)
    counts, stats = write_snapshot_files(build, {"tiny": tables}, [source], embedder, cache)
    m = finish_snapshot(
        data,
        build,
        sources=[source],
        embedding_model=embedder.info(),
        row_counts=counts,
        build_policy_id=Policy.default().policy_id,
    )
    set_current(data, m.snapshot_id)
    return resolve_current(data), stats


@pytest.fixture(scope="module")
def reference_snapshot(tmp_path_factory):
    """Three passages with the torch backend."""
    from trustindex.warehouse.embedder_factory import make_embedder

    return build_tiny(tmp_path_factory.mktemp("reference-data"), make_embedder(Backend.SENTENCE_TRANSFORMERS))[0]


def test_reference_snapshot_opens_with_the_weights_that_built_it(reference_snapshot):
    from trustindex.query.index import Index

    assert read_manifest(reference_snapshot).embedding_model["sha256"] == weights_sha256()
    result = Index.open(reference_snapshot).search("how much memory does a node need", k=3)
    assert result["hits"][0]["provenance"]["path"] == "docs/node.md"


@pytest.mark.parametrize(
    "key, claimed",
    [("sha256", "0" * 64), ("id", "sentence-transformers/all-mpnet-base-v2")],
    ids=["other weights", "other model"],
)
def test_reference_snapshot_refuses_other_weights(reference_snapshot, tmp_path, key, claimed):
    """A manifest that names other weights than the ones installed here: opening it names both and refuses."""
    from trustindex.query.index import Index

    snap = tmp_path / SNAPSHOTS_DIR / reference_snapshot.name
    shutil.copytree(reference_snapshot, snap)
    m = read_manifest(snap)
    m.embedding_model[key] = claimed
    (snap / MANIFEST).write_text(m.to_json(), encoding="utf-8")  # a well-formed manifest, checksum and all
    with pytest.raises(EmbeddingModelMismatch) as err:
        Index.open(snap)
    message = str(err.value)
    assert m.snapshot_id in message and claimed in message
    assert MODEL_ID in message and weights_sha256() in message
