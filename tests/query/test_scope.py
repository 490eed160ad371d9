"""A search scoped to some sources (issue 44, query/scope.py): candidates outside the scope are never gathered, so
no hit, score, count, abstention or answer signal depends on them.

Two snapshots of the same public source beside two different private sources (tests/kits/scopekit.py: other words,
other topics, other version components, the same number of passages and lexical tokens): a search scoped to the
public source must answer byte for byte the same in both (but for the snapshot's id), for every kind of request;
unscoped, the private passages do answer, so the comparison has something to hide.  (Only the snapshot's id and
build time may differ.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.kits.scopekit import PRIVATE, PRIVATE_A, PRIVATE_B, PUBLIC, balanced, build_two_sources, private_words
from trustindex.query.index import Index
from trustindex.query.scope import ScopedDense, view
from trustindex.schemas.access import SourceScope
from trustindex.schemas.errors import QueryError

PUBLIC_ONLY = SourceScope((PUBLIC,))
REQUESTS = [  # (query, keyword arguments of Index.search): plain, targets, strict, also, k, off-topic
    ("How do I install the Compact compiler?", {}),
    ("install the compiler on the build farm mirror", {"k": 3}),
    ("escrow contract releases the buyer's payment", {"targets": {"compact-language": "0.31"}}),
    ("escrow contract", {"targets": ["compact-language=0.31"], "strict": True}),
    ("acquisition of Lumen Labs", {}),
    ("salary bands and payroll review", {"also": ["Nightjar acquisition price"]}),
    ("zorblax audit", {"k": 1}),
    ("wallet keys", {"also": ["Kestrel laptops device management"], "k": 2}),
    ("Michael Jackson albums", {}),
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The two data directories, A (Nightjar) and B (Kestrel), opened as a server opens them."""
    from trustindex.encoder.factory import make_embedder
    from trustindex.schemas.embedding_model import Backend, encoder_cache_dir

    root = tmp_path_factory.mktemp("scoped")
    embedder = make_embedder(Backend.ONNX_INT8, cache_dir=encoder_cache_dir(root))
    out = {}
    for name, private in (("a", PRIVATE_A), ("b", balanced(PRIVATE_A, PRIVATE_B))):
        build_two_sources(root / name, private, embedder)
        out[name] = Index.open(data_dir=root / name, query_cache=64).warm()
    return out


def without_snapshot(response: dict) -> str:
    """The response but for what names the snapshot (its id and build time)."""
    return json.dumps({k: v for k, v in response.items() if k not in ("snapshot_id", "built_at")}, sort_keys=True)


def private_chunk_ids(index: Index) -> set[str]:
    return {cid for cid, s in zip(index.data.chunk_ids, index.data.chunks["source"], strict=True) if s == PRIVATE}


def test_unscoped_searches_do_find_the_private_passages(pair):
    """The comparison below has something to hide: the private passages answer these queries without a scope."""
    for name, index in pair.items():
        private = private_chunk_ids(index)
        found = {h["chunk_id"] for q, kw in REQUESTS if "targets" not in kw for h in index.search(q, **kw)["hits"]}
        assert found & private, name


@pytest.mark.parametrize("query, kw", REQUESTS)
def test_a_scoped_search_does_not_depend_on_the_other_sources(pair, query, kw):
    a, b = (pair[n].search(query, scope=PUBLIC_ONLY, **kw) for n in ("a", "b"))
    assert without_snapshot(a) == without_snapshot(b)
    asked = " ".join([query, *kw.get("also", [])]).lower()
    secret = {w for w in private_words(PRIVATE_A) | private_words(PRIVATE_B) if w not in asked}
    for name, r in (("a", a), ("b", b)):
        text = json.dumps(r).lower()
        assert not private_chunk_ids(pair[name]) & {h["chunk_id"] for h in r["hits"]}
        assert PRIVATE not in text and not {w for w in secret if w in text}
        assert all(a["source"] == PUBLIC for h in r["hits"] for a in [h["provenance"], *h["also_in"]])
        assert [s["source"] for s in r["sources"]] == [PUBLIC]


