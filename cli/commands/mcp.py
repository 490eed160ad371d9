"""``trustindex mcp``: an MCP server on standard input/output over the live snapshot (or an export target)."""

from __future__ import annotations

import os

from trustindex.cli.extras import require

ABOUT = "an MCP server (stdio) over the live snapshot"
EXAMPLES = (
    "trustindex mcp --data data --policy policy.toml",
    "trustindex mcp --from s3://bucket/prefix --trusted-key keys/signing.pub --max-snapshot-age 2d",
)
OPTIONS = ("data", "replica")


def arguments(m) -> None:
    m.add_argument(
        "--cache",
        default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "trustindex", "mcp"),
        metavar="DIR",
        help="where --from downloads snapshots and --trusted-key keeps its freshness marks "
        "(default: ~/.cache/trustindex/mcp)",
    )
    m.add_argument("--poll", type=float, default=5.0, metavar="SECONDS", help="how often --from looks at CURRENT")


def run(a) -> int:
    require("serve")
    from trustindex.cli.common import source_spec
    from trustindex.serve.mcp_server import serve

    serve(source_spec(a, a.cache), poll_seconds=a.poll)
    return 0
