"""The optional reranking stage: a sentence-transformers CrossEncoder from a local path orders, never scores."""

import pytest

from trustindex.schemas.policy import Policy


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory):
    # No trained cross-encoder ships offline; a real CrossEncoder built from the local MiniLM weights (its
    # classification head freshly initialised) exercises the same loading and prediction path.
    import torch
    from sentence_transformers import CrossEncoder

    from trustindex.schemas.embedding_model import model_path

    d = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)  # the fresh head's weights, so the reranked order is the same on every run
    CrossEncoder(str(model_path()), num_labels=1, device="cpu").save(str(d))
    return d


def test_rerank_orders_but_never_changes_the_percentages(refreshed, cross_encoder_dir):
    from trustindex.query.index import Index

    idx = Index.open(data_dir=refreshed["data"])
    q = "How much memory does the proof server need?"
    plain = idx.search(q, k=50)
    assert plain["channels"]["rerank"]["ran"] is False
    idx.reload_policy(Policy.from_dict({"rerank": {"model_path": str(cross_encoder_dir), "depth": 10}}))
    ranked = idx.search(q, k=50)
    assert ranked["channels"]["rerank"]["ran"] is True
    reranked = [h for h in ranked["hits"] if "rerank" in h["channels"]]
    assert len(reranked) == 10 and [h["rank_position"] for h in reranked] == list(range(1, 11))
    keys = [h["channels"]["rerank"]["score"] * h["trust_score"] for h in reranked]
    assert keys == sorted(keys, reverse=True)
    before = {h["chunk_id"]: h for h in plain["hits"]}
    # Without a cross-encoder, page support also orders the list, so the two top 50s differ at their tails; every
    # passage in both keeps its confidence.  The shown percentage is the tier's ceiling times the passage's share of
    # the pool's best: the answer confidence (and so the tier) is read from the final top hits, which the reranker
    # may change, so the percentages of the two lists differ by one factor, and by none when the tier stayed.
    ceiling = {t: Policy.default()["match"][f"{t}_ceiling"] for t in ("high", "mid", "low")}
    scale = ceiling[ranked["match_tier"]] / ceiling[plain["match_tier"]]
    both = [h for h in ranked["hits"] if h["chunk_id"] in before]
    assert len(both) >= 40
    for h in both:
        assert h["confidence"] == before[h["chunk_id"]]["confidence"]
        assert h["display_confidence"] == pytest.approx(before[h["chunk_id"]]["display_confidence"] * scale, abs=2e-6)


def test_missing_model_is_reported_not_an_error(refreshed, tmp_path):
    from trustindex.query.index import Index

    idx = Index.open(
        data_dir=refreshed["data"], policy=Policy.from_dict({"rerank": {"model_path": str(tmp_path / "x")}})
    )
    r = idx.search("proof server", k=3)
    assert r["channels"]["rerank"]["ran"] is False and "not found" in r["channels"]["rerank"]["reason"]
