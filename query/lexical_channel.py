"""The user's wording's lexical channel (its signals and its rankings), worked out beside its embedding.

Neither depends on the other: the lexical channel reads the query's tokens, the dense channel its vector.  The
embedding runs in onnxruntime with the GIL released, so ``beside`` hands the lexical channel to a worker thread
while the calling thread embeds, and the search reads it when its gather stage needs it (query/search.py).  The
values are the ones computed in line: the same functions on the same inputs, in another thread.

Why: a warm search at 100k passages spent ~0.5 ms of thread CPU in this channel (BM25 over the query's terms, a
partition of every passage's score, the per-page cap) after its ~1.4 ms embedding, on a machine whose second core
was idle meanwhile (issue 41: the search around the embedding should cost at most as much again).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from trustindex.query.fusion import CAP_REACH, per_page_capped, top_ranking
from trustindex.query.lexical_signals import LexicalSignals, Words, lexical_signals
from trustindex.schemas.policy import Policy

if TYPE_CHECKING:
    from trustindex.query.state import SearchState

# Lexical channels worked out at once, beside as many embeddings (a server's concurrent searches each submit one;
# more wait for a thread, as they would for a core).
BESIDE_THREADS = 4
# Below this many passages the channel is worked out in line: it costs less than handing it to a thread.  Measured on
# the 2-core AMD EPYC at load ~3.2 (bench/bench_query.py's snapshots, 450 searches a side, alternating by query):
# at 10k passages the worker thread cost 0.09 ms a search more (p50 4.23 against 4.13 ms), at 100k it saved
# 0.49 ms (10.67 against 11.56 ms); the channel's cost grows with the passages, the hand-off's does not.
BESIDE_FROM_ROWS = 30_000


def reach(policy: Policy) -> int:
    """How deep each channel reads: with a per-page cap, ``CAP_REACH`` times the candidate depth, so the pages left
    after the cap still fill it (query/fusion.py)."""
    fz = policy.fusion
    return fz.candidate_depth * CAP_REACH if fz.max_passages_per_page else fz.candidate_depth


def best(scores: np.ndarray, policy: Policy) -> np.ndarray:
    """A channel's first ``reach`` passages by a positive score, best first."""
    return top_ranking(scores, reach(policy), positive_only=True)


def pooled(ranking: np.ndarray, data, policy: Policy) -> np.ndarray:
    """A channel's share of the candidate pool: its first ``candidate_depth`` passages of capped pages."""
    fz = policy.fusion
    return per_page_capped(ranking, data.chunk_doc_row, fz.max_passages_per_page, fz.candidate_depth)


@dataclass(frozen=True, slots=True)
class LexicalChannel:
    """One wording's lexical signals, its ranking and the identifier channel's, each as the pool takes it."""

    signals: LexicalSignals
    ranking: np.ndarray | None  # the lexical channel's first ``reach`` passages (None: no known term)
    pooled: np.ndarray | None  # ``ranking``'s share of the pool
    identifier_pooled: np.ndarray | None  # the identifier channel's share (None: no known identifier)


def lexical_channel(st: SearchState, words: Words) -> LexicalChannel:
    d, policy = st.data, st.policy
    signals = lexical_signals(d, words, policy)
    ranking = best(signals.scores, policy) if signals.nterms > 0 else None
    ident = signals.identifier
    return LexicalChannel(
        signals,
        ranking,
        pooled(ranking, d, policy) if ranking is not None else None,
        pooled(best(ident, policy), d, policy) if ident is not None else None,
    )


class Pending:
    """A lexical channel on its way: from a worker thread (``beside``), or worked out when it is read."""

    __slots__ = ("_future", "_st", "_words")

    def __init__(self, st: SearchState, words: Words, future: Future[LexicalChannel] | None = None):
        self._st, self._words, self._future = st, words, future

    def result(self) -> LexicalChannel:
        """The channel (or what working it out raised).  If no worker has started it yet (no core was free on a busy
        machine), this thread works it out itself rather than wait for one."""
        if self._future is None or self._future.cancel():
            return lexical_channel(self._st, self._words)
        return self._future.result()


_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def beside(st: SearchState, words: Words) -> Pending:
    """``lexical_channel(st, words)``, started in a worker thread from ``BESIDE_FROM_ROWS`` passages on (else worked
    out when it is read), to be read by ``Pending.result()``."""
    global _executor
    if st.data.n < BESIDE_FROM_ROWS:
        return Pending(st, words)
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(BESIDE_THREADS, thread_name_prefix="lexical-beside")
        executor = _executor
    return Pending(st, words, executor.submit(lexical_channel, st, words))