def test_cached_answers_and_query_vectors_stay_within_their_scope(pair):
    """The full caller asks first (its vectors, shown hits and page terms kept), then the scoped one: the scoped
    answer is the one a fresh index gives, and the query-vector cache keeps one vector per scope."""
    index = pair["a"]
    q = "Nightjar staff install the compiler"
    full = index.search(q, k=5)
    assert private_chunk_ids(index) & {h["chunk_id"] for h in full["hits"]}
    scoped = index.search(q, k=5, scope=PUBLIC_ONLY)
    fresh = Index.open(data_dir=index.data.dir.parent.parent, query_cache=64).warm()
    assert without_snapshot(scoped) == without_snapshot(fresh.search(q, k=5, scope=PUBLIC_ONLY))
    kept = index.state.query_vectors._kept
    assert q in kept and any(isinstance(key, tuple) and key[1] == q for key in kept)


def test_every_source_is_the_unscoped_search_itself(pair):
    index = pair["a"]
    for scope in (None, SourceScope(("*",)), SourceScope((PUBLIC, PRIVATE)), SourceScope(("*-*",))):
        assert view(index.state, scope) is index.state
    q = "How do I install the Compact compiler?"
    assert index.search(q, scope=SourceScope((PUBLIC, "acme-*"))) == index.search(q)


def test_the_scope_hides_the_other_sources_components_and_versions(pair):
    index = pair["a"]
    seen = index.view(PUBLIC_ONLY).data
    # the scoped package's name merges with its unscoped spelling (query/component_names.py)
    assert "nightjar-sdk" in index.data.components and "nightjar-sdk" not in seen.components
    assert seen.components["compact-language"] == {">= 0.16", ">= 0.20"}  # not the private page's "0.31"
    with pytest.raises(QueryError) as scoped:
        index.search("sdk", targets={"@acme/nightjar-sdk": "2.1.0"}, scope=PUBLIC_ONLY)
    with pytest.raises(QueryError) as unknown:
        index.search("sdk", targets={"@acme/no-such-sdk": "2.1.0"}, scope=PUBLIC_ONLY)
    assert str(scoped.value).replace("nightjar", "no-such") == str(unknown.value)  # the same error as an unknown one
    r = index.search("escrow", targets={"compact-language": "0.31"}, scope=PUBLIC_ONLY)
    assert "0.31" not in r["targets"][0]["constraints_seen"]
    assert [s.get("source") for s in seen.manifest.sources] == [PUBLIC] and list(seen.sources) == [PUBLIC]


def test_scoped_lexical_statistics_count_the_scope_only(pair):
    """A term only the private source uses is unknown to the scoped search (the lexical channel does not run on it)
    and the idf of a shared term is the scope's own."""
    index = pair["a"]
    lex = index.view(PUBLIC_ONLY).data.lexical
    assert "zorblax" in index.data.lexical.vocab and "zorblax" not in lex.vocab
    r = index.search("zorblax", scope=PUBLIC_ONLY)
    assert r["channels"]["lexical"]["ran"] is False and index.search("zorblax")["channels"]["lexical"]["ran"]
    col = index.data.lexical.vocab["compil"]
    public_rows = {i for i, s in enumerate(index.data.chunks["source"]) if s == PUBLIC}
    rows, _ = index.data.lexical.postings(col)
    assert lex.df(col) == len(set(rows.tolist()) & public_rows) < index.data.lexical.df(col)
    assert lex.n_docs == len(public_rows)
    assert set(lex.postings(col)[0].tolist()) <= public_rows


def test_the_dense_channel_ranks_the_allowed_rows_exactly():
    """``top_within`` against a float32 scan of the allowed rows, with the int8 prefilter and without."""
    from tests.kits.vectors import clustered
    from trustindex.query.dense import DenseIndex

    emb = clustered(6000, seed=3).astype(np.float16)
    allowed = np.zeros(emb.shape[0], dtype=bool)
    allowed[np.random.default_rng(7).choice(emb.shape[0], 2500, replace=False)] = True
    queries = clustered(20, seed=11).astype(np.float32)
    for warm in (False, True):
        dense = DenseIndex(emb)
        if warm:
            assert dense.warm(min_rows=0)
        scoped = ScopedDense(dense, allowed)
        for q in queries:
            rows, cos = scoped.top(q, 50)
            ref_rows = np.flatnonzero(allowed)
            ref = ref_rows[np.lexsort((ref_rows, -dense.cosines(q, ref_rows)))][:50]
            assert allowed[rows].all() and rows.tolist() == ref.tolist()
            assert np.array_equal(cos, dense.cosines(q, rows))
