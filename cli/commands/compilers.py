"""``trustindex compilers``: the compilers of compilers.toml listed, built or tried on one file."""

from __future__ import annotations

from trustindex.cli.extras import require

ABOUT = "list, build or try the compilers of compilers.toml"
EXAMPLES = (
    "trustindex compilers list --sources sources.toml --data data",
    "trustindex compilers check contract.compact --sources sources.toml --data data",
)
OPTIONS = ("sources", "data", "json")


def arguments(cm) -> None:
    cm.add_argument("action", choices=["list", "build", "check"], help="what to do")
    cm.add_argument("file", nargs="?", help="check: the .compact file to compile with each compiler")
    cm.add_argument("--compilers", metavar="FILE", help="default: compilers.toml beside the sources file")
    cm.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="check: wall-clock limit")


def run(a) -> int:
    require("build")
    from trustindex.cli.compilers_cmd import compilers_command

    return compilers_command(a)
