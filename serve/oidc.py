"""Identity from the company's SSO: ``serve --oidc-issuer URL --oidc-audience AUD`` validates a JWT bearer token
with PyJWT (signature against the issuer's JWKS, ``iss``, ``aud``, ``exp``, ``nbf``, ``iat``), and maps the values
of ``--oidc-scope-claim`` (e.g. ``groups``) to sources through the tokens file's ``[[group]]`` tables.

The JWKS comes from the issuer (``/.well-known/openid-configuration`` names its ``jwks_uri``; PyJWKClient caches
the set for 5 minutes and refetches at most every 30 s for an unknown key id) or, for an air-gapped site, from a
file (``--oidc-jwks FILE``, read again when it changes).  Only asymmetric algorithms are accepted (never ``none``
or an HMAC: a public key must not be usable as a shared secret).  A token checked once is kept until its ``exp``
(``VERIFIED_KEPT`` of them), so a client sending the same token pays for the signature once.  Each refusal has one
reason (``AuthFailure.reason``: the label of ``trustindex_auth_failures_total``) and one line for the client.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jwt

from trustindex.schemas.access import SourceScope
from trustindex.schemas.errors import TrustIndexError

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
DEFAULT_ALGORITHMS = ("RS256", "ES256", "EdDSA")
VERIFIED_KEPT = 4096
DISCOVERY_RETRY_S = 30.0
HTTP_TIMEOUT_S = 10.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class AuthFailure(Exception):
    """A request whose credentials are refused: ``reason`` a short label (metrics), the message one line."""

    def __init__(self, reason: str, message: str, status: int = 401):
        super().__init__(message)
        self.reason, self.status = reason, status


@dataclass(frozen=True)
class OidcSpec:
    """``serve --oidc-*`` as plain values (they reach every worker: serve/workers.py)."""

    issuer: str | None = None
    audience: str | None = None
    jwks_file: str | None = None
    scope_claim: str | None = None  # None: a valid token reads every source
    subject_claim: str = "sub"  # the name the audit log gives the caller
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    leeway_s: float = 30.0

    def check(self) -> None:
        if not self.issuer:
            if self.audience or self.jwks_file or self.scope_claim:
                raise TrustIndexError("--oidc-audience, --oidc-jwks and --oidc-scope-claim need --oidc-issuer URL")
            return
        if not self.audience:
            raise TrustIndexError("--oidc-issuer needs --oidc-audience AUD (the audience this server's tokens name)")
        parts = urlsplit(self.issuer)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
            raise TrustIndexError(f"--oidc-issuer {self.issuer}: must be https:// (http:// only on loopback)")
        bad = [a for a in self.algorithms if a not in ASYMMETRIC]
        if bad or not self.algorithms:
            raise TrustIndexError(f"--oidc-algorithm {', '.join(bad) or '(none)'}: allowed are {', '.join(ASYMMETRIC)}")
        if self.jwks_file and not Path(self.jwks_file).is_file():
            raise TrustIndexError(f"{self.jwks_file}: the --oidc-jwks file is not there")


@dataclass(frozen=True)
class Claims:
    """What a verified token says of its bearer: the audit name and the scope (None: every source)."""

    subject: str
    scope: SourceScope | None
    expires: float


class OidcVerifier:
    """Checks JWT bearer tokens for one issuer and audience (the module's docstring)."""

    def __init__(self, spec: OidcSpec, groups: dict[str, SourceScope]):
        spec.check()
        if spec.scope_claim and not groups:
            raise TrustIndexError("--oidc-scope-claim needs --tokens FILE with [[group]] tables to map its values")
        self.spec, self.groups = spec, groups
        self.keys: _JwksFile | _IssuerKeys = _JwksFile(Path(spec.jwks_file)) if spec.jwks_file else _IssuerKeys(spec)
        self._kept: OrderedDict[str, Claims] = OrderedDict()
        self._lock = threading.Lock()

    def kept(self, token: str) -> Claims | None:
        """A token verified before and not yet expired (no signature check, no I/O: safe on the event loop)."""
        with self._lock:
            claims = self._kept.get(token)
        if claims is not None and time.time() < claims.expires + self.spec.leeway_s:
            return claims
        return None

    def verify(self, token: str) -> Claims:
        """The token's claims, or ``AuthFailure`` with its one reason; may fetch the issuer's keys (blocking)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise AuthFailure("jwt_malformed", "the bearer token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in self.spec.algorithms:
            raise AuthFailure("jwt_algorithm", f"JWT algorithm {str(alg)[:20]!r} is not accepted here")
        key = self.keys.key(header.get("kid"), token)
        claims = self._decode(token, key)
        scope = self._scope(claims)
        subject = claims.get(self.spec.subject_claim)
        if not isinstance(subject, str) or not subject:
            raise AuthFailure(
                "jwt_missing_claim", f"the JWT has no {self.spec.subject_claim!r} claim to name its bearer"
            )
        verified = Claims(subject[:200], scope, float(claims["exp"]))
        with self._lock:
            self._kept[token] = verified
            while len(self._kept) > VERIFIED_KEPT:
                self._kept.popitem(last=False)
        return verified

    def _decode(self, token: str, key: Any) -> dict:
        s = self.spec
        try:
            return jwt.decode(
                token,
                key,
                algorithms=list(s.algorithms),
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthFailure("jwt_expired", "the JWT has expired (exp is in the past)") from None
        except jwt.InvalidAudienceError:
            raise AuthFailure(
                "jwt_wrong_audience", f"the JWT is not for this server (aud is not {s.audience!r})"
            ) from None
        except jwt.InvalidIssuerError:
            raise AuthFailure("jwt_wrong_issuer", f"the JWT was not issued by {s.issuer} (iss differs)") from None
        except jwt.InvalidSignatureError:
            raise AuthFailure(
                "jwt_bad_signature", "the JWT's signature does not verify (tampered or foreign)"
            ) from None
        except (jwt.ImmatureSignatureError, jwt.InvalidIssuedAtError):
            raise AuthFailure("jwt_not_yet_valid", "the JWT is not valid yet (nbf or iat is in the future)") from None
        except jwt.MissingRequiredClaimError as e:
            raise AuthFailure("jwt_missing_claim", f"the JWT lacks the {e.claim!r} claim") from None
        except jwt.InvalidTokenError as e:
            raise AuthFailure("jwt_invalid", f"the JWT is refused ({type(e).__name__})") from None

    def _scope(self, claims: dict) -> SourceScope | None:
        name = self.spec.scope_claim
        if not name:
            return None
        raw = claims.get(name)
        values = (
            raw.split()
            if isinstance(raw, str)
            else [v for v in raw if isinstance(v, str)]
            if isinstance(raw, list)
            else []
        )
        granted = [self.groups[v] for v in values if v in self.groups]
        if not granted:
            raise AuthFailure("no_group", f"none of the token's {name!r} values is granted any source here", 403)
        scope = SourceScope.union(granted)
        return None if scope.everything else scope


class _JwksFile:
    """The keys of a JWKS file, read again when its modification time or size changes."""

    def __init__(self, path: Path):
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._keys: jwt.PyJWKSet | None = None
        self._lock = threading.Lock()

    def key(self, kid: object, _token: str) -> jwt.PyJWK:
        with self._lock:
            try:
                st = os.stat(self.path)
                if self._keys is None or self._seen != (st.st_mtime_ns, st.st_size):
                    self._keys = jwt.PyJWKSet.from_json(self.path.read_text(encoding="utf-8"))
                    self._seen = (st.st_mtime_ns, st.st_size)
            except (OSError, ValueError, jwt.PyJWTError) as e:
                raise AuthFailure(
                    "jwks_unavailable", f"the JWKS file cannot be read ({type(e).__name__})", 503
                ) from None
            return _match(self._keys.keys, kid)


class _IssuerKeys:
    """The issuer's keys: its discovery document names the JWKS, which PyJWKClient fetches and caches."""

    def __init__(self, spec: OidcSpec):
        self.issuer = str(spec.issuer).rstrip("/")
        self._client: jwt.PyJWKClient | None = None
        self._failed_at = 0.0
        self._lock = threading.Lock()

    def key(self, kid: object, token: str) -> jwt.PyJWK:
        client = self._jwks_client()
        try:
            keys = client.get_signing_keys()
        except jwt.PyJWKClientError as e:
            raise AuthFailure(
                "jwks_unavailable", f"the issuer's keys cannot be fetched ({one_reason(e)})", 503
            ) from None
        try:
            return _match(keys, kid)
        except AuthFailure:
            if not isinstance(kid, str):
                raise
        try:  # a key id the cached set lacks: the issuer may have rotated (PyJWKClient refetches, with a cooldown)
            return client.get_signing_key(kid)
        except jwt.PyJWKClientConnectionError as e:
            raise AuthFailure(
                "jwks_unavailable", f"the issuer's keys cannot be fetched ({one_reason(e)})", 503
            ) from None
        except jwt.PyJWKClientError:
            raise AuthFailure("jwt_unknown_key", f"no key of the issuer has the JWT's key id {kid[:40]!r}") from None

    def _jwks_client(self) -> jwt.PyJWKClient:
        with self._lock:
            if self._client is not None:
                return self._client
            if time.monotonic() - self._failed_at < DISCOVERY_RETRY_S and self._failed_at:
                raise AuthFailure("jwks_unavailable", f"the issuer {self.issuer} did not answer; retrying soon", 503)
            try:
                doc = _get_json(f"{self.issuer}/.well-known/openid-configuration")
            except (OSError, ValueError) as e:
                self._failed_at = time.monotonic()
                raise AuthFailure(
                    "jwks_unavailable", f"the issuer's discovery document failed ({one_reason(e)})", 503
                ) from None
            if str(doc.get("issuer", "")).rstrip("/") != self.issuer or not isinstance(doc.get("jwks_uri"), str):
                self._failed_at = time.monotonic()
                raise AuthFailure(
                    "jwks_unavailable", "the issuer's discovery document names another issuer or no jwks_uri", 503
                )
            self._client = jwt.PyJWKClient(doc["jwks_uri"], cache_jwk_set=True, lifespan=300, timeout=HTTP_TIMEOUT_S)
            return self._client


def _match(keys: list[jwt.PyJWK], kid: object) -> jwt.PyJWK:
    """The key with the JWT's ``kid``; without a ``kid``, the only signing key there is."""
    signing = [k for k in keys if getattr(k, "public_key_use", None) in (None, "sig")]
    if kid is None and len(signing) == 1:
        return signing[0]
    for k in signing:
        if k.key_id == kid:
            return k
    raise AuthFailure("jwt_unknown_key", f"no key of the issuer has the JWT's key id {str(kid)[:40]!r}")


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as r:  # noqa: S310 (an operator-given https/loopback URL)
        doc = json.loads(r.read(1 << 20))
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


def one_reason(e: BaseException) -> str:
    return " ".join(str(e).split())[:160] or type(e).__name__
