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


def test_rerank_is_the_named_relevance_of_the_order_and_never_changes_confidence(refreshed, cross_encoder_dir):
    from trustindex.query.explain import check
    from trustindex.query.index import Index

    idx = Index.open(data_dir=refreshed["data"])
    q = "How much memory does the proof server need?"
    plain = idx.search(q, k=50)
    assert plain["channels"]["rerank"]["ran"] is False
    policy = Policy.from_dict({"rerank": {"model_path": str(cross_encoder_dir), "depth": 10}})
    idx.reload_policy(policy)
    ranked = idx.search(q, k=50)
    assert ranked["channels"]["rerank"]["ran"] is True
    reranked = [h for h in ranked["hits"] if "rerank" in h["channels"]]
    # a page the site does not serve (the demo's draft) yields to every served candidate, read or not (issue 43):
    # the cross-encoder read 10, those of the draft rank below every served candidate of the pool
    served = [h for h in ranked["hits"] if h["ranking_terms"]["route"]["status"] != "unrouted"]
    read = [h for h in reranked if h in served]
    assert 0 < len(read) < 10 and [h["rank_position"] for h in read] == list(range(1, len(read) + 1))
    # the cross-encoder's probability is the ranking relevance: ranking_score = probability × trust
    for h in read:
        assert h["ranking_terms"]["rerank"] == {"read": True, "value": h["channels"]["rerank"]["score"]}
        assert "page" not in h["ranking_terms"]
        assert h["ranking_score"] == pytest.approx(h["channels"]["rerank"]["score"] * h["trust_score"], abs=2e-6)
    # the served passages it did not read follow, by confidence (the tie rule), at a ranking score of 0
    unread = served[len(read) :]
    assert unread and all(h["ranking_score"] == 0 and not h["ranking_terms"]["rerank"]["read"] for h in unread)
    assert [h["confidence"] for h in unread] == sorted((h["confidence"] for h in unread), reverse=True)
    assert check(ranked, policy) == [] and check(plain, Policy.default()) == []
    # every passage in both lists keeps its own confidence; the percentage follows the order it is shown in
    before = {h["chunk_id"]: h for h in plain["hits"]}
    both = [h for h in ranked["hits"] if h["chunk_id"] in before]
    assert len(both) >= 40
    for h in both:
        assert h["confidence"] == before[h["chunk_id"]]["confidence"]


def test_missing_model_is_reported_not_an_error(refreshed, tmp_path):
    from trustindex.query.index import Index

    idx = Index.open(
        data_dir=refreshed["data"], policy=Policy.from_dict({"rerank": {"model_path": str(tmp_path / "x")}})
    )
    r = idx.search("proof server", k=3)
    assert r["channels"]["rerank"]["ran"] is False and "not found" in r["channels"]["rerank"]["reason"]
