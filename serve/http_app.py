"""``trustindex serve``: the query contract over HTTP, and the MCP tools over streamable HTTP at ``/mcp``.

Starlette and uvicorn (both come with the MCP SDK: the ``serve`` extra).  Every route reads the served snapshot
once (``SnapshotHolder.get``) and a search runs on the one state it took (query/state.py), so a swap or a policy
reload never mixes two snapshots or two policies in a response.  Searches run on worker threads; more than
``max_concurrency`` requests at once are refused with 503 rather than queued without bound.

Bad requests answer 4xx with ``{"error": "<the CLI's one-line message>"}``.  No route reads a file a request
names: a passage is looked up by chunk id in the loaded snapshot.  Bearer tokens (``--token-file`` or
``TRUSTINDEX_TOKENS``, comma-separated) are required on every route but ``/healthz``, ``/readyz`` and the search
page's static files (serve/page.py) when any is configured, and must be configured to bind to a non-loopback
address.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse as StarletteJSON
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from trustindex.query.batch import BatchDefaults, answer_one
from trustindex.query.response import dated_sources
from trustindex.schemas.errors import SnapshotError, TrustIndexError, one_line
from trustindex.schemas.secret_files import warn_if_exposed
from trustindex.serve.access import AccessSpec, Authenticator, access_guard, identity_of
from trustindex.serve.assistant_text import DEFAULT_MAX_TOKENS, render_compact, token_counter
from trustindex.serve.audit import (
    AccessEvents,
    AuditLog,
    AuditSpec,
    batch_fields,
    closing,
    passage_fields,
    search_fields,
    worker_number,
)
from trustindex.serve.guards import (
    LOOPBACK_NAMES,
    BoundedBody,
    HttpError,
    Slots,
    allowed_hosts,
    origin_guard,
    read_body,
)
from trustindex.serve.guards import error_response as _error
from trustindex.serve.listing import MAX_NEIGHBOURS, OutOfScope, list_sources, list_versions
from trustindex.serve.live import SnapshotHolder
from trustindex.serve.mcp_server import ToolAccess, build_server
from trustindex.serve.metrics import CONTENT_TYPE, ServeMetrics
from trustindex.serve.page import PAGE_PATHS, page_routes
from trustindex.serve.request_limits import RequestLimits, bounded_batch

log = logging.getLogger("trustindex.serve")
WORKER_HEADER = "x-trustindex-worker"  # the answering process's id: ``serve --workers N`` runs N of them
WARNING_HEADER = "x-trustindex-warning"  # on every answer of a replica serving a stale or superseded snapshot
# the search page's static files hold no index data; its script sends the token on each /v1 call (serve/page.py)
OPEN_ROUTES = ("/healthz", "/readyz", *PAGE_PATHS)
AUDITED_PREFIX = "/v1/"  # the API's routes: one audit line per request (the MCP tools write their own)


@dataclass(frozen=True)
class ServeLimits(RequestLimits):
    """A request's limits (``k``, batch length: shared with the MCP tools) and the server's own."""

    max_body_bytes: int = 1 << 20
    max_concurrency: int = 64


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    limits: ServeLimits = field(default_factory=ServeLimits)
    tokens: frozenset[str] = frozenset()
    poll_seconds: float = 5.0
    allowed_hosts: tuple[str, ...] = ()  # Host/Origin names besides the loopback ones ("*": any; serve/guards.py)
    body_timeout: float = 10.0  # seconds a client has to send its whole body, before it takes a slot
    access: AccessSpec = field(default_factory=AccessSpec)  # scoped tokens and SSO (serve/access.py)
    audit: AuditSpec = field(default_factory=AuditSpec)  # the audit log (serve/audit.py)

    def check(self) -> None:
        if self.host not in LOOPBACK_NAMES and not (self.tokens or self.access.tokens_file or self.access.oidc.issuer):
            raise TrustIndexError(
                f"binding to {self.host} needs a bearer token: give --token-file FILE or set TRUSTINDEX_TOKENS"
                " (or --tokens FILE, or --oidc-issuer)"
            )
        self.access.check()


def load_tokens(token_file: str | None, env_value: str | None) -> frozenset[str]:
    tokens: set[str] = set()
    if token_file:
        path = Path(token_file)
        try:
            tokens |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
        except OSError as e:
            raise TrustIndexError(f"{path}: cannot read the token file ({e.strerror})") from None
        if not tokens:
            raise TrustIndexError(f"{path}: the token file holds no token")
        warn_if_exposed(path, "bearer tokens")
    tokens |= {t.strip() for t in (env_value or "").split(",") if t.strip()}
    return frozenset(tokens)


class JSONResponse(StarletteJSON):
    """orjson instead of json.dumps: the same JSON values, ~0.06 ms instead of ~0.5 ms for a 10-hit search
    response, time the event loop and the other searches' threads get back."""

    def render(self, content) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


