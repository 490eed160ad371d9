"""Encoder identities across recipes (issue 30 item 1): a snapshot built with the old dynamic-scale encoder (recipe
4) keeps it, still opens and searches; the new batch-independent encoder (recipe 5) is another identity, so a build
re-embeds under it once and then reuses its cache; and the query side embeds with the snapshot's own encoder, giving
bitwise the vectors the build stored although the build ran texts in batches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kits.encoderkit import build_tiny
from trustindex.encoder.onnx_export import DYNAMIC_RECIPE, RECIPE_ENV, RECIPE_VERSION
from trustindex.schemas.embedding_model import Backend
from trustindex.schemas.snapshot import EMBEDDINGS, read_manifest

VOCAB = "ledger proof circuit wallet token node block contract state witness key fee chain data user".split()


def passages() -> dict[str, list[str]]:
    """Three pages: hand-written passages, and twelve of one token length (so the build batches them)."""
    rng = np.random.default_rng(7)
    same = [" ".join(rng.choice(VOCAB, size=20)) for _ in range(12)]
    return {
        "docs/install.md": ["Install the Compact compiler with the installer script, then add it to your PATH."],
        "docs/node.md": ["Running a node needs 16 GB of memory and a recent four-core CPU.", *same[:6]],
        "docs/words.md": same[6:],
    }


def build(data: Path, encoders: Path, recipe: int, monkeypatch) -> tuple[Path, dict, str]:
    """One snapshot by the real build path with the given recipe: its folder, embedding stats, build identity."""
    from trustindex.encoder.factory import embedder_identity, make_embedder

    monkeypatch.setenv(RECIPE_ENV, str(recipe))
    embedder = make_embedder(Backend.ONNX_INT8, cache_dir=encoders)
    snapshot, stats = build_tiny(data, embedder, passages())
    return snapshot, {"encoded": stats.encoded, "hits": stats.cache_hits}, embedder_identity("onnx-int8")


@pytest.fixture(scope="module")
def encoders(request, tmp_path_factory) -> Path:
    cache = request.config.cache  # the exports tests/encoder/test_onnx_encoder.py makes, shared
    return Path(cache.mkdir("trustindex-onnx-encoder")) if cache is not None else tmp_path_factory.mktemp("enc")


def stored_vectors_are_the_query_vectors(snapshot: Path) -> None:
    """Each passage's stored vector (float16) is bitwise what the snapshot's query encoder gives its text alone."""
    import pyarrow.parquet as pq

    from trustindex.query.index import Index
    from trustindex.schemas.embedded_text import embedding_input

    index = Index.open(snapshot)
    texts = embedding_input(pq.read_table(snapshot / "chunks.parquet"))
    stored = np.load(snapshot / EMBEDDINGS)
    alone = np.vstack([index.state.query_vectors.encode(t) for t in texts]).astype(np.float16)
    np.testing.assert_array_equal(alone, stored)


def test_recipes_are_identities_and_old_snapshots_keep_theirs(tmp_path, encoders, monkeypatch):
    from trustindex.query.index import Index

    data = tmp_path / "data"
    old, first, old_identity = build(data, encoders, DYNAMIC_RECIPE, monkeypatch)
    assert first["encoded"] == 14
    assert read_manifest(old).embedding_model["id"]
    new, second, new_identity = build(data, encoders, RECIPE_VERSION, monkeypatch)
    assert new_identity != old_identity and new.name != old.name
    assert second == {"encoded": 14, "hits": 0}  # a new identity: every text embedded again, none taken from r4
    _, third, _ = build(data, encoders, RECIPE_VERSION, monkeypatch)
    assert third == {"encoded": 0, "hits": 14}  # same identity: nothing embedded
    _, back, _ = build(data, encoders, DYNAMIC_RECIPE, monkeypatch)
    assert back == {"encoded": 0, "hits": 14}  # the old identity's cache is kept beside the new one

    monkeypatch.delenv(RECIPE_ENV)
    # the old snapshot still opens and searches, with its own (one text per run) encoder
    old_index = Index.open(old)
    assert not old_index.state.encoder.batch_independent
    hit = old_index.search("how much memory does a node need", k=3)["hits"][0]
    assert hit["provenance"]["path"] == "docs/node.md"
    new_index = Index.open(new)
    assert new_index.state.encoder.batch_independent
    assert new_index.search("how much memory does a node need", k=3)["hits"][0]["provenance"]["path"] == "docs/node.md"
    # the query side embeds with the snapshot's identity: a passage's text as a query is its stored vector
    stored_vectors_are_the_query_vectors(new)
    stored_vectors_are_the_query_vectors(old)
    assert not np.array_equal(np.load(old / EMBEDDINGS), np.load(new / EMBEDDINGS))
