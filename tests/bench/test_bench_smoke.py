"""The benchmark scripts' functions at tiny sizes (no timing is asserted), and the ANN path of Index.search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import common
from bench.bench_extract import corpus_files, extract_all
from bench.bench_lexical import run as lexical_run
from bench.bench_refresh import cut
from bench.common import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{CORPUS} (the real docs corpus) is not here")


def test_extraction_runs_the_real_extractors():
    total, nfiles, nchunks, failures, rows = extract_all(corpus_files(limit=12), keep_chunks=True)
    assert nfiles == 12 and total > 0 and failures == 0
    assert nchunks == len(rows) > 0 and all(c.text.strip() for _rel, c in rows)


def test_lexical_bench_agrees_with_bm25s():
    files = [p for _rel, p in corpus_files(limit=40)]
    texts = [" ".join(f.read_text(errors="replace").split()[i : i + 80]) for f in files for i in range(0, 400, 80)]
    texts = [t for t in texts if t]
    heads = ["install the compact compiler", "proof server", "ledger state", "wallet", "zzzunknownzzz"]
    r = lexical_run(rounds=1, queries=5, chunks=(texts, heads))
    got = {f["name"]: f for f in r["figures"]}
    assert got["lexical max abs score difference vs bm25s"]["value"] == 0.0
    assert got["lexical top-10 agreement with bm25s (ties at the cut count)"]["value"] == 1.0
    assert r["queries_with_known_terms"] == 4  # the nonsense query has no known term


CUTS = [  # (name, text, body_chars, expected)
    (
        "front matter kept whole",
        "---\ntitle: A\n---\nline one\nline two\nline three\n",
        5,
        "---\ntitle: A\n---\nline one\n",
    ),
    ("short body untouched", "just a line\n", 100, "just a line\n"),
    ("cut at the next line break", "aaaa\nbbbb\ncccc\n", 6, "aaaa\nbbbb\n"),
    ("unterminated front matter is body", "---\nno end\nmore\n", 3, "---\n"),
]


@pytest.mark.parametrize("name,text,chars,expected", CUTS, ids=[c[0] for c in CUTS])
def test_refresh_corpus_cut(name, text, chars, expected):
    assert cut(text, chars) == expected


def test_results_merge_and_render(tmp_path):
    res, docs = tmp_path / "results.json", tmp_path / "benchmarks.md"
    res.write_text(json.dumps({"other": {"figures": [], "kept": True}}))
    fig = common.figure("lexical query time", 50.0, "µs/query", "bm25s", 100.0, 0.5, "≤ 1.2× bm25s", True)
    common.save("lexical", {"figures": [fig], "method": "how"}, results=res, docs=docs)
    data = json.loads(res.read_text())
    assert data["other"]["kept"] and data["lexical"]["figures"][0]["ratio"] == 0.5
    md = docs.read_text()
    assert "| lexical | lexical query time | 50.0 µs/query | bm25s: 100.0 | 0.5 | ≤ 1.2× bm25s | yes |" in md
    assert f"{data['lexical']['machine']['nproc']} cores" in md and "**lexical**" in md


@pytest.fixture(scope="module")
def tiny_snapshot(tmp_path_factory):
    """300 synthetic passages with an HNSW index and the ONNX query encoder (the session's shared export)."""
    from bench import synthetic

    rng = np.random.default_rng(0)
    basis = rng.standard_normal((16, 384))
    spectrum = (np.zeros(384), basis.T @ basis / 16 + 0.01 * np.eye(384))
    work = tmp_path_factory.mktemp("bench-work")
    data, info = synthetic.build(300, ann=True, work=work, ann_threads=1, spectrum=spectrum, max_words=4000)
    return data, info


def test_synthetic_snapshot_ann_search_matches_exact(tiny_snapshot):
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    data, info = tiny_snapshot
    assert info["n"] == 300 and info["ann_build_s"] >= 0
    ann = Index.open(data_dir=data, policy=Policy.from_dict({"dense": {"exact_below": 100}}))
    exact = Index(ann.data, Policy.default())
    assert (ann.dense.mode, exact.dense.mode) == ("ann", "exact")
    for q in ["compact compiler install", "proof server docker"]:
        a, b = ann.search(q, k=10), exact.search(q, k=10)
        assert a["best_cosine"] == b["best_cosine"] and a["match_tier"] == b["match_tier"]
        assert [h["chunk_id"] for h in a["hits"]] == [h["chunk_id"] for h in b["hits"]]
        for h in a["hits"]:  # the hit's dense score is the exact cosine of its row
            i = ann.data.chunk_ids.index(h["chunk_id"])
            assert h["channels"]["dense"]["score"] == pytest.approx(
                float(exact.dense.cosines(ann.encoder.encode([q])[0], [i])[0]), abs=1e-6
            )


def test_query_bench_worker_and_recall(tiny_snapshot, monkeypatch):
    from bench.bench_query import recall_figures, worker
    from trustindex.query.dense_cost import BY_SIZE, PATH_ENV
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    data, _ = tiny_snapshot
    # the graph whenever the snapshot has one, as bench_query's warm worker runs it (a warm process otherwise keeps
    # whichever path it measures cheaper on the machine at that moment: exact on a quiet one, so "ann" would flake)
    monkeypatch.setenv(PATH_ENV, BY_SIZE)
    w = worker(str(data), exact_below=100, reps=1, recall=False)
    assert w["mode"] == "ann" and w["samples"] == 30 and w["p99_ms"] >= w["p50_ms"] > 0
    r = recall_figures(
        Index.open(data_dir=data, policy=Policy.from_dict({"dense": {"exact_below": 100}})), headings_n=10
    )
    assert r["recall_at_10"] >= 0.99 and r["hits_top10_agreement"] >= 0.99  # 300 rows: the search is exhaustive
