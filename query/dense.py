"""The dense channel: the query's cosine with every passage, exact below a size, HNSW above it.

Storage.  ``embeddings.npy`` holds the passage vectors as float16 [n, dims] (row i =
chunks.parquet row i), L2-normalised before rounding, memory-mapped at load: half the
bytes of float32, and a passage's cosine moves by at most ~5e-4 (float16 keeps 11
significant bits).  Every cosine this module reports, ranks by or hands to the match
tier is the float32 dot product of the query with the stored float16 row (``cosines``),
computed row by row so a row's value never depends on which other rows were scored
with it.  Ties break by the lower row, as ``query.fusion.top_ranking`` does.

Exact mode (fewer rows than the policy's ``dense.exact_below``, or a snapshot without
an ANN index).  Candidates come from usearch's brute-force SIMD kernel
(``usearch.index.search(..., exact=True)``), which rounds the query to float16, and are
re-scored in float32.  The result is *proven* equal to a full float32 scan: a row the
kernel left out scored at most ``u_min`` (its lowest returned score), so its float32
cosine is at most ``u_min + eps``, where eps bounds the kernel's error: rounding the
query costs |Δ| ≤ 2⁻¹¹·Σ|x_i q_i| ≤ 2⁻¹¹·‖x‖·‖q‖, float32 accumulation over d terms
≤ d·2⁻²⁴·‖x‖·‖q‖ per side (Higham, "Accuracy and Stability of Numerical Algorithms",
2002, §3.1).  When that bound cannot rule the left-out rows out (many near-ties at the
cut, e.g. copies of one passage), it fetches four times more, and at worst scans all rows.

ANN mode (at least ``exact_below`` rows and the snapshot holds ``dense.usearch``).
HNSW (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
using Hierarchical Navigable Small World graphs", IEEE TPAMI 2018) by usearch: inner
product over float16, keys = row numbers, built at build time single-threaded so the
same inputs write the same bytes (a multi-threaded build inserts in a racy order and the
snapshot id, derived from the bytes, would change), opened with ``view`` (memory-mapped,
nothing read up front).  ``top`` over-fetches (twice the depth, searched with at least
``SEARCH_EXPANSION`` candidates) and re-scores in float32.  ``best`` is then the top-1
of the ANN search, not a proof of the library's maximum (recall@10 against exact search
is measured by bench/bench_query.py; docs/benchmarks.md).  A warm process (``warm``) times the HNSW search
and exact search on the same probe queries and keeps the cheaper one (query/dense_cost.py): which is faster
depends on the machine as much as on the size.

API used by ``query.index``: ``top(q, depth) -> (rows, cosines)`` best first;
``cosines(q, rows)`` exact for the given rows; ``best(q)`` the best raw cosine.
"""

from __future__ import annotations

import mmap
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trustindex.query.dense_int8 import leading_rows
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.snapshot import DENSE_INDEX

if TYPE_CHECKING:  # both are imported when first needed (see _usearch and DenseIndex.warm)
    from usearch.index import Index as UsearchIndex

    from trustindex.query.dense_int8 import Int8Prefilter

