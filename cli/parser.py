"""The ``trustindex`` argument parser: every command's flags, help text and example.

A flag several commands take is declared once, in a parent parser (argparse ``parents=``), so its
name, default and help read the same everywhere.  Each subcommand's ``--help`` ends with examples.
Only ``argparse`` and the embedding model's names (standard library only) are imported here: the command
line must start fast.
"""

from __future__ import annotations

import argparse
import os

from trustindex.schemas.embedding_model import BACKENDS, DEFAULT_BACKEND


def _parent() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(add_help=False)


def _shared_flags() -> dict[str, argparse.ArgumentParser]:
    """Parent parsers by flag group; a subcommand lists the groups it takes."""
    data = _parent()
    data.add_argument(
        "--data", default="data", metavar="DIR", help="the data directory (tables, snapshots, CURRENT); default: data"
    )
    as_json = _parent()
    as_json.add_argument("--json", action="store_true", help="print the result as JSON instead of text")
    policy = _parent()
    policy.add_argument("--policy", metavar="FILE", help="policy.toml (default: the built-in policy)")
    snapshot = _parent()
    snapshot.add_argument("--snapshot", metavar="ID", help="a snapshot id (default: the live one, named by CURRENT)")
    build = _parent()
    build.add_argument("--sources", required=True, metavar="FILE", help="sources.toml: the repositories to index")
    build.add_argument(
        "--backend",
        default=os.environ.get("TRUSTINDEX_EMBEDDER", DEFAULT_BACKEND),
        choices=BACKENDS,
        help=f"the embedding backend (default: $TRUSTINDEX_EMBEDDER, else {DEFAULT_BACKEND})",
    )
    build.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another writer of the data directory (default: fail at once)",
    )
    # SUPPRESS: unless given here, the top-level --verbose (before the command) keeps its value.
    build.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return {
        "data": data,
        "json": as_json,
        "policy": policy,
        "snapshot": snapshot,
        "build": build,
        "replica": _replica_flags(),
    }