def _json(body: bytes):
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f" at column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise HttpError(400, f"malformed JSON ({getattr(e, 'msg', 'not UTF-8')}{where})") from None
    except RecursionError:  # json's C scanner recurses per nesting level: [[[[... runs out of stack
        raise HttpError(400, "malformed JSON (nested too deeply)") from None
    except ValueError as e:  # an integer beyond Python's 4,300 digits for str -> int
        raise HttpError(400, f"malformed JSON ({one_line(e)[:120]})") from None


def _rendering(fmt: object, max_tokens: object) -> tuple[str, int | None]:
    """``format``: "json" (the response contract) or "compact" (text for assistants, ``max_tokens`` bounded)."""
    if fmt not in ("json", "compact"):
        raise HttpError(400, f'format must be "json" or "compact", got {fmt!r}')
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise HttpError(400, f"max_tokens must be a positive integer, got {max_tokens!r}")
    return str(fmt), max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS


def build_app(
    holder: SnapshotHolder,
    config: ServeConfig,
    metrics: ServeMetrics | None = None,
    background: Callable[[], contextlib.AbstractContextManager] | None = None,
) -> Starlette:
    """The app over ``holder``; ``background`` is entered for the app's lifetime (the snapshot poll)."""
    metrics = metrics or ServeMetrics()
    metrics.watch_query_vectors(lambda: (lambda served: served.index.state if served else None)(holder.served))
    limits = config.limits
    slots = Slots(limits.max_concurrency)  # /v1/search, /v1/search:batch and /mcp count against the same limit
    auth = Authenticator(config.tokens, config.access)
    audit = AuditLog(config.audit, worker_number(), metrics.audited) if config.audit.path else None
    events = AccessEvents(metrics, audit)
    hashed = config.audit.hash_queries

    route = _router(holder, config, metrics, slots, events)

    def served():
        index, passages, _warning = holder.get()
        return index, passages

    def one_search(index, req, request: Request, warning: str | None) -> Response:
        if not isinstance(req, dict):
            raise HttpError(400, 'expected an object with "query"')
        req = dict(req)
        rendering, max_tokens = _rendering(req.pop("format", "json"), req.pop("max_tokens", None))
        scope = identity_of(request.scope).scope
        result, failed = answer_one(index, req, 1, BatchDefaults(), limits, scope)
        request.state.audit = search_fields(req, result, hashed)
        if failed:
            status = 500 if result["error"].startswith("internal error") else 400
            return _error(status, result["error"])
        metrics.searched(result)
        if rendering == "compact":  # what an assistant reads: bounded text, the same hits (issue 18)
            count = token_counter(str(index.data.dir))
            return PlainTextResponse(render_compact(result, max_tokens, count, warning=warning))
        return JSONResponse({**result, "warning": warning} if warning else result)

    async def search(request: Request) -> Response:
        req = _json(request.state.body)
        index, _, warning = holder.get()
        return await run_in_threadpool(one_search, index, req, request, warning)

    async def search_batch(request: Request) -> Response:
        body = _json(request.state.body)
        reqs = body.get("requests") if isinstance(body, dict) else body
        if not isinstance(reqs, list):
            raise HttpError(400, 'expected {"requests": [...]} or a list of requests')
        limits.check_batch(reqs, BatchDefaults().k)
        index, _, warning = holder.get()
        scope = identity_of(request.scope).scope

        def run() -> list[dict]:
            out = []
            for result, failed in bounded_batch(index, reqs, BatchDefaults(), limits, scope):
                if not failed:
                    metrics.searched(result)
                out.append(result)
            request.state.audit = batch_fields(reqs, out, hashed)
            return out

        answered = {"responses": await run_in_threadpool(run)}
        return JSONResponse({**answered, "warning": warning} if warning else answered)

    routes = [
        route("/v1/search", ["POST"], search=True)(search),
        route("/v1/search:batch", ["POST"], search=True)(search_batch),
        *(route(path, ["GET"])(fn) for path, fn in _reading_endpoints(holder, metrics, limits, events).items()),
        *page_routes(),
    ]
    mcp_routes, lifespan = _mcp_mount(holder, config, slots, closing(background, audit), events)
    app = Starlette(routes=[*routes, *mcp_routes], lifespan=lifespan)
    app.state.metrics = metrics
    app.state.slots = slots
    app.state.audit = audit
    authed = access_guard(app, auth, OPEN_ROUTES, events)
    return origin_guard(authed, allowed_hosts(config.host, config.allowed_hosts))


