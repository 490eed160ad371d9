"""What one request may ask of a long-running server: the same limits over every transport."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from trustindex.query.batch import BatchDefaults, answer_one
from trustindex.schemas.access import SourceScope
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
    # a batch's hits, all requests together (the sum of their k): 64 × k=100 took 0.9 GiB over MCP (issue 40)
    max_batch_hits: int = 1000
    # a batch's answers, as JSON: once past it, the requests left answer an error in their place, unrun
    max_response_bytes: int = 16 << 20

    def check_lists(self, also: object, targets: object) -> None:
        if isinstance(also, list) and len(also) > self.max_also:
            raise QueryError(f"also has {len(also)} phrasings; the limit is {self.max_also}")
        if isinstance(targets, (list, dict)) and len(targets) > self.max_targets:
            raise QueryError(f"targets has {len(targets)} entries; the limit is {self.max_targets}")

    def check_k(self, k: object) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.max_k:
            raise QueryError(f"k must be an integer from 1 to {self.max_k}, got {k!r}")
        return k

    def check_batch(self, requests: list, default_k: int) -> None:
        """The batch's length and its hits (each request's ``k``, or ``default_k``; a bad ``k`` is its request's
        own error and counts nothing), before any request runs."""
        if len(requests) > self.max_batch:
            raise QueryError(f"batch of {len(requests)} requests; the limit is {self.max_batch}")
        hits = 0
        for r in requests:
            k = r.get("k", default_k) if isinstance(r, dict) else 0
            hits += k if isinstance(k, int) and not isinstance(k, bool) and 0 < k <= self.max_k else 0
        if hits > self.max_batch_hits:
            raise QueryError(
                f"batch asks for {hits} hits (the sum of its k); the limit is {self.max_batch_hits}: "
                f"ask for fewer hits or split it"
            )


def bounded_batch(
    index, requests: list, defaults: BatchDefaults, limits: RequestLimits, scope: SourceScope | None = None
) -> Iterator[tuple[dict, bool]]:
    """Each request's answer in order (and whether it failed), as ``query.batch.answer_one`` gives it, until the
    answers' JSON reaches ``limits.max_response_bytes``: the requests after that answer an error, unrun."""
    limits.check_batch(requests, defaults.k)
    size = 0
    for n, raw in enumerate(requests, 1):
        if size > limits.max_response_bytes:
            yield (
                {
                    "line": n,
                    "error": f"not run: the batch's answers reached {size} bytes, over the limit of "
                    f"{limits.max_response_bytes}; ask for it in another batch",
                },
                True,
            )
            continue
        result, failed = answer_one(index, raw, n, defaults, limits, scope)
        size += len(orjson.dumps(result, option=orjson.OPT_NON_STR_KEYS))
        yield result, failed
