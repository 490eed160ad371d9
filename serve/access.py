"""Who asks, and which sources they may read: the access model of ``trustindex serve`` (docs/serving.md, Access).

A request's bearer token is one of:

- a ``[[token]]`` of ``--tokens FILE`` (schemas/access.py): matched by the sha256 of the secret (the file holds
  digests only), scoped to its ``sources``, refused after its ``expires``;
- a token of ``--token-file`` / ``TRUSTINDEX_TOKENS``: every source (as before scopes existed);
- a JWT from the company's SSO (``--oidc-issuer``, serve/oidc.py): its subject names the caller, its groups
  (``--oidc-scope-claim``) map to sources through the tokens file's ``[[group]]`` tables.

``access_guard`` (a pure ASGI wrapper) identifies every request but the open routes before any route runs and
puts the ``Identity`` in the ASGI scope (``identity_of``); the routes and the MCP tools read it and search,
list and fetch within its scope (query/scope.py).  A refusal is 401 (403 for a valid identity granted nothing)
with one line saying why and ``WWW-Authenticate``, counted in ``/metrics`` by reason; ``/metrics`` itself answers
only identities that may read every source (its counters would otherwise tell a scoped caller about the others'
requests).  Without any of the three, the server is open (loopback only: ServeConfig.check).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool

from trustindex.schemas.access import AccessFile, SourceScope
from trustindex.schemas.errors import TrustIndexError
from trustindex.serve.guards import error_response
from trustindex.serve.oidc import AuthFailure, OidcSpec, OidcVerifier

IDENTITY_KEY = "trustindex.identity"  # the ASGI scope's key for the request's Identity
FULL_ACCESS_ONLY = ("/metrics",)
_JWT_PREFIX = b"eyJ"  # base64url of '{"': a JWT's header


@dataclass(frozen=True)
class Identity:
    """The caller: ``name`` for the audit log (a token's name, a JWT's subject; never a secret), how it was
    identified (``via``: token, oidc, open, stdio) and its ``scope`` (None: every source)."""

    name: str
    via: str
    scope: SourceScope | None = None

    @property
    def full(self) -> bool:
        return self.scope is None


OPEN = Identity("anonymous", "open")  # a server with no credentials configured (loopback only)
STDIO = Identity("stdio", "stdio")  # the local MCP server's one client


@dataclass(frozen=True)
class AccessSpec:
    """The access options as plain values (each worker of ``serve --workers N`` builds its ``Authenticator``)."""

    tokens_file: str | None = None
    oidc: OidcSpec = field(default_factory=OidcSpec)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> AccessSpec:
        d = d or {}
        oidc = dict(d.get("oidc") or {})
        if "algorithms" in oidc:
            oidc["algorithms"] = tuple(oidc["algorithms"])
        return cls(tokens_file=d.get("tokens_file"), oidc=OidcSpec(**oidc))

    def check(self) -> None:
        self.oidc.check()
        Authenticator(frozenset(), self)  # a tokens file that does not load is one error before the server starts


def legacy_name(secret: str) -> str:
    """A ``--token-file`` token's name in the audit log: the first 8 hex digits of its sha256 (the digest a
    ``[[token]]`` table would hold), never the secret."""
    return "token:" + hashlib.sha256(secret.encode()).hexdigest()[:8]


class Authenticator:
    """Turns an ``Authorization`` header into an ``Identity`` or an ``AuthFailure``."""

    def __init__(self, legacy_tokens: Iterable[str], spec: AccessSpec):
        access = AccessFile.load(spec.tokens_file) if spec.tokens_file else None
        self.tokens: list[tuple[bytes, str, SourceScope | None, datetime | None]] = [
            (t.sha256.encode(), t.name, None if t.scope.everything else t.scope, t.expires)
            for t in (access.tokens if access else ())
        ]
        self.tokens += [
            (hashlib.sha256(s.encode()).hexdigest().encode(), legacy_name(s), None, None) for s in legacy_tokens
        ]
        self.oidc = OidcVerifier(spec.oidc, access.groups if access else {}) if spec.oidc.issuer else None
        if access and not access.tokens and self.oidc is None:
            raise TrustIndexError(f"{access.path}: holds [[group]] tables only, which need --oidc-issuer")

    @property
    def required(self) -> bool:
        return bool(self.tokens) or self.oidc is not None

    async def identify(self, header: bytes) -> Identity:
        scheme, _, given = header.partition(b" ")
        given = given.strip()
        if not header:
            raise AuthFailure("missing", "missing bearer token (Authorization: Bearer TOKEN)")
        if scheme.lower() != b"bearer" or not given:
            raise AuthFailure("malformed_header", "the Authorization header must be 'Bearer TOKEN'")
        if self.oidc is not None and given.startswith(_JWT_PREFIX) and given.count(b".") == 2:
            token = given.decode("ascii", "replace")
            claims = self.oidc.kept(token)
            if claims is None:  # the first time: the signature, maybe the issuer's keys (I/O): off the event loop
                claims = await run_in_threadpool(self.oidc.verify, token)
            return Identity(claims.subject, "oidc", claims.scope)
        return self._token(given)

    def _token(self, given: bytes) -> Identity:
        digest = hashlib.sha256(given).hexdigest().encode()
        found = None
        for stored, name, scope, expires in self.tokens:  # every digest compared: the time does not say which
            if hmac.compare_digest(stored, digest):
                found = (name, scope, expires)
        if found is None:
            raise AuthFailure("unknown_token", "missing or wrong bearer token (Authorization: Bearer TOKEN)")
        name, scope, expires = found
        if expires is not None and datetime.now(UTC) > expires:
            raise AuthFailure("token_expired", f"bearer token {name!r} expired at {expires.isoformat()}")
        return Identity(name, "token", scope)


def identity_of(scope: MutableMapping[str, Any]) -> Identity:
    """The identity ``access_guard`` found for this request (an ASGI or Starlette ``Request.scope``)."""
    return scope.get(IDENTITY_KEY) or OPEN


def access_guard(app, auth: Authenticator, open_paths: tuple[str, ...], events):
    """A pure ASGI wrapper: every HTTP request but ``open_paths`` is identified before any route runs.  ``events``:
    ``auth_failed(reason, path)`` and ``scope_denied(reason, path)`` (serve/audit.py ``AccessEvents``)."""

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and scope["path"] not in open_paths:
            if not auth.required:
                scope[IDENTITY_KEY] = OPEN
            else:
                try:
                    scope[IDENTITY_KEY] = await auth.identify(
                        dict(scope.get("headers") or []).get(b"authorization", b"")
                    )
                except AuthFailure as e:  # 403: a valid identity granted no source
                    (events.scope_denied if e.status == 403 else events.auth_failed)(e.reason, scope["path"])
                    response = error_response(e.status, str(e))
                    if e.status == 401:
                        response.headers["WWW-Authenticate"] = (
                            f'Bearer error="invalid_token", error_description="{e.reason}"'
                        )
                    await response(scope, receive, send)
                    return
            if scope["path"] in FULL_ACCESS_ONLY and not identity_of(scope).full:
                events.scope_denied("full_access_route", scope["path"], identity_of(scope))
                await error_response(403, f"{scope['path']} answers only tokens that may read every source")(
                    scope, receive, send
                )
                return
        await app(scope, receive, send)

    setattr(guarded, "state", app.state)  # noqa: B010 (build_app's callers read app.state)
    return guarded
