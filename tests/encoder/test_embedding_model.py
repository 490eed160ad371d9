"""The embedding model's one vocabulary (schemas/embedding_model.py), and a reference-backend snapshot checked
against the weights that embedded it when it is opened."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from tests.kits.encoderkit import build_tiny
from trustindex.schemas.embedding_model import MODEL_ID, Backend, weights_sha256
from trustindex.schemas.errors import EmbeddingModelError, EmbeddingModelMismatch
from trustindex.schemas.snapshot import MANIFEST, SNAPSHOTS_DIR, read_manifest


def test_weights_hash_is_the_safetensors_file_else_the_torch_one(tmp_path):
    (tmp_path / "pytorch_model.bin").write_bytes(b"torch weights")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"torch weights").hexdigest()
    (tmp_path / "model.safetensors").write_bytes(b"safetensors weights")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"safetensors weights").hexdigest()


def test_a_folder_without_weights_is_a_clear_error(tmp_path):
    with pytest.raises(EmbeddingModelError, match=f"{tmp_path}: no model weights.*model.safetensors"):
        weights_sha256(tmp_path)


@pytest.fixture(scope="module")
def reference_snapshot(tmp_path_factory):
    """Three passages with the torch backend."""
    from trustindex.encoder.factory import make_embedder

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
