"""``trustindex inspect``: the evidence behind one document of the live snapshot (cli/inspect_cmd.py)."""

from __future__ import annotations

from trustindex.cli.extras import require

ABOUT = "the evidence behind one document"
EXAMPLES = ("trustindex inspect --source midnight-docs --path docs/guides/proof-server.md --json",)
OPTIONS = ("data", "json", "policy")


def arguments(i) -> None:
    i.add_argument("--source", required=True, help="the source's name in sources.toml")
    i.add_argument("--path", required=True, help="the document's path in that source's repository")


def run(a) -> int:
    require("build")
    from trustindex.cli.inspect_cmd import inspect

    return inspect(a)
