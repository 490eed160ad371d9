"""Many requests against one loaded index; a bad request answers an error object in its place, never stops the rest.

Shared by ``trustindex query --batch`` (JSON Lines in, JSON Lines out), the Python API
(:func:`search_batch`) and the MCP ``search_batch`` tool.  A request is ``{"query", and optionally "k",
"targets", "strict", "also"}``; its error object is ``{"line": N, "error": "one line"}`` (``N`` 1-based: the
file's line number, or the request's position in a list).  A component the snapshot has never seen is such
an error (its message lists the known components); a known component at a version no passage targets is
an answer (``abstention_reason`` ``version_unavailable`` under ``strict``, with the versions that exist in
``targets[].constraints_seen``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from trustindex.schemas.access import SourceScope
from trustindex.schemas.errors import QueryError, TrustIndexError

REQUEST_KEYS = frozenset({"query", "k", "targets", "strict", "also"})
LEFT_OUT: Any = object()  # a request without "k" (its own ``null`` is checked as a value)
MAX_TARGET_CHARS = 200  # "component=range": a real one is ~20 characters


@dataclass(frozen=True)
class BatchDefaults:
    """Options a request does not set itself (the command line's own ``--k``, ``--target``, ``--strict``)."""

    k: int = 10
    targets: list[str] | dict[str, str] | None = None
    strict: bool = False


class RequestCheck(Protocol):
    """What a server checks of one request beyond ``Index.search``'s own bounds (serve/request_limits.py)."""

    def check_k(self, k: object) -> int: ...

    def check_lists(self, also: object, targets: object) -> None: ...


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    return msg if isinstance(e, TrustIndexError) else f"internal error: {type(e).__name__}: {msg}"


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch, its types checked (``_request``); a key the request left out is None (``k``:
    ``LEFT_OUT``, apart from a null one, which is an error)."""

    query: Any
    k: Any = LEFT_OUT  # checked by the server's limits, or as an integer
    targets: list[str] | dict[str, str] | None = None
    strict: bool | None = None
    also: list[str] | None = None


def _request(raw) -> BatchRequest:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise QueryError(f"not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(raw, dict) or "query" not in raw:
        raise QueryError('expected an object with "query"')
    unknown = sorted(set(raw) - REQUEST_KEYS)
    if unknown:
        raise QueryError(f"unknown key(s) {', '.join(unknown)} (expected {', '.join(sorted(REQUEST_KEYS))})")
    if "strict" in raw and not isinstance(raw["strict"], bool):
        raise QueryError(f"strict must be true or false, got {raw['strict']!r}")
    req = BatchRequest(**raw)
    also, targets = req.also, req.targets
    if also is not None and not (isinstance(also, list) and all(isinstance(a, str) for a in also)):
        raise QueryError(f"also must be a list of texts, got {_short(also)}")
    if targets is not None and not (
        (isinstance(targets, list) and all(isinstance(t, str) and len(t) <= MAX_TARGET_CHARS for t in targets))
        or (
            isinstance(targets, dict)
            and all(isinstance(v, str) and len(k) + len(v) < MAX_TARGET_CHARS for k, v in targets.items())
        )
    ):
        raise QueryError(
            f'targets must be a list of "COMPONENT=VERSION" texts (at most {MAX_TARGET_CHARS} characters each) '
            f"or an object of them, got {_short(targets)}"
        )
    return req


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def answer_one(
    index,
    raw,
    line: int,
    defaults: BatchDefaults = BatchDefaults(),
    limits: RequestCheck | None = None,
    scope: SourceScope | None = None,
) -> tuple[dict, bool]:
    """The response to one request (a JSON line or a dict), or its error object; and whether it failed.
    ``limits``: a server's (none for the command line and the Python API, which only ``Index.search`` bounds);
    ``scope``: the sources the caller may read (query/scope.py; None: all)."""
    try:
        req = _request(raw)
        k = defaults.k if req.k is LEFT_OUT else req.k
        if limits is not None:
            limits.check_k(k)
            limits.check_lists(req.also, req.targets)
        elif isinstance(k, bool) or not isinstance(k, int):
            raise QueryError(f"k must be an integer, got {k!r}")
        r = index.search(
            req.query,
            k=k,
            targets=req.targets or defaults.targets,
            strict=defaults.strict if req.strict is None else req.strict,
            also=req.also,
            scope=scope,
        )
        return r, False
    except Exception as e:  # every failure of one request is that request's answer; the batch goes on
        return {"line": line, "error": _one_line(e)}, True


def search_batch(
    index,
    requests: Iterable,
    defaults: BatchDefaults = BatchDefaults(),
    limits: RequestCheck | None = None,
    scope: SourceScope | None = None,
) -> Iterator[dict]:
    """Answer each request in order (dicts or JSON strings; ``line`` counts from 1)."""
    for n, raw in enumerate(requests, 1):
        yield answer_one(index, raw, n, defaults, limits, scope)[0]


def batch_lines(index, text: str, defaults: BatchDefaults = BatchDefaults()) -> Iterator[tuple[dict, bool]]:
    """A JSON Lines file's requests (blank lines skipped; ``line`` is the file's line number)."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield answer_one(index, line, n, defaults)
