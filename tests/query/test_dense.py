"""The dense channel (query/dense.py): exact search equals a full float32 scan; HNSW above a size."""

from __future__ import annotations

import numpy as np
import pytest

from tests.kits.vectors import DIMS, clustered, full_scan, unit, with_copies
from trustindex.query.dense import DenseIndex, build_ann_index
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import DENSE_INDEX

EXACT_CASES = [  # (name, matrix, depth)
    ("fewer rows than twice the depth", clustered(150), 100),
    ("larger than the fetch", clustered(3000), 100),
    ("depth 1", clustered(3000), 1),
    ("copies tie across the cut", with_copies(3000, 400), 100),
    ("float32 storage (older snapshots)", clustered(2000).astype(np.float32), 50),
]


@pytest.mark.parametrize("name,emb,depth", EXACT_CASES, ids=[c[0] for c in EXACT_CASES])
def test_exact_top_equals_full_scan(name, emb, depth):
    d = DenseIndex(emb, None, exact_below=10**9)
    assert d.mode == "exact"
    rng = np.random.default_rng(7)
    queries = [
        unit(rng.standard_normal(DIMS)).astype(np.float32),
        emb[0].astype(np.float32),
        emb[17].astype(np.float32),
    ]
    for q in queries:
        rows, cos = d.top(q, depth)
        ref_rows, ref_cos = full_scan(emb, q, depth)
        np.testing.assert_array_equal(rows, ref_rows)
        np.testing.assert_allclose(cos, ref_cos, rtol=0, atol=2e-6)
        assert d.best(q) == pytest.approx(float(ref_cos[0]), abs=2e-6)


def test_cosines_do_not_depend_on_the_batch():
    emb = clustered(500)
    d = DenseIndex(emb, None)
    q = unit(np.random.default_rng(3).standard_normal(DIMS)).astype(np.float32)
    rows = np.array([499, 3, 250, 3, 0])
    batch = d.cosines(q, rows)
    single = np.array([d.cosines(q, [r])[0] for r in rows])
    np.testing.assert_array_equal(batch, single)
    assert batch[1] == batch[3]
    with pytest.raises(IndexError):
        d.cosines(q, [500])


@pytest.fixture(scope="module")
def ann_dir(tmp_path_factory):
    emb = clustered(3000, seed=5)
    d = tmp_path_factory.mktemp("ann")
    build_ann_index(emb, d / DENSE_INDEX)
    return emb, d


def test_ann_mode_recall_and_exact_cosines(ann_dir):
    emb, directory = ann_dir
    ann = DenseIndex(emb, directory, exact_below=1000)
    assert ann.mode == "ann" and ann.reason is None
    rng = np.random.default_rng(11)
    hits = []
    for _ in range(30):
        q = unit(emb[rng.integers(len(emb))].astype(np.float32) + 0.3 * unit(rng.standard_normal(DIMS)))
        rows, cos = ann.top(q.astype(np.float32), 10)
        assert list(cos) == sorted(cos, reverse=True)
        np.testing.assert_array_equal(cos, ann.cosines(q, rows))  # reported values are the exact ones
        hits.append(len(set(rows.tolist()) & set(full_scan(emb, q, 10)[0].tolist())) / 10)
    assert np.mean(hits) >= 0.95


def test_below_the_threshold_the_ann_file_is_not_used(ann_dir):
    emb, directory = ann_dir
    assert DenseIndex(emb, directory, exact_below=len(emb) + 1).mode == "exact"
    assert DenseIndex(emb, directory, exact_below=len(emb)).mode == "ann"


def test_large_snapshot_without_an_ann_file_searches_exactly(tmp_path):
    emb = clustered(400)
    d = DenseIndex(emb, tmp_path, exact_below=100)
    assert d.mode == "exact" and DENSE_INDEX in d.reason
    q = emb[5].astype(np.float32)
    np.testing.assert_array_equal(d.top(q, 10)[0], full_scan(emb, q, 10)[0])


BAD_ANN = [  # (name, write the file, message fragment)
    ("another matrix's index", lambda p: build_ann_index(clustered(2500, seed=9), p), "count_present"),
    ("other dimensions", lambda p: build_ann_index(clustered(3000, dims=16), p), "dimensions"),
    ("not an index", lambda p: p.write_bytes(b"\x00garbage" * 64), "not a readable usearch index"),
]


