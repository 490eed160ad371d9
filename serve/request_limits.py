"""What one request may ask of a long-running server: the same limits over every transport."""

from __future__ import annotations

from dataclasses import dataclass

from trustindex.schemas.errors import QueryError


@dataclass(frozen=True)
class RequestLimits:
    """What one request may ask of a long-running server, the same over every transport: ``serve``'s
    ``/v1/search`` and ``/v1/search:batch``, and the MCP tools over stdio and over ``/mcp``.  The query's length
    is bounded for every caller by ``Index.search`` (``query.index.MAX_QUERY_CHARS``)."""

    max_k: int = 100
    max_batch: int = 64
    # each phrasing is one more embedding and two more channels, each target one more version report: both are
    # linear in their count (``also`` × 20,000 took 22 s; ``targets`` × 8,000 answered 116 MB)
    max_also: int = 8
    max_targets: int = 16

    def check_lists(self, also: object, targets: object) -> None:
        if isinstance(also, list) and len(also) > self.max_also:
            raise QueryError(f"also has {len(also)} phrasings; the limit is {self.max_also}")
        if isinstance(targets, (list, dict)) and len(targets) > self.max_targets:
            raise QueryError(f"targets has {len(targets)} entries; the limit is {self.max_targets}")

    def check_k(self, k: object) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.max_k:
            raise QueryError(f"k must be an integer from 1 to {self.max_k}, got {k!r}")
        return k

    def check_batch(self, n: int) -> None:
        if n > self.max_batch:
            raise QueryError(f"batch of {n} requests; the limit is {self.max_batch}")