STORAGE_DTYPE = np.float16
# HNSW graph: M = 16 links a node (usearch's default), efConstruction = 128.
CONNECTIVITY, EXPANSION_ADD = 16, 128
# efSearch: candidates kept while searching.  Measured at 100k rows (bench/synthetic.py: Gaussian vectors with
# the real embeddings' covariance, a pessimistic stand-in for real ones) with 230 real queries, top 10 of a
# depth-200 search re-scored: efSearch 512 / 1024 / 2048 / 4096 gave recall@10 0.942 / 0.984 / 0.995 / 0.999 at
# 17 / 30 / 52 / 78 ms a search, exact search 41 ms (2 loaded cores).  2048 is the least meeting the goal
# (≥ 0.99).  At 1M rows the same efSearch reached only 0.92 (efConstruction 128), while exact search with the
# int8 prefilter took p99 89 ms against HNSW's 86 ms (bench/bench_query.py --million): ANN starts at
# dense.exact_below (1.5M), past the sizes measured.
SEARCH_EXPANSION = 2048
BUILD_THREADS = 1  # deterministic bytes; see the module docstring
_BLOCK = 8192  # rows per block of a full float32 scan (bounded temporary memory)
# A warm index keeps its rows as float32 up to this size (100k passages of 384 dimensions): numpy converts
# float16 at ~3 ns a value, so re-scoring a search's ~500 candidate rows cost ~0.5 ms of converting alone.
FLOAT32_COPY_MAX_BYTES = 160 << 20
_PARALLEL_FROM = 16_384  # rows from which a brute-force scan uses every core (below, thread start-up costs more)
# Up to this many rows, a memory-mapped file's rows are read with pread (query/passage_text.py reads text the same
# way): a page fault maps the row's page and the kernel's read-around into the process, ~128 KB a scattered row, so
# re-scoring a few hundred rows a search brought back most of a 768 MB file at 1M passages within 90 searches.
PREAD_MAX_ROWS = 8192
# The int8 prefilter's threads.  Its matrix is streamed from memory once a search (384 MB at 1M passages): two
# threads took a 1M-row pass from ~40 to ~27 ms here.  One was the default while onnxruntime's idle threads spun
# (two spinning pools on 2 cores doubled both runs); query/onnx_encoder.py session_options turns spinning off.
# Below PREFILTER_PARALLEL_FROM rows one thread: a sleeping worker must be woken every search, and on a busy machine
# it waits for a core; at 10k rows the bounds took 0.24 ms on one thread against 1.2 ms on two inside a search loop
# (AMD EPYC, 2 cores at load ~5; issue 41).  At 100k the second thread pays on a quiet machine (bench_query's warm
# p50 6.8-7.0 ms on two against 7.6-7.8 on one, load ~1.5) though not on a busy one (a profiled search 16.4 against
# 11.7 ms at load ~5): two from 50k rows, as before issue 41 at 100k.
PREFILTER_THREADS = min(2, os.cpu_count() or 1)
PREFILTER_PARALLEL_FROM = 50_000


def drop_mapped_pages(embeddings: np.ndarray) -> None:
    """Drop a memory-mapped matrix's pages from this process's resident memory (they stay in the page cache).  A
    map's pages a process has touched count in its RSS for as long as the map lives: a warm-up that reads every row
    of a 768 MB file (1M passages) would otherwise hold all of it, and a later read faults a page back in."""
    mapped = getattr(embeddings, "_mmap", None)  # np.load(mmap_mode="r") gives an np.memmap
    if mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED)


def _usearch():
    """usearch, imported when first needed (a small snapshot's first query pays it once).

    onnxruntime must be loaded first when it is installed: usearch 2.26's extension carries a
    static libstdc++ whose process-wide (STB_GNU_UNIQUE) locale symbols make a later
    ``import onnxruntime`` crash with SIGSEGV in ``std::codecvt``; the other order is safe
    (checked by tests/query/test_dense.py in a fresh process).
    """
    import importlib.util

    if "usearch.index" not in sys.modules and importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401
    from usearch import index as ui

    return ui


def build_ann_index(
    matrix: np.ndarray, path: Path, threads: int = BUILD_THREADS, expansion_add: int = EXPANSION_ADD
) -> dict:
    """Write the HNSW index of ``matrix`` (float16 rows; key = row number) to ``path``; returns its parameters.

    ``threads`` other than 1 builds faster but not byte-identically, and ``expansion_add`` other than
    ``EXPANSION_ADD`` trades recall for build time (both for benchmarks only).
    """
    ui = _usearch()
    matrix = np.ascontiguousarray(matrix, dtype=STORAGE_DTYPE)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(f"ANN index needs a non-empty [n, dims] matrix, got shape {matrix.shape}")
    ix = ui.Index(
        ndim=matrix.shape[1],
        metric=ui.MetricKind.IP,
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=expansion_add,
    )
    ix.add(np.arange(matrix.shape[0], dtype=np.uint64), matrix, threads=threads)
    ix.save(str(path))
    return {"rows": int(matrix.shape[0]), "connectivity": CONNECTIVITY, "expansion_add": expansion_add}


class _MappedRows:
    """The rows of a memory-mapped .npy file, read with pread (the file opened per read: nothing to close)."""

    def __init__(self, path: str, offset: int, dtype: np.dtype, dims: int):
        self.path, self.offset, self.dtype, self.dims = path, offset, dtype, dims
        self.row_bytes = dtype.itemsize * dims

    @classmethod
    def of(cls, embeddings: np.ndarray) -> _MappedRows | None:
        if not isinstance(embeddings, np.memmap) or embeddings.filename is None or not embeddings.flags.c_contiguous:
            return None
        return cls(embeddings.filename, int(embeddings.offset), embeddings.dtype, int(embeddings.shape[1]))

    def read(self, rows: np.ndarray) -> np.ndarray:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            rb, off = self.row_bytes, self.offset
            data = b"".join([os.pread(fd, rb, off + r * rb) for r in rows.tolist()])
        finally:
            os.close(fd)
        if len(data) != rows.size * rb:
            raise SnapshotError(f"{self.path}: shorter than its rows ({len(data)} of {rows.size * rb} bytes read)")
        return np.frombuffer(data, dtype=self.dtype).reshape(rows.size, self.dims)


