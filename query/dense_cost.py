"""Which dense path a warm process searches with, by its measured cost on this machine (issue 41 item 3).

From the policy's ``dense.exact_below`` rows a snapshot carries an HNSW graph (query/dense.py), which a one-shot
query searches.  Whether it is cheaper than exact search with the int8 prefilter depends on the machine and the
size, not on the size alone: at 100k rows the HNSW search (efSearch 2048) took 11.6 ms p50 against exact 5.55 ms on
a 2-core Xeon with AMX, 34.6 against 12.1 ms on a 2-core AMD EPYC, and at 1M rows the two were within 3 % of each
other (docs/benchmarks.md).  So a long-lived process (``Index.warm``: a server, ``--batch``) times both on the same
probe queries and keeps the cheaper; exact search wins a tie, being proven equal to a full scan while the graph's
recall@10 is ~0.99 at 100k and 0.92 at 1M.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

# "measured" (the default) or "size": the graph whenever the snapshot has one, as before issue 41 (bench_query sets it
# to time the HNSW search itself).
PATH_ENV = "TRUSTINDEX_DENSE_PATH"
MEASURED, BY_SIZE = "measured", "size"
PROBES = 12  # timed searches per path (after one untimed): a few milliseconds each
DEPTH = 100  # the depth a search asks the dense channel for (query.search's candidate pool is of this order)


def probe_queries(emb: np.ndarray, n: int = PROBES) -> list[np.ndarray]:
    """Queries shaped like real ones without being a stored passage (a passage's own vector finds itself at cosine
    1, which makes the exact path's bound unrealistically easy): the normalised sum of two rows far apart."""
    rows = np.linspace(0, len(emb) - 1, 2 * n).astype(np.int64)
    out = []
    for a, b in zip(rows[:n], rows[n:], strict=True):
        v = np.asarray(emb[a], np.float32) + np.asarray(emb[b], np.float32)
        out.append((v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32))
    return out


def median_ms(search: Callable[[np.ndarray, int], object], probes: list[np.ndarray], depth: int = DEPTH) -> float:
    """The median milliseconds of ``search(q, depth)`` over ``probes``, after one untimed call."""
    search(probes[0], depth)
    times = []
    for q in probes:
        t0 = time.perf_counter()
        search(q, depth)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1000


def measured() -> bool:
    """Whether a warm process chooses its dense path by measured cost (``$TRUSTINDEX_DENSE_PATH``)."""
    raw = os.environ.get(PATH_ENV, MEASURED).strip().lower()
    if raw not in (MEASURED, BY_SIZE):
        raise ValueError(f"{PATH_ENV}={raw!r}: expected {MEASURED} or {BY_SIZE}")
    return raw == MEASURED
