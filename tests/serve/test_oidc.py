"""Identity from the company's SSO (issue 44): ``serve --oidc-issuer --oidc-audience --oidc-scope-claim groups``
against a real OpenID Connect issuer on loopback (discovery document and JWKS over HTTP, keys generated here with
``cryptography``, tokens signed with PyJWT).  A token of the right group sees its group's sources; expired,
wrong-audience, wrong-issuer, tampered, unknown-key and group-less tokens are refused with one reason each, counted
in ``/metrics``; ``--oidc-jwks FILE`` serves an air-gapped site with the issuer unreachable."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.kits.scopekit import PRIVATE, PRIVATE_A, PUBLIC, build_two_sources
from tests.kits.servekit import Running
from trustindex.serve.access import AccessSpec
from trustindex.serve.http_app import ServeConfig
from trustindex.serve.live import DataDirSource, SnapshotHolder
from trustindex.serve.oidc import OidcSpec

AUDIENCE = "trustindex-test"
GROUPS = f'[[group]]\nname = "docs-readers"\nsources = ["{PUBLIC}"]\n\n[[group]]\nname = "platform"\nsources = ["*"]\n'


class Issuer:
    """An OpenID Connect issuer on loopback: its discovery document, its JWKS (one RSA and one P-256 key) and the
    private keys to sign with."""

    def __init__(self):
        self.keys = {"rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.keys["ec-1"] = ec.generate_private_key(ec.SECP256R1())
        self.jwks_fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks.json"}
                elif self.path == "/jwks.json":
                    issuer.jwks_fetches += 1
                    body = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args):
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def jwks(self) -> dict:
        out = []
        for kid, key in self.keys.items():
            algo = jwt.algorithms.RSAAlgorithm if kid.startswith("rsa") else jwt.algorithms.ECAlgorithm
            jwk = json.loads(algo.to_jwk(key.public_key()))
            out.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256" if kid.startswith("rsa") else "ES256"})
        return {"keys": out}

    def token(self, kid: str = "rsa-1", key=None, **claims) -> str:
        now = int(time.time())
        body = {"iss": self.url, "aud": AUDIENCE, "sub": "ada@example.org", "iat": now, "nbf": now, "exp": now + 600}
        body.update(claims)
        alg = "RS256" if kid.startswith("rsa") else "ES256"
        return jwt.encode(body, key or self.keys[kid], algorithm=alg, headers={"kid": kid})

    def close(self):
        self.http.shutdown()


@pytest.fixture(scope="module")
def issuer():
    i = Issuer()
    yield i
    i.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from trustindex.encoder.factory import make_embedder
    from trustindex.schemas.embedding_model import Backend, encoder_cache_dir

    root = tmp_path_factory.mktemp("oidc")
    build_two_sources(root / "data", PRIVATE_A, make_embedder(Backend.ONNX_INT8, cache_dir=encoder_cache_dir(root)))
    (root / "groups.toml").write_text(GROUPS, encoding="utf-8")
    return root


def serving(data, oidc: OidcSpec) -> Running:
    config = ServeConfig(access=AccessSpec(tokens_file=str(data / "groups.toml"), oidc=oidc))
    return Running(SnapshotHolder(DataDirSource(data / "data")), config)


@pytest.fixture(scope="module")
def server(data, issuer):
    with serving(data, OidcSpec(issuer=issuer.url, audience=AUDIENCE, scope_claim="groups")) as running:
        yield running


def get(server, path: str, token: str) -> httpx.Response:
    return httpx.get(f"{server.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=60)


def sources(server, token: str) -> set[str]:
    r = get(server, "/v1/sources", token)
    assert r.status_code == 200, r.text
    return {s["source"] for s in r.json()["sources"]}


def test_a_token_of_the_right_group_sees_its_sources(server, issuer):
    assert sources(server, issuer.token(groups=["docs-readers"])) == {PUBLIC}
    assert sources(server, issuer.token(groups=["platform", "docs-readers"])) == {PUBLIC, PRIVATE}
    assert sources(server, issuer.token(kid="ec-1", groups=["docs-readers"])) == {PUBLIC}  # an ES256 key too
    reader = issuer.token(groups=["docs-readers"])
    hits = httpx.post(
        f"{server.url}/v1/search",
        json={"query": "Nightjar staff install the compiler on the build farm", "k": 10},
        headers={"Authorization": f"Bearer {reader}"},
        timeout=60,
    ).json()["hits"]
    assert hits and {h["provenance"]["source"] for h in hits} == {PUBLIC}
    fetched = issuer.jwks_fetches
    for _ in range(3):  # verified once, then kept until it expires: no new key fetch, no new signature check
        assert sources(server, reader) == {PUBLIC}
    assert issuer.jwks_fetches == fetched


def tampered(token: str) -> str:
    """The token with its payload's group changed and its signature kept."""
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["groups"] = ["platform"]
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


