"""``trustindex serve``: the HTTP server (the query API, /mcp, /metrics) over a data directory or an export target;
its access options become typed specs in cli/serve_options.py."""

from __future__ import annotations

import os

from trustindex.cli.extras import require
from trustindex.schemas.errors import TrustIndexError

ABOUT = "an HTTP server (the query API, /mcp, /metrics) over a data directory or an export target"
EXAMPLES = (
    "trustindex serve --data data --port 8080",
    "trustindex serve --data data --workers 2",
    "trustindex serve --from s3://bucket/prefix --endpoint http://127.0.0.1:9000 --cache /var/cache/ti",
    "trustindex serve --from /srv/trustindex/data --trusted-key keys/signing.pub --max-snapshot-age 2d",
)
OPTIONS = ("data", "replica")


def arguments(s) -> None:
    s.add_argument(
        "--cache",
        default="serve-cache",
        metavar="DIR",
        help="where --from downloads snapshots and --trusted-key keeps its freshness marks",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to bind (non-loopback needs a token)")
    s.add_argument("--port", type=int, default=8080, help="port to bind (default 8080)")
    s.add_argument("--token-file", metavar="FILE", help="bearer tokens, one a line (also $TRUSTINDEX_TOKENS)")
    s.add_argument("--poll", type=float, default=5.0, metavar="SECONDS", help="how often to look at CURRENT")
    s.add_argument("--grace", type=float, default=600.0, metavar="SECONDS", help="keep old cached snapshots this long")
    s.add_argument(
        "--query-cache",
        type=int,
        metavar="N",
        help="keep the vectors of the N most recent distinct queries (0: embed every query; default 1024)",
    )
    _limits(s)
    s.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host (and Origin) name clients may use besides the loopback names ('*': any; repeatable)",
    )
    s.add_argument("--keep-retired", type=int, default=2, metavar="N", help="cached old snapshots kept at most")
    s.add_argument(
        "--cache-max-bytes", type=int, default=0, metavar="BYTES", help="cap on old cached snapshots' bytes (0: none)"
    )
    s.add_argument(
        "--body-timeout", type=float, default=10.0, metavar="SECONDS", help="time a client has to send its body"
    )
    _access(s)


def _limits(s) -> None:
    """What one request (and one worker) may ask for: ``ServeLimits``."""
    s.add_argument("--max-k", type=int, default=100, help="the largest k a request may ask for")
    s.add_argument("--max-batch", type=int, default=64, help="the most requests in one batch")
    s.add_argument("--max-batch-hits", type=int, default=1000, help="the most hits in one batch (the sum of its k)")
    s.add_argument("--max-body", type=int, default=1 << 20, metavar="BYTES", help="the largest request body")
    s.add_argument("--max-concurrency", type=int, default=64, help="requests at once before 503 (per worker)")
    s.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port, each a full replica (about one per core; docs/serving.md)",
    )


def _access(s) -> None:
    """The access options: scoped tokens, identity from SSO, the audit log (docs/serving.md, Access)."""
    g = s.add_argument_group("access: scoped tokens, SSO and the audit log (docs/serving.md)")
    g.add_argument(
        "--tokens", dest="tokens_file", metavar="FILE", help="[[token]] and [[group]] tables: sources per token"
    )
    g.add_argument("--oidc-issuer", metavar="URL", help="accept JWTs from this OpenID Connect issuer")
    g.add_argument("--oidc-audience", metavar="AUD", help="the audience (aud) the issuer's tokens must name")
    g.add_argument("--oidc-jwks", metavar="FILE", help="the issuer's keys from a JWKS file (air-gapped sites)")
    g.add_argument("--oidc-scope-claim", metavar="CLAIM", help="claim whose values name [[group]] tables (e.g. groups)")
    g.add_argument("--oidc-subject-claim", default="sub", metavar="CLAIM", help="claim naming the caller (default sub)")
    g.add_argument(
        "--oidc-algorithm",
        action="append",
        dest="oidc_algorithms",
        metavar="ALG",
        help="accepted JWT algorithm (repeatable; default RS256, ES256, EdDSA)",
    )
    g.add_argument("--audit-log", metavar="FILE", help="one JSON line per request: who, what, which passages")
    g.add_argument("--audit-hash-queries", action="store_true", help="write each query's sha256 instead of its text")
    g.add_argument(
        "--audit-max-bytes", type=int, default=64 << 20, metavar="BYTES", help="rotate the audit log at this size"
    )
    g.add_argument("--audit-backups", type=int, default=5, metavar="N", help="rotated audit logs kept")
    g.add_argument(
        "--audit-queue", type=int, default=10_000, metavar="N", help="audit lines waiting to be written at most"
    )


def run(a) -> int:
    require("serve")
    from trustindex.cli.common import source_spec
    from trustindex.cli.serve_options import access_options
    from trustindex.serve.http_app import ServeConfig, ServeLimits, load_tokens
    from trustindex.serve.workers import ServeSetup, serve

    if a.workers < 1:
        raise TrustIndexError(f"--workers must be at least 1, got {a.workers}")
    limits = ServeLimits(
        max_body_bytes=a.max_body,
        max_k=a.max_k,
        max_batch=a.max_batch,
        max_batch_hits=a.max_batch_hits,
        max_concurrency=a.max_concurrency,
    )
    tokens = load_tokens(a.token_file, os.environ.get("TRUSTINDEX_TOKENS"))
    config = ServeConfig(
        host=a.host,
        port=a.port,
        limits=limits,
        tokens=tokens,
        poll_seconds=a.poll,
        allowed_hosts=tuple(a.allow_host),
        body_timeout=a.body_timeout,
        **access_options(a),
    )
    config.check()
    serve(ServeSetup(config=config, source=source_spec(a, a.cache), workers=a.workers))
    return 0
