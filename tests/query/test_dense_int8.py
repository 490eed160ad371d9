"""The int8 prefilter (query/dense_int8.py): with it, exact search still equals a full float32 scan."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kits.vectors import clustered, full_scan, unit, with_copies
from trustindex.query.dense import DenseIndex
from trustindex.query.dense_int8 import Int8Prefilter

DIMS = 64


@pytest.mark.parametrize(
    "name,emb,depth",
    [
        ("clustered", clustered(3000, seed=3, dims=DIMS), 50),
        ("copies at the cut", with_copies(3000, 400, seed=4).astype(np.float16), 100),
        ("depth beyond a quarter", clustered(800, seed=5, dims=DIMS), 300),
    ],
)
def test_prefiltered_search_equals_full_scan(name, emb, depth):
    index = DenseIndex(emb, None, exact_below=1 << 40)
    plain = DenseIndex(emb, None, exact_below=1 << 40)  # usearch's float16 scan, proven the same way
    assert index.warm(min_rows=0) and index._prefilter is not None
    rng = np.random.default_rng(7)
    for q in [
        emb[11].astype(np.float32),
        unit(rng.standard_normal(emb.shape[1])).astype(np.float32),
        (emb[5].astype(np.float32) * 3.0),
    ]:  # an unnormalised query: the bound scales with ‖q‖
        rows, cos = index.top(q, depth)
        ref_rows, ref_cos = full_scan(emb, q, depth)
        np.testing.assert_array_equal(rows, ref_rows)
        np.testing.assert_allclose(cos, ref_cos, rtol=0, atol=2e-6 * float(np.linalg.norm(q)))
        plain_rows, plain_cos = plain.top(q, depth)
        np.testing.assert_array_equal(rows, plain_rows)
        np.testing.assert_array_equal(cos, plain_cos)  # bit for bit: the same float32 re-scoring decides


def test_ties_far_past_the_first_fetch_are_all_found_in_one_pass():
    """401 identical rows at the top and depth 10: the first fetch (4 × depth) holds a tenth of them; the one pass
    over the bounds must bring in every other copy, so the ties still go to the lowest rows."""
    emb = with_copies(3000, 400, seed=4).astype(np.float16)
    index = DenseIndex(emb, None, exact_below=1 << 40)
    assert index.warm(min_rows=0)
    q = emb[0].astype(np.float32)
    rows, cos = index.top(q, 10)
    ref_rows, ref_cos = full_scan(emb, q, 10)
    copies = np.flatnonzero((emb == emb[0]).all(axis=1))
    assert copies.size == 401 and rows.tolist() == copies[:10].tolist()
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_allclose(cos, ref_cos, rtol=0, atol=2e-6)


def test_upper_bounds_hold_for_every_row():
    emb = clustered(2000, seed=8, dims=DIMS)
    pre = Int8Prefilter(emb, threads=1)
    x = emb.astype(np.float64)
    for seed in range(5):
        q = unit(np.random.default_rng(seed).standard_normal(DIMS))
        ub = pre.upper_bounds(q.astype(np.float32))
        exact = x @ q.astype(np.float32).astype(np.float64)
        assert (ub >= exact - 1e-12).all()
        assert (ub - exact).max() < 0.1  # and the bound is useful: far tighter than the cosine's range


def test_warm_is_skipped_for_small_snapshots_and_ann():
    small = DenseIndex(clustered(500, dims=DIMS), None, exact_below=1 << 40)
    assert small.warm() is False  # below MIN_ROWS: usearch's scan is already fast
    rows, _ = small.top(small.emb[0].astype(np.float32), 5)
    assert rows[0] == 0


def test_policy_reload_keeps_the_prefilter():
    emb = clustered(1000, dims=DIMS)
    a = DenseIndex(emb, None, exact_below=1 << 40)
    a.warm(min_rows=0)
    b = DenseIndex(emb, None, exact_below=1 << 40)
    b.share_warmth(a)
    assert b._prefilter is a._prefilter
    c = DenseIndex(clustered(1000, seed=9, dims=DIMS), None, exact_below=1 << 40)
    c.share_warmth(a)  # other embeddings: nothing shared
    assert c._prefilter is None


def test_without_the_onnx_package_warm_keeps_usearch(monkeypatch):
    """A serving install may lack `onnx` (query/ needs only onnxruntime): warm() then changes nothing."""
    import trustindex.query.dense_int8 as di

    monkeypatch.setattr(di, "available", lambda: False)
    emb = clustered(1000, dims=DIMS)
    index = DenseIndex(emb, None, exact_below=1 << 40)
    assert index.warm(min_rows=0) is False and index._prefilter is None
    q = emb[3].astype(np.float32)
    np.testing.assert_array_equal(index.top(q, 10)[0], full_scan(emb, q, 10)[0])


def test_concurrent_searches_agree_with_sequential_ones():
    from concurrent.futures import ThreadPoolExecutor

    emb = clustered(4000, seed=12, dims=DIMS)
    index = DenseIndex(emb, None, exact_below=1 << 40)
    index.warm(min_rows=0)
    rng = np.random.default_rng(13)
    qs = [unit(rng.standard_normal(DIMS)).astype(np.float32) for _ in range(40)]
    alone = [index.top(q, 60) for q in qs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda q: index.top(q, 60), qs * 3))
    for j, (rows, cos) in enumerate(together):
        np.testing.assert_array_equal(rows, alone[j % len(qs)][0])
        np.testing.assert_array_equal(cos, alone[j % len(qs)][1])


def test_first_candidates_from_a_sampled_threshold_hold_the_highest_bounds():
    """``leading_rows`` reads its threshold from a sample of the bounds: whatever it returns is ascending, holds at
    least ``depth`` rows, every bound above its lowest member's, and never a row ruled out (-inf: top_within)."""
    from trustindex.query.dense_int8 import leading_rows

    rng = np.random.default_rng(21)
    for n, fetch, depth in [(10_000, 800, 200), (100_000, 800, 200), (5_000, 256, 64), (3_000, 40, 10)]:
        ub = rng.standard_normal(n).astype(np.float32)
        ub[rng.random(n) < 0.3] = -np.inf
        rows = leading_rows(ub, fetch, depth)
        assert rows.size >= depth and (np.diff(rows) > 0).all() and np.isfinite(ub[rows]).all()
        assert (ub[np.setdiff1d(np.arange(n), rows)] <= ub[rows].min()).all()
    unsampled = np.full(4000, -np.inf, dtype=np.float32)
    unsampled[1::4] = rng.standard_normal(1000)  # the stride-4 sample sees only ruled-out rows: its threshold is -inf
    rows = leading_rows(unsampled, 256, 64)
    assert rows.size == 256 and np.isfinite(unsampled[rows]).all()  # so the exact partition answers


def test_sampled_candidates_give_a_full_scans_top_at_every_depth():
    emb = clustered(12_000, seed=22, dims=DIMS)
    index = DenseIndex(emb, None, exact_below=1 << 40)
    assert index.warm(min_rows=0)
    rng = np.random.default_rng(23)
    for depth in (1, 10, 100, 200, 700):
        q = unit(rng.standard_normal(DIMS)).astype(np.float32)
        rows, cos = index.top(q, depth)
        ref_rows, _ref = full_scan(emb, q, depth)
        np.testing.assert_array_equal(rows, ref_rows)
