"""Everything one search reads, as one object: ``SearchState``.

A search takes the state once (``state = index.state``) and reads the snapshot, the policy, the dense index,
the encoder and the trust prior only through it; a policy reload or a snapshot swap builds a new state and
replaces the old one with a single assignment.  A search already running finishes on the state it started
with, so a response never carries one policy's id with another's thresholds, and a reload never resets the
reranker under a running search.

The configuration is fixed at construction.  What a state derives from its snapshot under its policy (the trust
prior of a day, the reranking model, the shown parts of hits, its scoped views) is kept by its ``PolicyMemos``,
built empty with the state and dropped with it; what depends on the snapshot alone is kept by the snapshot's parts
(query/reader.py: the docs version names by its evidence, page vectors by its vectors ...), so a policy reload
keeps it.  The user's query vectors (``QueryVectors``, off unless a long-running server asks for it) belong to the
snapshot's encoder, so a policy reload keeps them too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from trustindex.query.dense import DenseIndex
from trustindex.query.query_encoder import QueryEncoder, open_encoder
from trustindex.query.reader import SnapshotData
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.policy import Policy

SHOWN_KEPT = 8192  # passages whose shown parts a state keeps (SearchState.shown): a few MiB


class Reranker(Protocol):
    """What the optional reranking stage needs of its model (sentence-transformers' CrossEncoder)."""

    def predict(self, inputs: Sequence[tuple[str, str]], /) -> Iterable[Any]: ...


class QueryVectors:
    """The user's query vector by its cleaned text, the ``size`` most recently used kept (0: none kept).

    The user's query is embedded on its own (a batch of one: query/index.py), so its vector depends on its text
    and the encoder alone, and a kept vector is the one a new encoding would give.  ``hits`` and ``misses``
    count the lookups (a server's /metrics reports them)."""

    def __init__(self, encoder: QueryEncoder, size: int = 0):
        self.encoder, self.size = encoder, size
        self.hits = self.misses = 0
        self._kept: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, text: str, scope: str = "") -> np.ndarray:
        """The (1, dimensions) vector of ``text``; read-only when it is kept.  ``scope``: the sources a scoped search
        may read (query/scope.py), so a kept vector (and how soon it answers) is shared only within one scope."""
        if self.size <= 0:
            return self.encoder.encode([text])
        key: Hashable = (scope, text) if scope else text
        with self._lock:
            vec = self._kept.get(key)
            if vec is not None:
                self._kept.move_to_end(key)
                self.hits += 1
                return vec
            self.misses += 1
        vec = np.asarray(self.encoder.encode([text]), dtype=np.float32)
        vec.flags.writeable = False
        with self._lock:
            self._kept[key] = vec
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return vec


class PolicyMemos:
    """What one state derives from its snapshot under its policy, each on first use under one lock: the trust prior
    of a day, the reranking model, the shown parts of hits and the state's scoped views (query/scope.py).  Built
    empty with the state, dropped with it (a policy reload or a snapshot swap builds a new state)."""

    __slots__ = ("lock", "prior", "reranker", "shown", "scoped_views")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.prior: TrustPrior | None = None
        self.reranker: Reranker | None = None
        self.shown: dict[Hashable, Any] = {}  # frozen values (query/response.py Shown)
        self.scoped_views: dict[frozenset[str], SearchState] = {}


class SearchState:
    """One snapshot with one policy: its data, dense index, encoder and what it derives under the policy (``memos``)."""

    __slots__ = ("data", "policy", "dense", "encoder", "query_vectors", "memos")

    def __init__(
        self,
        data: SnapshotData,
        policy: Policy,
        dense: DenseIndex,
        encoder: QueryEncoder,
        query_vectors: QueryVectors | None = None,
    ):
        self.data = data
        self.policy = policy
        self.dense = dense
        self.encoder = encoder
        self.query_vectors = query_vectors or QueryVectors(encoder)
        self.memos = PolicyMemos()

    @classmethod
    def open(cls, data: SnapshotData, policy: Policy, query_cache: int = 0) -> SearchState:
        """``query_cache``: how many query vectors to keep (``QueryVectors``)."""
        encoder = open_encoder(data.dir, data.manifest, data.checksums_verified)
        dense = DenseIndex(data.vectors.embeddings, data.dir, policy.dense.exact_below)
        return cls(data, policy, dense, encoder, QueryVectors(encoder, query_cache))

    def with_policy(self, policy: Policy) -> SearchState:
        """The same snapshot under another policy: a new dense index (its mode depends on the policy) that
        shares the old one's warm prefilter, the same encoder and query vectors, nothing else derived."""
        dense = DenseIndex(self.data.vectors.embeddings, self.data.dir, policy.dense.exact_below)
        dense.share_warmth(self.dense)
        return SearchState(self.data, policy, dense, self.encoder, self.query_vectors)

    @property
    def snapshot_id(self) -> str:
        return self.data.manifest.snapshot_id

    @property
    def scoped_views(self) -> dict[frozenset[str], SearchState]:
        """This state over some sources, by the sources (query/scope.py ``view``)."""
        return self.memos.scoped_views

    def prior(self, today: datetime) -> TrustPrior:
        """The query-independent trust of every passage for this state's policy on ``today`` (built once a day)."""
        m = self.memos
        prior = m.prior
        if prior is None or prior.key != (self.policy.policy_id, today):
            with m.lock:
                prior = m.prior
                if prior is None or prior.key != (self.policy.policy_id, today):
                    prior = m.prior = TrustPrior(self.data, self.policy, today)
        return prior

    def shown(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()``, an immutable value that depends on this state and ``key`` alone, kept: what a hit shows of a
        passage besides its scores (its provenance, its explained trust factors: frozen types, query/response.py
        ``Shown``) is the same in every response of a day, and building it was a fifth of a warm search.  Shared
        by every response that shows it (frozen, so none can change another's); at most SHOWN_KEPT values, all
        dropped when full."""
        kept = self.memos.shown
        value = kept.get(key)
        if value is None:
            value = make()
            if len(kept) >= SHOWN_KEPT:
                kept.clear()  # bounded memory; a rare refill costs less than an LRU's bookkeeping
            kept[key] = value
        return value

    def reranker(self) -> Reranker:
        m = self.memos
        with m.lock:
            if m.reranker is None:
                from sentence_transformers import CrossEncoder  # only when the policy names a model

                m.reranker = CrossEncoder(self.policy.rerank.model_path, device="cpu")
            return m.reranker

    def docs_names(self) -> dict[str, str]:
        """The docs version names a request may target (kept by the snapshot's evidence, query/evidence.py)."""
        return self.data.evidence.docs_names()
