"""An int8 prefilter for exact dense search: the same proven result as a float32 scan, ~5× less scan time.

A warm server at 100k passages spent most of a query in usearch's float16 brute-force
scan (~7 ms on 2 cores).  This prefilter keeps the passage matrix as int8 with one
scale per row (``x_r ≈ s_r·Q_r``) inside an onnxruntime ``MatMulInteger`` whose weights
are packed once (MLAS u8×s8 kernels, ~1.3 ms at 100k × 384 on 2 cores), and proves its
candidates exact the way ``query.dense`` proves usearch's:

    x_r·q = s_r s_q (Q_r·q8) + s_r Q_r·e_q + e_r·q,   e_q = q − s_q q8,  e_r = x_r − s_r Q_r
    |x_r·q − est_r| ≤ ‖s_r Q_r‖·‖e_q‖ + ‖e_r‖·‖q‖ =: b_r

(Cauchy–Schwarz; ‖e_r‖ and ‖s_r Q_r‖ are computed per row when the prefilter is built).
Rows are ranked by the upper bound ``est_r + b_r``; a row left out has a float32 cosine
of at most the last fetched bound plus the float32 rounding of ``query.dense.cosines``,
so when that is below the depth-th re-scored cosine the fetched rows hold the exact top
``depth``; otherwise the caller fetches more (at worst every row).  Ties and order are
decided by the float32 re-scoring, never by the estimate, so results are identical to a
float32 scan with or without the prefilter (tests/query/test_dense_int8.py).

Building it costs ~1 s and ~2 bytes a value at 100k rows, so it is made on request
(``Index.warm()``: the MCP server, ``--batch``, the benchmarks' warm runs), never by a
one-shot ``trustindex query``.  The graph is written with the ``onnx`` package; a serving
install without it (query/ needs only numpy, pyarrow, tokenizers and onnxruntime) skips
the prefilter and searches with usearch alone — same results, slower.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Below this usearch's float16 scan is already cheap (~0.2 ms).  From it the prefilter pays: at 10k rows of 384
# dimensions usearch's scan took 1.1-1.3 ms a search against 0.1 ms for the bounds (~0.5 ms the whole proven top 200
# with its re-scoring), built in ~0.1 s (AMD EPYC, 2 cores at load ~5, issue 41).
MIN_ROWS = 4096
_BLOCK = 2048  # rows a step: float64 temporaries of ~6 MB (16,384 rows raised a 10k warm-up's peak by ~150 MB)
_RELEASE_EVERY_BLOCKS = 64  # ``release`` every 64 blocks (~100 MB of float16 rows)
_EXTERNAL_NAME = "int8_prefilter_rows"  # the external initializer's name in the graph (no file is read)
_SLACK = 1e-6  # absolute margin added to float32 bounds (see Int8Prefilter.__init__)
# The query side is 7-bit. MLAS's u8×s8 kernel on AVX2 without VNNI (vpmaddubsw) adds pairs of products in int16
# with saturation: 255·127·2 overflows and the "exact" integer dot product is silently wrong (seen on an AVX2-only
# AMD EPYC: bounds below the true cosine). With the unsigned query at most 127, a pair is at most 2·127·127 = 32258,
# inside int16 on every kernel; the lost query precision widens the bound (‖e_q‖), never breaks it.
_QUERY_LEVELS = 63
_QUERY_ZERO = 64  # unsigned query = q7 + 64 ∈ [1, 127]
# ``leading_rows``: the bound at this rank of a strided sample sets the threshold; the count of rows above it then
# varies by about 1/√64 of the wanted ``fetch``.
_SAMPLE_RANK = 64


def _to_int8(x: np.ndarray, levels: int = 127) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric integer values in [-levels, levels] (as float64) and the scale of each vector along the last axis:
    x ≈ scale·q."""
    scale = np.abs(x).max(axis=-1) / float(levels)
    scale = np.where(scale == 0, 1.0, scale)
    return np.clip(np.rint(x / scale[..., None]), -levels, levels), scale


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnx") is not None


