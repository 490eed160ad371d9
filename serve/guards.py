"""What stands between a client and the routes of ``trustindex serve``: clients are not trusted (docs/serving.md).

- ``read_body``: a request's body is read whole, under a deadline and a size limit, before the request takes one of
  the ``max_concurrency`` slots (``Slots``): a client that sends its headers and then a trickle holds a socket, not
  a search slot, and is answered 408 when its time is up.
- ``BoundedBody``: the same for an ASGI app that reads its own body (the MCP transport at ``/mcp``), which then
  takes a slot of the same counter as ``/v1/search``.
- ``origin_guard``: every route answers only a ``Host`` on the allow-list (the loopback names by default, more with
  ``--allow-host``) and an ``Origin``, when a browser sends one, of an allowed host; a POST must say
  ``Content-Type: application/json``.  A web page the user visits can neither reach a loopback server through
  DNS rebinding (its Host is the page's name) nor send it a "simple" cross-site POST (text/plain, form types).
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY_HOST = "*"


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Slots:
    """How many counted requests run now, at most ``limit``; one event loop touches it, so no lock."""

    def __init__(self, limit: int):
        self.limit, self.n = limit, 0

    def take(self) -> bool:
        if self.n >= self.limit:
            return False
        self.n += 1
        return True

    def release(self) -> None:
        self.n -= 1

    def busy(self) -> HttpError:
        return HttpError(503, f"server busy: {self.limit} requests already running")


async def read_body(request: Request, max_bytes: int, timeout: float) -> bytes:
    """The whole body, at most ``max_bytes``, within ``timeout`` seconds of the headers."""
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise HttpError(413, f"request body is {declared} bytes; the limit is {max_bytes}")

    async def whole() -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise HttpError(413, f"request body is over the limit of {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        return await asyncio.wait_for(whole(), timeout)
    except TimeoutError:
        raise HttpError(408, f"request body not received within {timeout:g} s") from None
    except ClientDisconnect:
        raise HttpError(400, "client closed the connection before sending its body") from None


class BoundedBody:
    """``read_body``'s limits for an ASGI app that reads its own body (the MCP transport): the body is read here
    first, within ``timeout`` and up to ``max_bytes``, and replayed to the app, which runs holding a slot of
    ``slots``.  (A class: Starlette's Route would take a function for a request handler.)"""

    def __init__(self, app, max_bytes: int, timeout: float, slots: Slots):
        self.app, self.max_bytes, self.timeout, self.slots = app, max_bytes, timeout, slots

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            messages = await asyncio.wait_for(self._read(receive), self.timeout)
        except TimeoutError:
            messages = HttpError(408, f"request body not received within {self.timeout:g} s")
        if isinstance(messages, HttpError):
            return await error_response(messages.status, str(messages))(scope, receive, send)
        if not self.slots.take():
            busy = self.slots.busy()
            return await error_response(busy.status, str(busy))(scope, receive, send)
        replay = iter(messages)

        async def again():
            return next(replay, None) or await receive()

        try:
            await self.app(scope, again, send)
        finally:
            self.slots.release()

    async def _read(self, receive) -> list[dict] | HttpError:
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                return HttpError(413, f"request body is over the limit of {self.max_bytes} bytes")
            if message["type"] != "http.request" or not message.get("more_body"):
                return messages


def host_name(value: str) -> str:
    """``Host``'s name without the port: ``127.0.0.1:8080`` -> ``127.0.0.1``, ``[::1]:80`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bound: str, extra: tuple[str, ...]) -> frozenset[str]:
    """The loopback names, the address the server is bound to (unless it is every address) and ``extra``."""
    names = {*LOOPBACK_NAMES, *(host_name(h) if h != ANY_HOST else h for h in extra)}
    if bound not in ("0.0.0.0", "::", ""):
        names.add(host_name(bound) if not bound.startswith("[") else bound.strip("[]"))
    return frozenset(names)


def _refusal(headers: dict[bytes, bytes], method: str, allowed: frozenset[str]) -> tuple[int, str] | None:
    if ANY_HOST not in allowed:
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host not in allowed:
            return 421, f"Host {host[:80]!r} is not one this server answers (allowed: {', '.join(sorted(allowed))})"
        origin = headers.get(b"origin")
        if origin is not None:
            text = origin.decode("latin-1")
            try:
                parts = urlsplit(text)
                name = (parts.hostname or "") if parts.scheme in ("http", "https") else ""
            except ValueError:
                name = ""
            if name not in allowed:
                return 403, f"Origin {text[:80]!r} may not call this server (a page of another site)"
    if method == "POST":
        media = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
        if media != b"application/json":
            return 415, f"POST needs Content-Type: application/json, got {media.decode('latin-1')[:60]!r}"
    return None


def origin_guard(app, allowed: frozenset[str]):
    """A pure ASGI wrapper: the Host, Origin and Content-Type checks above, before any route (or the token check)."""

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            refusal = _refusal(dict(scope.get("headers") or []), scope.get("method", ""), allowed)
            if refusal is not None:
                await error_response(*refusal)(scope, receive, send)
                return
        await app(scope, receive, send)

    setattr(guarded, "state", app.state)  # noqa: B010 (build_app's callers read app.state)
    return guarded
