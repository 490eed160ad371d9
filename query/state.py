"""Everything one search reads, as one object: ``SearchState``.

A search takes the state once (``state = index.state``) and reads the snapshot, the policy, the dense index,
the encoder and the trust prior only through it; a policy reload or a snapshot swap builds a new state and
replaces the old one with a single assignment.  A search already running finishes on the state it started
with, so a response never carries one policy's id with another's thresholds, and a reload never resets the
reranker under a running search.

The configuration is fixed at construction; what is derived lazily from it (the trust prior of a day, the
reranking model, the docs version names) is memoised per state under the state's own lock.  The user's query
vectors (``QueryVectors``, off unless a long-running server asks for it) belong to the snapshot's encoder, so a
policy reload keeps them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from trustindex.query.dense import DenseIndex
from trustindex.query.query_encoder import open_encoder
from trustindex.query.reader import SnapshotData
from trustindex.query.target_match import docs_names
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
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

    def __init__(self, encoder: Any, size: int = 0):
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


class SearchState:
    """One snapshot with one policy: its data, dense index, encoder and the priors derived from them."""

    __slots__ = (
        "data",
        "policy",
        "dense",
        "encoder",
        "query_vectors",
        "_lock",
        "_prior",
        "_reranker",
        "_docs_names",
        "_shown",
        "scoped_views",
    )

    def __init__(
        self,
        data: SnapshotData,
        policy: Policy,
        dense: DenseIndex,
        encoder: Any,
        query_vectors: QueryVectors | None = None,
    ):
        self.data = data
        self.policy = policy
        self.dense = dense
        self.encoder = encoder
        self.query_vectors = query_vectors or QueryVectors(encoder)
        self._lock = threading.Lock()
        self._prior: TrustPrior | None = None
        self._reranker: Reranker | None = None
        self._docs_names: dict[str, str] | None = None
        self._shown: dict[Hashable, Any] = {}
        self.scoped_views: dict[frozenset[str], SearchState] = {}  # query/scope.py: this state over some sources

    @classmethod
    def open(cls, data: SnapshotData, policy: Policy, query_cache: int = 0) -> SearchState:
        """``query_cache``: how many query vectors to keep (``QueryVectors``)."""
        encoder = open_encoder(data.dir, data.manifest, data.checksums_verified)
        dense = DenseIndex(data.embeddings, data.dir, policy.dense.exact_below)
        return cls(data, policy, dense, encoder, QueryVectors(encoder, query_cache))

    def with_policy(self, policy: Policy) -> SearchState:
        """The same snapshot under another policy: a new dense index (its mode depends on the policy) that
        shares the old one's warm prefilter, the same encoder and query vectors, nothing else derived."""
        dense = DenseIndex(self.data.embeddings, self.data.dir, policy.dense.exact_below)
        dense.share_warmth(self.dense)
        return SearchState(self.data, policy, dense, self.encoder, self.query_vectors)

    @property
    def snapshot_id(self) -> str:
        return self.data.manifest.snapshot_id

    def prior(self, today: datetime) -> TrustPrior:
        """The query-independent trust of every passage for this state's policy on ``today`` (built once a day)."""
        prior = self._prior
        if prior is None or prior.key != (self.policy.policy_id, today):
            with self._lock:
                prior = self._prior
                if prior is None or prior.key != (self.policy.policy_id, today):
                    prior = self._prior = TrustPrior(self.data, self.policy, today)
        return prior

    def shown(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()``, an immutable value that depends on this state and ``key`` alone, kept: what a hit shows of a
        passage besides its scores (its provenance, its explained trust factors: frozen types, query/response.py
        ``Shown``) is the same in every response of a day, and building it was a fifth of a warm search.  Shared
        by every response that shows it (frozen, so none can change another's); at most SHOWN_KEPT values, all
        dropped when full."""
        value = self._shown.get(key)
        if value is None:
            value = make()
            if len(self._shown) >= SHOWN_KEPT:
                self._shown.clear()  # bounded memory; a rare refill costs less than an LRU's bookkeeping
            self._shown[key] = value
        return value

    def reranker(self) -> Reranker:
        with self._lock:
            if self._reranker is None:
                from sentence_transformers import CrossEncoder  # only when the policy names a model

                self._reranker = CrossEncoder(self.policy.rerank.model_path, device="cpu")
            return self._reranker

    def docs_names(self) -> dict[str, str]:
        names = self._docs_names
        if names is None:
            d = self.data
            rows = [r for rs in (*d.doc_versions.values(), *d.chunk_versions.values()) for r in rs]
            names = self._docs_names = docs_names([r for r in rows if r.component == DOCS_COMPONENT])
        return names