def _router(holder: SnapshotHolder, config: ServeConfig, metrics: ServeMetrics, slots: Slots, events: AccessEvents):
    """``route(path, methods, search)``: wraps an endpoint with the body read under a deadline, a search slot
    (search routes only), the error mapping (one line to the client), the worker header and the metrics."""
    limits = config.limits
    worker = str(os.getpid())

    async def counted(fn: Callable[[Request], Awaitable[Response]], request: Request, search: bool) -> Response:
        if request.method == "POST":  # the whole body first, under a deadline: a slow client holds no slot
            request.state.body = await read_body(request, limits.max_body_bytes, config.body_timeout)
        if not search:
            return await fn(request)
        if not slots.take():
            raise slots.busy()
        try:
            return await fn(request)
        finally:
            slots.release()

    def route(path: str, methods: list[str], search: bool = False):
        def wrap(fn: Callable[[Request], Awaitable[Response]]) -> Route:
            async def endpoint(request: Request) -> Response:
                start = time.perf_counter()
                response: Response
                try:
                    response = await counted(fn, request, search)
                except HttpError as e:
                    response = _error(e.status, str(e))
                except SnapshotError as e:
                    response = _error(503 if holder.served is None else 404, one_line(e))
                except TrustIndexError as e:
                    response = _error(400, one_line(e))
                except Exception as e:  # a bug: one line to the client, the traceback to the log
                    log.exception("%s failed", path)
                    response = _error(500, one_line(e, "internal error: "))
                response.headers[WORKER_HEADER] = worker
                took = time.perf_counter() - start
                response.headers["X-Content-Type-Options"] = "nosniff"  # JSON and text are never to be sniffed
                if path not in OPEN_ROUTES and (warning := holder.notice()):  # the open routes name no paths
                    response.headers[WARNING_HEADER] = _header_text(warning)
                metrics.requests.labels(route=path, status=str(response.status_code)).inc()
                metrics.latency.labels(route=path).observe(took)
                if path.startswith(AUDITED_PREFIX):
                    fields = getattr(request.state, "audit", None) or {}
                    events.answered(identity_of(request.scope), path, response.status_code, took, fields)
                return response

            return Route(path, endpoint, methods=methods)

        return wrap

    return route


