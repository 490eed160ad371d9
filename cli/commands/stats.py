"""``trustindex stats``: per-source evidence counts of the live snapshot (cli/inspect_cmd.py)."""

from __future__ import annotations

from trustindex.cli.extras import require

ABOUT = "per-source evidence counts"
EXAMPLES = ("trustindex stats --data data --json",)
OPTIONS = ("data", "json")


def arguments(_parser) -> None:
    """No flags of its own."""


def run(a) -> int:
    require("build")
    from trustindex.cli.inspect_cmd import stats

    return stats(a)
