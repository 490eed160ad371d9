"""The judged evaluation queries of bench/bench_quality.py, and its metric functions (no model is loaded)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from bench.bench_quality import QUERIES, load_queries, ndcg_at_10, rank_files, recall_at_10, reciprocal_rank
from tests.kits.realdata import REAL_DOCS, needs_real_docs

CORPUS = REAL_DOCS


@pytest.fixture(scope="module")
def queries():
    return load_queries(QUERIES)


def test_every_line_is_one_json_object():
    lines = [ln for ln in QUERIES.read_text(encoding="utf-8").splitlines() if ln.strip()]
    for ln in lines:
        obj = json.loads(ln)
        assert set(obj) == {"id", "query", "relevant"}, obj


def test_enough_queries_with_unique_ids_and_texts(queries):
    assert len(queries) >= 30
    ids = [q["id"] for q in queries]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"q\d{2,}", i) for i in ids)
    texts = [q["query"].strip().lower() for q in queries]
    assert len(set(texts)) == len(texts)
    assert all(len(t) >= 10 for t in texts)


def test_grades_and_a_grade_2_file_per_query(queries):
    for q in queries:
        rel = q["relevant"]
        assert rel, q["id"]
        assert set(rel.values()) <= {1, 2}, q["id"]
        assert all(isinstance(g, int) and not isinstance(g, bool) for g in rel.values()), q["id"]
        assert 2 in rel.values(), f"{q['id']} has no grade-2 file"
        assert all(p == p.strip() and not p.startswith("/") and "\\" not in p for p in rel), q["id"]


@needs_real_docs
def test_every_judged_path_exists_in_the_corpus(queries):
    missing = [(q["id"], p) for q in queries for p in q["relevant"] if not (CORPUS / p).is_file()]
    assert not missing


# --- the metric --------------------------------------------------------------------------------------------------


def _dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def test_ndcg_matches_a_hand_computed_value():
    # Ranked a (2), x (unjudged), b (1); c (2) judged but not retrieved.
    # DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5
    # IDCG = 2/log2(2) + 2/log2(3) + 1/log2(4) = 2 + 1.2618595 + 0.5 = 3.7618595; nDCG@10 = 0.6645650
    judg = {"a": 2, "b": 1, "c": 2}
    got = ndcg_at_10(["a", "x", "b"], judg)
    assert got == pytest.approx(2.5 / (2 + 2 / math.log2(3) + 0.5), abs=1e-12)
    assert got == pytest.approx(0.6645650, abs=1e-6)  # 2.5 / 3.7618595


def test_ndcg_perfect_and_zero():
    assert ndcg_at_10(["a", "c", "b", "x"], {"a": 2, "b": 1, "c": 2}) == pytest.approx(1.0)
    assert ndcg_at_10(["x", "y"], {"a": 2}) == 0.0


def test_ndcg_counts_only_the_top_10_and_distinct_files():
    ranked = [f"x{i}" for i in range(10)] + ["a"]  # the relevant file at rank 11
    assert ndcg_at_10(ranked, {"a": 2}) == 0.0
    ranked = [f"x{i}" for i in range(9)] + ["a"]  # at rank 10
    assert ndcg_at_10(ranked, {"a": 2}) == pytest.approx((2 / math.log2(11)) / 2)
    # A repeated file counts once: "a" then "a" again then "b" ranks b second.
    assert ndcg_at_10(["a", "a", "b"], {"a": 1, "b": 2}) == pytest.approx(_dcg([1, 2]) / _dcg([2, 1]))


def test_ndcg_short_ranking_gives_no_credit_to_unretrieved_files():
    # Fewer than 10 ranked files: the judged but unretrieved file must not slip into the top 10.
    assert ndcg_at_10(["a"], {"a": 1, "b": 2}) == pytest.approx(_dcg([1]) / _dcg([2, 1]))


def test_ndcg_random_rankings_match_the_formula():
    rng = np.random.default_rng(0)
    files = [f"f{i}" for i in range(30)]
    for _ in range(50):
        judg = {f: int(g) for f, g in zip(rng.choice(files, 6, replace=False), rng.integers(1, 3, 6), strict=True)}
        judg[files[0]] = 2
        ranked = list(rng.permutation(files))[: int(rng.integers(1, 16))]
        gains = [judg.get(f, 0) for f in ranked[:10]]
        want = _dcg(gains) / _dcg(sorted(judg.values(), reverse=True)[:10])
        assert ndcg_at_10(ranked, judg) == pytest.approx(want, abs=1e-12)


def test_ndcg_needs_a_relevant_judgment():
    with pytest.raises(ValueError):
        ndcg_at_10(["a"], {})


def test_recall_of_grade_2_files():
    judg = {"a": 2, "b": 1, "c": 2}
    assert recall_at_10(["a", "b", "x"], judg) == 0.5
    assert recall_at_10(["c", "a"], judg) == 1.0
    assert recall_at_10([f"x{i}" for i in range(10)] + ["a"], judg) == 0.0


def test_reciprocal_rank_of_the_first_judged_file_in_the_top_10():
    judg = {"a": 2, "b": 1}
    assert reciprocal_rank(["x", "b", "a"], judg) == 0.5  # any judged file counts, grade 1 too
    assert reciprocal_rank(["x", "b", "a"], judg, grade=2) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "x", "y", "a"], judg) == pytest.approx(1 / 3)  # ranks count distinct files
    assert reciprocal_rank([f"x{i}" for i in range(10)] + ["a"], judg) == 0.0


def test_ndcg_at_5_ignores_what_ranks_below_5():
    judg = {"a": 2}
    ranked = [f"x{i}" for i in range(5)] + ["a"]
    assert ndcg_at_10(ranked, judg, k=5) == 0.0 and ndcg_at_10(ranked, judg) > 0.0


def test_files_ranked_by_their_best_chunk():
    # chunks: file 0 -> 0.1, 0.9; file 1 -> 0.5; file 2 -> 0.9 (ties with file 0: lower index first); file 3: none
    scores = np.array([0.1, 0.9, 0.5, 0.9, -np.inf])
    chunk_file = np.array([0, 0, 1, 2, 3])
    assert rank_files(scores, chunk_file, 4) == [0, 2, 1]
    assert rank_files(scores, chunk_file, 4, k=2) == [0, 2]