def _reading_endpoints(
    holder: SnapshotHolder, metrics: ServeMetrics, limits, events: AccessEvents
) -> dict[str, Callable]:
    """The GET routes by path: what a client reads besides search (passages, listings, snapshot, health, metrics,
    the OpenAPI document); none takes a search slot.  Each reads the snapshot as the caller's scope sees it."""

    def served():
        index, passages, _warning = holder.get()
        return index, passages

    async def passage(request: Request) -> Response:
        raw = request.query_params.get("neighbours", "1")
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 4) or int(raw) > MAX_NEIGHBOURS:
            raise HttpError(400, f"neighbours must be an integer from 0 to {MAX_NEIGHBOURS}, got {raw!r}")
        index, passages = served()
        return JSONResponse(_scoped_passage(request, index, passages, int(raw), events))

    def seen(request: Request):
        """The served index and the snapshot's data as the caller's scope sees it."""
        index, _ = served()
        return index, index.view(identity_of(request.scope).scope).data

    async def sources(request: Request) -> Response:
        return JSONResponse(list_sources(seen(request)[1]))

    async def versions(request: Request) -> Response:
        return JSONResponse(list_versions(seen(request)[1]))

    async def snapshot(request: Request) -> Response:
        return JSONResponse(_snapshot_info(holder, *seen(request)))

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> Response:
        if holder.served is None:  # open to anyone: no warning (it names paths), the log and /metrics say why
            return _error(503, "no snapshot loaded yet (the server log says why)")
        if not holder.ready():  # past its signed expiry or --max-snapshot-age: still answering, not to be routed to
            return _error(503, f"snapshot {holder.served.index.snapshot_id} is stale (/v1/snapshot says why)")
        return JSONResponse({"status": "ready", "snapshot_id": holder.served.index.snapshot_id})

    async def metrics_route(_request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    async def openapi(_request: Request) -> Response:
        from trustindex.serve.openapi import openapi_document

        return JSONResponse(openapi_document(limits))

    return {
        "/v1/passages/{chunk_id}": passage,
        "/v1/sources": sources,
        "/v1/versions": versions,
        "/v1/snapshot": snapshot,
        "/healthz": healthz,
        "/readyz": readyz,
        "/metrics": metrics_route,
        "/openapi.json": openapi,
    }


def _snapshot_info(holder: SnapshotHolder, index, data) -> dict:
    """``/v1/snapshot``: the served snapshot as the caller's scope sees it, its signature's freshness and any
    warning."""
    m = data.manifest
    signed = index.data.signature if holder.served is None else holder.served.signed
    fresh = signed.freshness if signed is not None else None
    return {
        "snapshot_id": m.snapshot_id,
        "created_at": m.created_at,
        "policy_id": index.policy.policy_id,
        "source": holder.source.label,
        "signed": index.data.signed_by is not None,
        "signed_by": index.data.signed_by,
        "sequence": fresh.sequence if fresh else None,
        "signed_at": fresh.signed_at if fresh else None,
        "expires_at": fresh.expires_at if fresh else None,
        "stale": holder.stale(),
        "sources": [s.to_json() for s in dated_sources(data)],
        "warning": holder.notice(),
    }


def _scoped_passage(request: Request, index, passages, neighbours: int, events: AccessEvents) -> dict:
    """The passage as the caller's scope sees it: one of another source is a 404 like a missing one (counted as a
    scope denial), and the request's audit line names what was asked and returned."""
    who, chunk_id = identity_of(request.scope), request.path_params["chunk_id"]
    request.state.audit = passage_fields(chunk_id, None)
    try:
        found = passages.passage(chunk_id, neighbours, getattr(index.view(who.scope), "allowed", None))
    except OutOfScope:
        events.scope_denied("passage_out_of_scope", request.url.path, who, line=False)
        request.state.audit["refused"] = "out_of_scope"
        raise
    request.state.audit = passage_fields(chunk_id, found)
    return found


def _mcp_mount(holder: SnapshotHolder, config: ServeConfig, slots: Slots, background, events: AccessEvents):
    """The MCP server's routes under /mcp (bounded bodies, the search slots shared) and the app's lifespan (the
    snapshot poll and the MCP session manager)."""
    limits = config.limits
    # SnapshotHolder.get has LiveIndex's shape; the tools check k and batch length against the same limits, and
    # search, list and fetch as the request's identity (access_guard) may, each call in the audit log
    mcp = build_server(live=holder, limits=limits, access=ToolAccess(events, config.audit.hash_queries))
    # Host and Origin are checked for every route, /mcp included, by origin_guard (with --allow-host); the SDK's own
    # check (loopback names only, ports as patterns) would refuse the names an operator allows
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        host=config.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        with background() if background else contextlib.nullcontext():
            async with mcp.session_manager.run():
                yield

    mcp_routes = [
        Route(r.path, BoundedBody(r.app, limits.max_body_bytes, config.body_timeout, slots), methods=r.methods)
        if isinstance(r, Route)
        else r
        for r in mcp_app.routes
    ]
    return mcp_routes, lifespan


def _header_text(text: str) -> str:
    """A warning as a header value: Latin-1 without line breaks, at most 1,000 characters."""
    return " ".join(text.split()).encode("latin-1", "replace").decode("latin-1")[:1000]