def test_bad_tokens_are_refused_with_one_reason_each_and_counted(server, issuer):
    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    cases = {
        "jwt_expired": (issuer.token(groups=["platform"], iat=now - 7200, nbf=now - 7200, exp=now - 3600), 401),
        "jwt_wrong_audience": (issuer.token(groups=["platform"], aud="another-service"), 401),
        "jwt_wrong_issuer": (issuer.token(groups=["platform"], iss="https://evil.example"), 401),
        "jwt_bad_signature": (tampered(issuer.token(groups=["docs-readers"])), 401),
        "jwt_not_yet_valid": (issuer.token(groups=["platform"], nbf=now + 3600), 401),
        "jwt_unknown_key": (issuer.token(kid="rsa-9", key=foreign, groups=["platform"]), 401),
        "jwt_malformed": ("eyJhbGciOi.not-a.jwt", 401),
        "no_group": (issuer.token(groups=["interns"]), 403),
    }
    admin = issuer.token(groups=["platform"])
    before = get(server, "/metrics", admin).text
    answers = {reason: get(server, "/v1/sources", token) for reason, (token, _status) in cases.items()}
    after = get(server, "/metrics", admin).text
    for reason, r in answers.items():
        assert r.status_code == cases[reason][1], (reason, r.text)
        assert "\n" not in r.json()["error"] and "hits" not in r.text
        if r.status_code == 401:
            assert f'error_description="{reason}"' in r.headers["www-authenticate"]
        metric = "trustindex_scope_denials_total" if r.status_code == 403 else "trustindex_auth_failures_total"
        line = f'{metric}{{reason="{reason}"}}'
        assert count(after, line) == count(before, line) + 1, reason
    assert len({r.json()["error"] for r in answers.values()}) == len(cases)  # one clear reason each
    assert (
        "expired" in answers["jwt_expired"].json()["error"]
        and AUDIENCE in answers["jwt_wrong_audience"].json()["error"]
    )


def count(metrics: str, prefix: str) -> float:
    return next((float(x.rsplit(" ", 1)[1]) for x in metrics.splitlines() if x.startswith(prefix)), 0.0)


def test_an_unsigned_token_is_refused(server, issuer):
    unsigned = jwt.encode(
        {"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60, "groups": ["platform"]},
        None,
        algorithm="none",
    )
    r = get(server, "/v1/sources", unsigned)
    assert r.status_code == 401 and 'error_description="jwt_algorithm"' in r.headers["www-authenticate"]


def test_a_jwks_file_serves_an_air_gapped_site(data, issuer, tmp_path):
    """--oidc-jwks FILE: the issuer's URL only names the issuer (nothing listens there); the keys come from the file,
    read again when it changes (a rotated key)."""
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(issuer.jwks()), encoding="utf-8")
    closed = "https://sso.invalid"
    spec = OidcSpec(issuer=closed, audience=AUDIENCE, jwks_file=str(jwks), scope_claim="groups")
    with serving(data, spec) as running:
        assert sources(running, issuer.token(groups=["docs-readers"], iss=closed)) == {PUBLIC}
        rotated = ec.generate_private_key(ec.SECP256R1())
        token = jwt.encode(
            {"iss": closed, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60, "groups": ["platform"]},
            rotated,
            algorithm="ES256",
            headers={"kid": "ec-2"},
        )
        assert get(running, "/v1/sources", token).status_code == 401
        issuer.keys["ec-2"] = rotated
        jwks.write_text(json.dumps(issuer.jwks()), encoding="utf-8")
        assert sources(running, token) == {PUBLIC, PRIVATE}
        del issuer.keys["ec-2"]


def test_oidc_options_are_checked_before_the_server_starts(tmp_path):
    from trustindex.schemas.errors import TrustIndexError
    from trustindex.serve.access import Authenticator

    bad = {
        "needs --oidc-audience": OidcSpec(issuer="https://sso.example"),
        "must be https": OidcSpec(issuer="http://sso.example", audience="a"),
        "allowed are": OidcSpec(issuer="https://sso.example", audience="a", algorithms=("HS256",)),
        "need --oidc-issuer": OidcSpec(audience="a"),
    }
    for words, spec in bad.items():
        with pytest.raises(TrustIndexError, match=words):
            spec.check()
    with pytest.raises(TrustIndexError, match="needs --tokens FILE with"):
        Authenticator((), AccessSpec(oidc=OidcSpec(issuer="https://sso.example", audience="a", scope_claim="groups")))
