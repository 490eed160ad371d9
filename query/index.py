"""The query module's entry point: ``Index.open(path).search(...)``.

Channels (dense, lexical) give candidates; RRF chooses the candidate pool; relevance is absolute (raw cosine,
saturated BM25); trust multiplies the factors; ``ranking_score`` = trust × ranking relevance orders the hits
(query/score.py states the formula: the passage's relevance plus what its page lends, or a cross-encoder's
probability), and every term of it is in the hit (query/explain.py recomputes it from the response); identical
passages collapse into one hit; the match tier comes from answer_confidence, the calibrated probability that the
top hit's page answers (query/answer_confidence.py; the best raw cosine when the policy has no calibration), and an
abstained response is low; display_confidence is the tier's ceiling × the hit's ranking_score over the best of the
whole candidate pool, so it never rises down the list and does not change with k.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trustindex.query.reader import SnapshotData
from trustindex.query.response import SearchResponse
from trustindex.query.scope import view as scoped_view
from trustindex.query.search import factors, search
from trustindex.query.search_query import MAX_QUERY_CHARS, Query, clean_query
from trustindex.query.state import SearchState
from trustindex.query.trust import reference_day
from trustindex.query.trust_factors import Lifts
from trustindex.schemas.access import SourceScope
from trustindex.schemas.policy import Policy
from trustindex.schemas.signing import TrustedKey, signed_by_trusted
from trustindex.schemas.snapshot import CURRENT, MANIFEST, resolve_current

__all__ = ["MAX_QUERY_CHARS", "Index", "clean_query"]


class Index:
    """Searches one snapshot under one policy.  Everything a search reads lives in ``self.state``
    (query/state.py), replaced whole by ``reload_policy``; a search takes it once and uses nothing else."""

    def __init__(self, data: SnapshotData, policy: Policy, query_cache: int = 0):
        self.state = SearchState.open(data, policy, query_cache)

    # Read-only views of the current state (callers outside a search: calibration, benchmarks, tests).
    @property
    def data(self) -> SnapshotData:
        return self.state.data

    @property
    def policy(self) -> Policy:
        return self.state.policy

    @property
    def dense(self):
        return self.state.dense

    @property
    def encoder(self):
        return self.state.encoder

    @property
    def snapshot_id(self) -> str:
        return self.state.snapshot_id

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        data_dir: str | Path | None = None,
        policy: Policy | str | Path | None = None,
        verify: bool = True,
        warm: bool = False,
        query_cache: int = 0,
        trusted_keys: Sequence[str | Path | TrustedKey] | None = None,
    ) -> Index:
        """Open a snapshot directory, or the live snapshot of a data directory (``warm``: see ``warm()``;
        ``query_cache``: how many query vectors a long-running process keeps, query/state.py ``QueryVectors``).
        ``trusted_keys`` (public key files or loaded keys): the snapshot must carry a signature by one of them
        (schemas/signing.py), checked before any other file is read; without it a snapshot opens unsigned."""
        if path is None:
            path = resolve_current(data_dir or "data")
        elif not (Path(path) / MANIFEST).exists() and (Path(path) / CURRENT).is_file():
            path = resolve_current(path)  # a data directory; a CURRENT inside a snapshot means nothing
        signed = signed_by_trusted(Path(path), trusted_keys) if trusted_keys is not None else None
        pol = policy if isinstance(policy, Policy) else Policy.load(policy)
        data = SnapshotData(Path(path), verify=verify)
        data.signed_by, data.signature = (signed.key_id, signed) if signed is not None else (None, None)
        index = cls(data, pol, query_cache)
        return index.warm() if warm else index

    def reload_policy(self, policy: Policy | str | Path | None) -> None:
        """A new state under ``policy``, swapped in by one assignment (a running search keeps its own)."""
        self.state = self.state.with_policy(policy if isinstance(policy, Policy) else Policy.load(policy))

    def warm(self) -> Index:
        """Prepare for many queries: build the dense int8 prefilter (~1 s at 100k passages) and the trust prior.

        Results are the same with or without it; a one-shot query skips it.
        """
        state = self.state
        state.dense.warm()
        state.prior(reference_day())
        state.data.warm()
        state.data.vectors.release()  # both warm-ups above have read every row
        return self

    def view(self, scope: SourceScope | None) -> SearchState:
        """The current state as ``scope`` sees it (query/scope.py): itself when the scope allows every source."""
        return scoped_view(self.state, scope)

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, *args, **options) -> dict:
        """The response JSON (schemas/response.schema.json): ``respond(query, ...).to_json()``, the same arguments."""
        return self.respond(query, *args, **options).to_json()

    def respond(
        self,
        query: str,
        k: int = 10,
        targets=None,
        strict: bool = False,
        also: list[str] | None = None,
        scope: SourceScope | None = None,
    ) -> SearchResponse:
        """One search (query/search.py: gather, score, order, judge) as the typed response.  ``targets``:
        ``COMPONENT=VERSION`` strings or a ``{component: version}`` dict; ``also``: extra phrasings of the query;
        ``scope``: only these sources are searched, counted and listed (query/scope.py)."""
        st = scoped_view(self.state, scope)  # the only read of the state: every stage reads this one
        return search(st, Query.make(st, query, k, targets, strict, also))

    def _factors(self, i: int, today, docs_targeted=False, changes_asked=False, language=None) -> dict:
        """The explained factors of passage ``i`` under the current state (tests compare them with the prior)."""
        return factors(self.state, i, today, Lifts(docs_targeted, changes_asked=changes_asked, language=language))