@pytest.mark.parametrize("name,write,fragment", BAD_ANN, ids=[c[0] for c in BAD_ANN])
def test_a_mismatched_ann_file_is_refused(ann_dir, tmp_path, name, write, fragment):
    emb, _ = ann_dir
    write(tmp_path / DENSE_INDEX)
    with pytest.raises(SnapshotError, match=fragment):
        DenseIndex(emb, tmp_path, exact_below=1000)


def test_ann_build_is_byte_identical(tmp_path):
    emb = clustered(1500, seed=2)
    build_ann_index(emb, tmp_path / "a")
    build_ann_index(emb, tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


BAD_INPUT = [  # (name, call, error)
    ("float64 matrix", lambda: DenseIndex(np.zeros((3, DIMS))), SnapshotError),
    ("vector, not matrix", lambda: DenseIndex(np.zeros(DIMS, np.float16)), SnapshotError),
    ("query of other dimensions", lambda: DenseIndex(clustered(10)).top(np.ones(7, np.float32), 3), ValueError),
    ("empty ANN build", lambda: build_ann_index(np.zeros((0, DIMS), np.float16), "/nonexistent"), ValueError),
]


@pytest.mark.parametrize("name,call,error", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_a_clear_error(name, call, error):
    with pytest.raises(error):
        call()


def test_empty_snapshot():
    d = DenseIndex(np.zeros((0, DIMS), np.float16))
    rows, cos = d.top(np.ones(DIMS, np.float32), 10)
    assert rows.size == 0 and cos.size == 0 and d.best(np.ones(DIMS, np.float32)) == 0.0


def test_usearch_then_onnxruntime_does_not_crash():
    """usearch first (as a process that searches before it embeds would) must not break onnxruntime's import."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        "import numpy as np; from trustindex.query.dense import DenseIndex; "
        "DenseIndex(np.eye(4, dtype=np.float16), None).top(np.ones(4, np.float32), 1); "
        "import sys; assert 'usearch.index' in sys.modules; import onnxruntime; print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-500:]


def test_memory_mapped_rows_are_read_by_pread_with_the_same_cosines(tmp_path):
    """A memory map's scattered reads fault whole read-around windows into the process; rows of a mapped file are
    read with pread instead (no copy kept), and give the cosines the in-memory rows give, bit for bit."""
    import trustindex.query.dense as dense_module

    rng = np.random.default_rng(3)
    emb = rng.normal(size=(3000, 32)).astype(np.float16)
    np.save(tmp_path / "e.npy", emb)
    mapped = np.load(tmp_path / "e.npy", mmap_mode="r")
    on_disk, in_memory = DenseIndex(mapped), DenseIndex(emb.copy())
    assert on_disk._file is not None and in_memory._file is None
    q = rng.normal(size=32).astype(np.float32)
    rows = rng.choice(3000, 700, replace=False)
    assert on_disk.cosines(q, rows).tobytes() == in_memory.cosines(q, rows).tobytes()
    # more rows than PREAD_MAX_ROWS read through the map, with the same values
    assert dense_module.PREAD_MAX_ROWS < 9000
    many = np.resize(np.arange(3000), 9000)
    assert on_disk.cosines(q, many).tobytes() == in_memory.cosines(q, many).tobytes()
    assert on_disk.top(q, 20)[0].tolist() == in_memory.top(q, 20)[0].tolist()


def test_a_warm_index_keeps_the_dense_path_measured_cheaper(ann_dir):
    """Issue 41 item 3: with an HNSW graph, warm() times it and exact search on the same probes and keeps the
    cheaper (exact on a tie); a policy reload's index takes the same choice without measuring again."""
    emb, directory = ann_dir
    d = DenseIndex(emb, directory, exact_below=1000)
    d.warm(min_rows=0)
    assert d.cost is not None and set(d.cost) == {"ann_ms", "exact_ms"}
    exact_won = d.cost["exact_ms"] <= d.cost["ann_ms"]
    assert d.mode == ("exact" if exact_won else "ann") and (d.ann is None) == exact_won
    assert d.reason and ("exact search measured cheaper" if exact_won else "HNSW measured cheaper") in d.reason
    q = unit(emb[7].astype(np.float32) + emb[2900].astype(np.float32))
    rows, cos = d.top(q, 10)
    if exact_won:  # exact search: the full scan's answer
        np.testing.assert_array_equal(rows, full_scan(emb, q, 10)[0])
    reloaded = DenseIndex(emb, directory, exact_below=1000)
    reloaded.share_warmth(d)
    assert (reloaded.mode, reloaded.cost) == (d.mode, d.cost)
