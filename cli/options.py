"""The options several commands share, each defined once with its help (sqlite-utils' shape: a command module names
the groups it takes, ``cli/commands/``), and the help's examples.

A group is a parent parser (argparse ``parents=``), so a flag's name, default and help read the same in every
command that takes it.  Where a command means something more by a shared flag (``refresh``'s policy defaults to
the one beside the sources file), it adds the flag itself with the shared wording (``policy_option``).  Only
``argparse`` and the embedding model's names (standard library only) are imported here: the command line must
start fast.
"""

from __future__ import annotations

import argparse
import os

from trustindex.schemas.embedding_model import BACKENDS, DEFAULT_BACKEND


def examples(*lines: str) -> str:
    """A help's closing section: the command lines given, one a line (tests/cli/test_cli_help.py checks them)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def policy_option(parser: argparse.ArgumentParser, default: str = "the built-in policy", role: str = "") -> None:
    """``--policy FILE``; ``default``: what a command reads without it; ``role``: what the command does with it."""
    parser.add_argument("--policy", metavar="FILE", help=f"policy.toml{role} (default: {default})")


def _group() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(add_help=False)


def _data(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data", default="data", metavar="DIR", help="the data directory (tables, snapshots, CURRENT); default: data"
    )


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of text")


def _snapshot(p: argparse.ArgumentParser) -> None:
    p.add_argument("--snapshot", metavar="ID", help="a snapshot id (default: the live one, named by CURRENT)")


def _sources(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sources",
        required=True,
        metavar="FILE",
        help="sources.toml: the repositories to index (the other configuration files default to beside it)",
    )


def _wait(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another writer of the data directory (default: fail at once)",
    )


def _build(p: argparse.ArgumentParser) -> None:
    """What the build commands (refresh, backfill) take: the sources, the embedding backend, waiting, tracebacks."""
    _sources(p)
    p.add_argument(
        "--backend",
        default=os.environ.get("TRUSTINDEX_EMBEDDER", DEFAULT_BACKEND),
        choices=BACKENDS,
        help=f"the embedding backend (default: $TRUSTINDEX_EMBEDDER, else {DEFAULT_BACKEND})",
    )
    _wait(p)
    # SUPPRESS: unless given here, the top-level --verbose (before the command) keeps its value.
    p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")


def _endpoint(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--endpoint",
        default=os.environ.get("AWS_ENDPOINT_URL"),
        help="S3-compatible endpoint for s3:// URIs, e.g. http://127.0.0.1:9000 (default: $AWS_ENDPOINT_URL)",
    )


def _replica(r: argparse.ArgumentParser) -> None:
    """What both servers (``serve``, ``mcp``) take to follow a snapshot source: pull, verify, freshness."""
    r.add_argument("--from", dest="source", metavar="URI", help="pull from an export target (directory or s3://...)")
    _endpoint(r)
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
    policy_option(r, "the built-in policy; reloaded when the file changes")


# the groups a command module names in its OPTIONS, in the order their flags show in its help
_GROUPS = {
    "data": _data,
    "json": _json,
    "policy": policy_option,
    "snapshot": _snapshot,
    "sources": _sources,
    "wait": _wait,
    "build": _build,
    "endpoint": _endpoint,
    "replica": _replica,
}
GROUPS = tuple(_GROUPS)


def shared_options() -> dict[str, argparse.ArgumentParser]:
    """A parent parser per group (made per ``build_parser`` call: argparse's parents are not shared state)."""
    out = {}
    for name, add in _GROUPS.items():
        out[name] = _group()
        add(out[name])
    return out