def _order(rows: np.ndarray, scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Best first, ties to the lower row; keep ``depth``."""
    o = np.lexsort((rows, -scores))[:depth]
    return rows[o], scores[o]


def _same_buffer(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and a.dtype == b.dtype and a.ctypes.data == b.ctypes.data)


class DenseIndex:
    """Dense retrieval over one snapshot (see the module docstring for the two modes)."""

    def __init__(self, embeddings: np.ndarray, snapshot_dir: Path | None = None, exact_below: int = 1_500_000):
        if embeddings.ndim != 2:
            raise SnapshotError(f"embeddings must be a [n, dims] matrix, got shape {embeddings.shape}")
        if embeddings.dtype not in (np.float16, np.float32):
            raise SnapshotError(f"embeddings are {embeddings.dtype}; expected float16 (or float32 from older builds)")
        # A plain ndarray view of a memory map: np.memmap's subclass hooks cost microseconds on every gather.
        self.emb = np.asarray(embeddings) if isinstance(embeddings, np.memmap) else embeddings
        self._source = embeddings  # the memory map itself, whose pages warm() drops (drop_mapped_pages)
        self._file = _MappedRows.of(embeddings)
        self.n, self.dims = int(embeddings.shape[0]), int(embeddings.shape[1])
        self._scan_threads = 0 if self.n >= _PARALLEL_FROM else 1  # usearch: 0 = all cores
        self.ann: UsearchIndex | None = None
        self._prefilter: Int8Prefilter | None = None  # built by warm()
        self._emb32: np.ndarray | None = None  # the rows as float32, kept by warm() (exact: float16 ⊂ float32)
        self.reason: str | None = None
        self.cost: dict[str, float] | None = None  # warm(): each path's measured ms a search (query/dense_cost.py)
        path = Path(snapshot_dir) / DENSE_INDEX if snapshot_dir is not None else None
        if self.n < exact_below:
            self.mode = "exact"
        elif path is None or not path.is_file():
            self.mode, self.reason = (
                "exact",
                f"{self.n} rows reach dense.exact_below ({exact_below}) but the "
                f"snapshot has no {DENSE_INDEX}; searching exactly",
            )
        else:
            self.ann, self.mode = self._open_ann(path), "ann"

    def _open_ann(self, path: Path):
        ui = _usearch()
        try:
            meta = ui.Index.metadata(str(path))
        except (ValueError, RuntimeError, OSError) as e:
            raise SnapshotError(f"{path}: not a readable usearch index ({e})") from None
        want = {
            "count_present": self.n,
            "dimensions": self.dims,
            "kind_metric": ui.MetricKind.IP,
            "kind_scalar": ui.ScalarKind.F16,
        }
        for key, value in want.items():
            if meta is None or meta.get(key) != value:
                got = None if meta is None else meta.get(key)
                raise SnapshotError(f"{path}: ANN index has {key} = {got}, the embeddings need {value}")
        try:
            ix = ui.Index.restore(str(path), view=True)
        except (ValueError, RuntimeError, OSError) as e:
            raise SnapshotError(f"{path}: cannot open the ANN index ({e})") from None
        if ix is None or ix.size != self.n:
            raise SnapshotError(f"{path}: ANN index holds {getattr(ix, 'size', 0)} rows, the embeddings {self.n}")
        ix.expansion_search = SEARCH_EXPANSION
        return ix

    # -- scores ---------------------------------------------------------------------------------
    def _query(self, q: np.ndarray) -> np.ndarray:
        q = np.ascontiguousarray(q, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dims:
            raise ValueError(f"query vector has {q.shape[0]} dimensions, the embeddings {self.dims}")
        return q

    def cosines(self, q: np.ndarray, rows) -> np.ndarray:
        """float32 cosine of the query with each given row (in the given order)."""
        q = self._query(q)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if rows.size == 0:
            return np.zeros(0, np.float32)
        if rows.min() < 0 or rows.max() >= self.n:
            raise IndexError(f"row out of range 0..{self.n - 1}")
        out = np.empty(rows.size, np.float32)
        emb32 = self._emb32
        for s in range(0, rows.size, _BLOCK):
            part = rows[s : s + _BLOCK]
            if emb32 is not None:
                block = emb32[part]
            elif self._file is not None and part.size <= PREAD_MAX_ROWS:
                block = self._file.read(part).astype(np.float32)
            else:
                block = np.asarray(self.emb[part], dtype=np.float32)
            # einsum reduces each row on its own (no BLAS blocking), so a row's value is the same in any batch.
            out[s : s + _BLOCK] = np.einsum("ij,j->i", block, q)
        return out

    def _scan(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(self.n, dtype=np.int64)
        return _order(rows, self.cosines(q, rows), depth)

    # -- search ---------------------------------------------------------------------------------
    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``depth`` rows with the highest cosine (best first; int64 rows, float32 cosines)."""
        q = self._query(q)
        depth = min(int(depth), self.n)
        if depth <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        fetch = min(self.n, 2 * depth)
        if self.ann is not None:  # mode "ann"
            m = self.ann.search(q, fetch)
            rows = np.asarray(m.keys, dtype=np.int64)
            return _order(rows, self.cosines(q, rows), depth)
        return self._exact_top(q, depth, fetch)

    def top_within(
        self, q: np.ndarray, depth: int, allowed: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``top`` among the rows ``allowed`` (a bool per row; ``rows``: its true rows, ascending) alone: a scoped
        search's dense channel (query/scope.py).  Rows outside are never candidates, so the best cosine, the ranks
        and the match tier are those of the allowed rows.  Exact in every mode: the int8 bounds of the rows outside
        are set below any cosine, else the allowed rows are scanned (ANN mode too: the graph cannot skip rows)."""
        q = self._query(q)
        depth = min(int(depth), int(rows.size))
        if depth <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        fetch = min(self.n, 2 * depth)
        prefilter = self._prefilter
        # the prefilter's first candidates are ``fetch`` rows by their bounds: all of them allowed only when more are
        if prefilter is not None and fetch < rows.size:
            return self._prefiltered_top(prefilter, q, float(np.linalg.norm(q)), depth, fetch, allowed)
        return _order(rows, self.cosines(q, rows), depth)

    def warm(self, threads: int | None = None, min_rows: int | None = None) -> bool:
        """For a long-lived process: build the int8 prefilter (query/dense_int8.py) and keep the rows as float32
        (up to FLOAT32_COPY_MAX_BYTES); with an HNSW graph, keep whichever of it and exact search is cheaper on
        this machine (``_choose_by_cost``).  True if a prefilter is in use."""
        from trustindex.query.dense_cost import measured
        from trustindex.query.dense_int8 import MIN_ROWS, Int8Prefilter, available

        choosing = self.ann is not None and self.cost is None and measured()
        if (
            self._prefilter is None
            and (self.mode == "exact" or choosing)
            and self.n >= (MIN_ROWS if min_rows is None else min_rows)
            and available()
        ):
            source = self._source  # drop_mapped_pages leaves an array that is not a memory map alone
            threads = threads or (PREFILTER_THREADS if self.n >= PREFILTER_PARALLEL_FROM else 1)
            self._prefilter = Int8Prefilter(self.emb, threads, release=lambda: drop_mapped_pages(source))
        if self._emb32 is None and self.emb.dtype != np.float32 and self.n * self.dims * 4 <= FLOAT32_COPY_MAX_BYTES:
            emb32 = np.asarray(self.emb, dtype=np.float32)
            emb32.flags.writeable = False
            self._emb32 = emb32
        if choosing:
            self._choose_by_cost()
        return self._prefilter is not None

    def _choose_by_cost(self) -> None:
        """Time the HNSW search and exact search on the same probe queries; keep the cheaper (exact on a tie)."""
        from trustindex.query.dense_cost import median_ms, probe_queries

        probes = probe_queries(self.emb)
        ann_ms = median_ms(self.top, probes)
        ann, self.ann = self.ann, None  # top() searches exactly without it
        exact_ms = median_ms(self.top, probes)
        self.cost = {"ann_ms": round(ann_ms, 3), "exact_ms": round(exact_ms, 3)}
        if exact_ms <= ann_ms:
            self.mode = "exact"
            self.reason = f"exact search measured cheaper here ({exact_ms:.1f} ms a search, HNSW {ann_ms:.1f} ms)"
        else:
            self.ann, self._prefilter = ann, None  # the prefilter was built only to measure
            self.reason = f"HNSW measured cheaper here ({ann_ms:.1f} ms a search, exact {exact_ms:.1f} ms)"

    def share_warmth(self, other: DenseIndex) -> None:
        """Reuse ``other``'s prefilter and float32 rows (same embeddings; a policy reload must not rebuild them)."""
        if not _same_buffer(other.emb, self.emb):
            return
        self._emb32 = other._emb32
        if other.cost is not None and self.ann is not None:  # the same graph: the same measured choice
            self.cost, self.reason = other.cost, other.reason
            if other.mode == "exact":
                self.ann, self.mode = None, "exact"
        if other._prefilter is not None and self.mode == "exact":
            self._prefilter = other._prefilter

    def _exact_top(self, q: np.ndarray, depth: int, fetch: int) -> tuple[np.ndarray, np.ndarray]:
        qn = float(np.linalg.norm(q))
        prefilter = self._prefilter
        if prefilter is not None:
            return self._prefiltered_top(prefilter, q, qn, depth, fetch)
        ui = _usearch()
        eps = (2.0**-11 + 2 * self.dims * 2.0**-24) * qn * 1.002 + 1e-7  # row norms ≤ 1 + 2⁻¹¹
        while fetch < self.n:
            m = ui.search(self.emb, q, fetch, ui.MetricKind.IP, exact=True, threads=self._scan_threads)
            rows = np.asarray(m.keys, dtype=np.int64)
            kernel = 1.0 - np.asarray(m.distances, dtype=np.float64)
            scores = self.cosines(q, rows)
            if rows.size < fetch or np.abs(scores - kernel).max(initial=0.0) > eps:
                break  # the kernel did not behave as the bound assumes: scan instead of trusting it
            top_rows, top_scores = _order(rows, scores, depth)
            if kernel.min() + eps < float(top_scores[-1]):
                return top_rows, top_scores
            fetch *= 4
        return self._scan(q, depth)

    def _prefiltered_top(
        self, prefilter: Int8Prefilter, q: np.ndarray, qn: float, depth: int, fetch: int, allowed=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Candidates by the int8 upper bound; proven exact as in ``_exact_top`` (see query/dense_int8.py).
        ``allowed``: the rows that may be candidates (``top_within``); the others' bounds go below every cosine."""
        ub = prefilter.upper_bounds(q)
        if allowed is not None:
            ub = np.where(allowed, ub, np.float32(-np.inf))
        eps = self.dims * 2.0**-24 * qn * 1.002 + 1e-7  # float32 rounding of ``cosines`` (row norms ≤ 1 + 2⁻¹¹)
        # usearch's first fetch (twice the depth): at 10k and 100k rows ~360-610 bounds reach the exact top 200's bar,
        # so some searches re-score a few more rows below; fetching twice as many first re-scored ~800 rows every
        # search, 0.07-0.4 ms more a search than this (issue 41).
        if fetch >= self.n:
            return self._scan(q, depth)
        rows = leading_rows(ub, fetch, depth)
        scores = self.cosines(q, rows)
        top_rows, top_scores = _order(rows, scores, depth)
        # Every row whose bound reaches the depth-th re-scored cosine could still enter the top (ties go to the lower
        # row): one pass over the bounds finds them all, where fetching four times more and partitioning again took
        # two or three rounds at 1M rows (~4 ms each).  Re-scoring them can only raise the depth-th cosine, so the
        # rows left out stay out.
        bar = np.nextafter(np.float32(float(top_scores[-1]) - eps), np.float32(-np.inf))  # rounded down, not up
        if bar > ub[rows].min():  # a row left out has a bound at most that lowest one (``leading_rows``): none reaches
            return top_rows, top_scores
        reach = np.flatnonzero(ub >= bar)
        extra = np.setdiff1d(reach, rows, assume_unique=True)
        if not extra.size:
            return top_rows, top_scores
        rows = np.concatenate([rows, extra])
        return _order(rows, np.concatenate([scores, self.cosines(q, extra)]), depth)

    def best(self, q: np.ndarray) -> float:
        """The best raw cosine in the library (ANN mode: the top-1 of the ANN search)."""
        _rows, scores = self.top(q, 1)
        return float(scores[0]) if scores.size else 0.0