def _replica_flags() -> argparse.ArgumentParser:
    """What both servers (``serve``, ``mcp``) take to follow a snapshot source: pull, verify, freshness."""
    r = _parent()
    r.add_argument("--from", dest="source", metavar="URI", help="pull from an export target (directory or s3://...)")
    r.add_argument(
        "--endpoint", default=os.environ.get("AWS_ENDPOINT_URL"), help="S3-compatible endpoint for --from s3://"
    )
    r.add_argument(
        "--trusted-key",
        action="append",
        default=[],
        metavar="FILE",
        help="serve only snapshots signed by this public key, never one older than the newest verified "
        "(repeatable: key rotation; docs/serving.md)",
    )
    r.add_argument(
        "--max-snapshot-age",
        metavar="DURATION",
        help="past this age (12h, 7d) since the snapshot was signed (or built, if unsigned), answers carry a warning "
        "and /readyz fails",
    )
    r.add_argument("--policy", metavar="FILE", help="policy.toml (reloaded when it changes)")
    return r


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="trustindex",
        description="A trust-aware documentation index.",
        epilog=_examples(
            "trustindex refresh --sources examples/sources.toml --data data",
            'trustindex query "How do I install the Compact compiler?" --data data --explain',
            "trustindex COMMAND --help",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--verbose", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    flags = _shared_flags()

    def command(name: str, about: str, examples: list[str], takes: list[str]) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=about,
            description=about[0].upper() + about[1:] + ".",
            epilog=_examples(*examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[flags[group] for group in takes],
        )

    r = command(
        "refresh",
        "crawl, extract, index, publish",
        [
            "trustindex refresh --sources examples/sources.toml --data data",
            "trustindex refresh --sources sources.toml --task-runner dask --dask-address tcp://127.0.0.1:8786",
        ],
        ["build", "data", "json"],
    )
    r.add_argument(
        "--policy", metavar="FILE", help="policy.toml (default: beside the sources file, if present; else built-in)"
    )
    r.add_argument("--quiet", action="store_true", help="print nothing but errors (and no progress bars)")
    r.add_argument("--identities", metavar="FILE", help="default: identities.toml beside the sources file")
    r.add_argument("--compilers", metavar="FILE", help="compilers.toml (default: beside the sources file, if present)")
    r.add_argument("--ledger", metavar="FILE", help="verifications.toml (default: beside the sources file, if present)")
    r.add_argument("--force", action="store_true", help="publish even past the safety gate (and say so)")
    r.add_argument(
        "--task-runner",
        choices=["threads", "dask"],
        default="threads",
        help="dask: the texts to embed go in content-hash shards to an existing Dask cluster (--dask-address); "
        "its workers need the package, their own encoder cache and the run's Prefect API, no shared filesystem",
    )
    r.add_argument("--dask-address", metavar="ADDR", help="the Dask scheduler, e.g. tcp://127.0.0.1:8786")
    r.add_argument(
        "--dask-sources",
        action="store_true",
        help="with --task-runner dask: run the per-source tasks (fetch, extract) on the cluster too; every worker "
        "then needs the data directory at the same path (a shared filesystem)",
    )
    r.add_argument(
        "--max-sources",
        metavar="N",
        help="source tasks run at once, the rest queued (a number or 'all'; default: $TRUSTINDEX_SOURCES_AT_ONCE, "
        "else the usable cores)",
    )

    b = command(
        "backfill",
        "build the index as the sources stood at a date or commits",
        [
            "trustindex backfill --sources sources.toml --as-of 2026-06-01 --data data",
            "trustindex backfill --sources sources.toml --commit midnight-docs=COMMIT_SHA --publish",
        ],
        ["build", "data", "json"],
    )
    b.add_argument("--quiet", action="store_true", help="no progress bars")
    b.add_argument("--as-of", metavar="DATE", help="each source as it stood on this date (YYYY-MM-DD)")
    b.add_argument("--commit", action="append", metavar="SOURCE=SHA", help="pin one source to a commit (repeatable)")
    b.add_argument("--publish", action="store_true", help="also move CURRENT to the backfilled snapshot")
    b.add_argument("--force", action="store_true", help="with --publish: publish even past the safety gate")

    q = command(
        "query",
        "ask the live snapshot",
        [
            'trustindex query "How do I install the Compact compiler?" --data data --explain',
            'trustindex query "counter contract" --target compact-language=0.23 --strict --json',
            "trustindex query --batch queries.jsonl --data data",
        ],
        ["data", "snapshot", "policy", "json"],
    )
    q.add_argument("text", nargs="?", help="the question")
    q.add_argument(
        "--batch", metavar="FILE", help='JSON Lines of {"query": ...} objects; prints one JSON line per query'
    )
    q.add_argument("--k", type=int, default=5, help="how many passages to return (default: 5)")
    q.add_argument(
        "--target",
        action="append",
        metavar="COMPONENT=VERSION_OR_RANGE",
        help="the version the answer must fit (repeatable)",
    )
    q.add_argument("--also", action="append", metavar="TEXT", help="another phrasing of the same question")
    q.add_argument(
        "--strict",
        action="store_true",
        help="keep only passages that satisfy every --target (default: drop breaking ones, rank near misses lower)",
    )
    q.add_argument("--explain", action="store_true", help="show each passage's trust factors")

    cm = command(
        "compilers",
        "list, build or try the compilers of compilers.toml",
        [
            "trustindex compilers list --sources sources.toml --data data",
            "trustindex compilers check contract.compact --sources sources.toml --data data",
        ],
        ["data", "json"],
    )
    cm.add_argument("action", choices=["list", "build", "check"], help="what to do")
    cm.add_argument("file", nargs="?", help="check: the .compact file to compile with each compiler")
    cm.add_argument("--sources", required=True, metavar="FILE", help="sources.toml (compilers.toml is beside it)")
    cm.add_argument("--compilers", metavar="FILE", help="default: compilers.toml beside the sources file")
    cm.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="check: wall-clock limit")

    po = command(
        "policy",
        "show the policy in force",
        ["trustindex policy --show", "trustindex policy --show --policy examples/policy.toml"],
        ["policy"],
    )
    po.add_argument("--show", action="store_true", required=True, help="print the policy as TOML")

    s = command(
        "snapshots",
        "list|show|verify|rollback|gc",
        ["trustindex snapshots list --data data", "trustindex snapshots rollback 0123456789abcdef --data data"],
        ["data", "policy", "json"],
    )
    s.add_argument("action", choices=["list", "show", "verify", "rollback", "gc"], help="what to do")
    s.add_argument("snapshot_id", nargs="?", help="the snapshot (default: the live one; rollback: the previous one)")
    s.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="rollback/gc: wait for a writer")

    rp = command(
        "report",
        "what the live snapshot's run ingested, skipped, failed",
        ["trustindex report --data data", "trustindex report --html report.html --data data"],
        ["data", "json", "policy"],
    )
    rp.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report with plots")

    i = command(
        "inspect",
        "the evidence behind one document",
        ["trustindex inspect --source midnight-docs --path docs/guides/proof-server.md --json"],
        ["data", "json", "policy"],
    )
    i.add_argument("--source", required=True, help="the source's name in sources.toml")
    i.add_argument("--path", required=True, help="the document's path in that source's repository")

    command("stats", "per-source evidence counts", ["trustindex stats --data data --json"], ["data", "json"])

    c = command(
        "calibrate",
        "fit answer confidence (and the match tiers) from judged queries; report its calibration on held-out ones",
        [
            "trustindex calibrate --judged judged.jsonl --data data --out policy.toml",
            "trustindex calibrate --judged in_domain.jsonl --judged off_topic.jsonl --split dev --html cal.html",
        ],
        ["data", "snapshot", "json"],
    )
    c.add_argument(
        "--judged",
        required=True,
        action="append",
        metavar="FILE.jsonl",
        help='judged queries, one JSON object a line: {"id", "query", "relevant": {path: grade}} (no relevant '
        'path: off-topic; optional "kind": off-topic | near-domain); repeat for several files',
    )
    c.add_argument(
        "--split",
        choices=("dev", "test"),
        help="fit on this half of the fixed id-hashed dev/test split and report the other (default: fit on all, "
        "report 5-fold cross-validation)",
    )
    c.add_argument(
        "--min-grade",
        type=int,
        choices=(1, 2),
        default=1,
        help="the grade a top hit's page needs to count as relevant (default 1: partly answers counts)",
    )
    c.add_argument("--isotonic", action="store_true", help="follow the logistic fit with an isotonic map")
    c.add_argument(
        "--features",
        metavar="A,B,...",
        help="the answer signals to fit on (default: best_cosine,page_margin,term_coverage,top_page_lexical_rr; "
        "all: also channels_agree,lexical_strength)",
    )
    c.add_argument("--html", metavar="OUT.html", help="also write an HTML page with the reliability diagram")
    c.add_argument("--policy", metavar="FILE", help="the policy to start from (default: built-in)")
    c.add_argument("--out", help="where to write the calibrated policy (default: --policy, else ./policy.toml)")

    m = command(
        "mcp",
        "an MCP server (stdio) over the live snapshot",
        [
            "trustindex mcp --data data --policy policy.toml",
            "trustindex mcp --from s3://bucket/prefix --trusted-key keys/signing.pub --max-snapshot-age 2d",
        ],
        ["data", "replica"],
    )
    m.add_argument(
        "--cache",
        default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "trustindex", "mcp"),
        metavar="DIR",
        help="where --from downloads snapshots and --trusted-key keeps its freshness marks "
        "(default: ~/.cache/trustindex/mcp)",
    )
    m.add_argument("--poll", type=float, default=5.0, metavar="SECONDS", help="how often --from looks at CURRENT")

    s = command(
        "serve",
        "an HTTP server (the query API, /mcp, /metrics) over a data directory or an export target",
        [
            "trustindex serve --data data --port 8080",
            "trustindex serve --data data --workers 2",
            "trustindex serve --from s3://bucket/prefix --endpoint http://127.0.0.1:9000 --cache /var/cache/ti",
            "trustindex serve --from /srv/trustindex/data --trusted-key keys/signing.pub --max-snapshot-age 2d",
        ],
        ["data", "replica"],
    )
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
    _access_options(s)

    e = command(
        "export",
        "copy a snapshot to a serving tier (path or s3://bucket/prefix)",
        [
            "trustindex export 0123456789abcdef --to /srv/trustindex/data --data data",
            "trustindex export 0123456789abcdef --to s3://bucket/prefix --endpoint http://127.0.0.1:9000",
            "trustindex export current --to /srv/trustindex/data --sign-key keys/signing.key --valid-for 7d",
        ],
        ["data", "json"],
    )
    e.add_argument("snapshot_id", help="the snapshot to copy")
    e.add_argument("--to", required=True, metavar="URI", help="a directory or s3://bucket/prefix")
    e.add_argument(
        "--endpoint",
        default=os.environ.get("AWS_ENDPOINT_URL"),
        help="S3-compatible endpoint, e.g. http://127.0.0.1:9000",
    )
    e.add_argument("--sign-key", metavar="FILE", help="sign the manifest with this Ed25519 key (`keys generate`)")
    e.add_argument(
        "--valid-for",
        metavar="DURATION",
        help="signed expiry (12h, 7d): past it replicas stop being ready until the target is exported again",
    )

    k = command(
        "keys",
        "generate the Ed25519 key pair that signs exports",
        ["trustindex keys generate --out keys/"],
        [],
    )
    k.add_argument("action", choices=["generate"], help="what to do")
    k.add_argument("--out", required=True, metavar="DIR", help="writes DIR/signing.key (mode 0600) and signing.pub")
    return p


def _access_options(s) -> None:
    """``serve``'s access options: scoped tokens, identity from SSO, the audit log (docs/serving.md, Access)."""
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