class Int8Prefilter:
    def __init__(self, emb: np.ndarray, threads: int = 1, release: Callable[[], None] | None = None):
        """``release``: called after each block of ``emb`` is read (a memory map's pages dropped as it goes)."""
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        from trustindex.query.onnx_encoder import session_options

        n, d = emb.shape
        # The matrix MatMulInteger multiplies by ([dims, n]), written block by block: no second transposed copy.
        rows_t = np.empty((d, n), dtype=np.int8)
        scale = np.empty(n, dtype=np.float64)
        err = np.empty(n, dtype=np.float64)
        qnorm = np.empty(n, dtype=np.float64)
        for s in range(0, n, _BLOCK):  # bounded temporaries: a block of float64 at a time
            x = np.asarray(emb[s : s + _BLOCK], dtype=np.float64)
            q, sc = _to_int8(x)
            rows_t[:, s : s + _BLOCK] = q.T
            scale[s : s + _BLOCK] = sc
            approx = q * sc[:, None]
            err[s : s + _BLOCK] = np.linalg.norm(x - approx, axis=1)
            qnorm[s : s + _BLOCK] = np.linalg.norm(approx, axis=1)
            if release is not None and (s // _BLOCK) % _RELEASE_EVERY_BLOCKS == _RELEASE_EVERY_BLOCKS - 1:
                release()
        if release is not None:
            release()
        self.n, self.dims = n, d
        # float32 copies for the per-query arithmetic (half the memory traffic of float64), each rounded up by a
        # margin far above float32's rounding (values ≤ ~2, relative 6e-8), so the bound stays a bound.
        self.scale = scale.astype(np.float32)
        self.scale_delta = float(np.abs(scale - self.scale).max(initial=0.0))  # the float32 scales' rounding
        self.err = (err + _SLACK).astype(np.float32)
        self.qnorm = (qnorm + _SLACK).astype(np.float32)
        # The matrix is handed to onnxruntime as an external initializer: the graph declares it without its bytes,
        # and the session copies it once from our array, which may then be freed (onnxruntime's C API,
        # AddExternalInitializers: "the user provided buffers can then be deallocated").  Serialising it into the model
        # instead held four copies at once: ours, the TensorProto's, the serialised bytes and the session's
        # (a session over a 1M-row matrix alone peaked at 2.7 GB that way, 1.2 GB this way; the whole warm 1M query
        # process went from 3.3 to 1.8 GB, bench/bench_query.py --million).
        rows = TensorProto(name="rows", data_type=TensorProto.INT8, dims=[d, n], data_location=TensorProto.EXTERNAL)
        for key, value in (("location", _EXTERNAL_NAME), ("offset", "0"), ("length", str(d * n))):
            rows.external_data.add(key=key, value=value)
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["q", "rows", "zero"], ["dot"])],
            "int8_prefilter",
            [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, d])],
            [helper.make_tensor_value_info("dot", TensorProto.INT32, [1, n])],
            initializer=[rows, numpy_helper.from_array(np.array(_QUERY_ZERO, dtype=np.uint8), "zero")],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8  # onnxruntime 1.31 reads IR ≤ 13; onnx 1.23 writes 14 by default
        options = session_options(threads)
        options.add_external_initializers(["rows"], [ort.OrtValue.ortvalue_from_numpy(rows_t)])
        self._session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        del model, graph, options, rows_t

    def upper_bounds(self, q: np.ndarray) -> np.ndarray:
        """For every row, a float32 upper bound of its exact dot product with ``q`` (see the module docstring)."""
        q = np.asarray(q, dtype=np.float64)
        q8, qs_arr = _to_int8(q, _QUERY_LEVELS)
        qs = float(qs_arr)
        e_q = float(np.linalg.norm(q - q8 * qs))
        qn = float(np.linalg.norm(q))
        dot = self._session.run(["dot"], {"q": (q8 + _QUERY_ZERO).astype(np.uint8).reshape(1, -1)})[0][0]
        ub = dot.astype(np.float32)  # exact: |dot| ≤ 127·127·dims < 2²⁴
        ub *= np.float32(qs) * self.scale
        ub += self.qnorm * np.float32(e_q)
        ub += self.err * np.float32(qn)
        # float32 rounding of the steps above (each ≤ ~1e-7 on values ≤ ~2), and the scales' own rounding
        # (|dot| ≤ 127²·dims times qs times it)
        ub += np.float32(4 * _SLACK + 127 * 127 * self.dims * qs * self.scale_delta)
        return ub


def leading_rows(ub: np.ndarray, fetch: int, depth: int) -> np.ndarray:
    """Rows (ascending) whose bound reaches about the ``fetch``-th highest: the threshold is read from a strided
    sample of the bounds (``_SAMPLE_RANK``-th highest of n / stride values) and the rows found in one comparison
    pass, where partitioning all n bounds took ~0.8 ms at 100k rows.  At least ``depth`` rows, else the exact
    ``fetch`` highest.  Which rows come here changes only the work, never the result: the caller's proof brings in
    every row whose bound reaches its bar."""
    stride = fetch // _SAMPLE_RANK
    if stride >= 2:
        sample = ub[::stride]
        kth = sample.size - _SAMPLE_RANK
        if kth >= 0:
            bar = np.partition(sample, kth)[kth]
            rows = np.flatnonzero(ub >= bar)
            if bar > -np.inf and depth <= rows.size <= 4 * fetch:  # -inf: rows ruled out (top_within) would pass
                return rows
    return np.sort(np.argpartition(-ub, fetch)[:fetch])
