"""One module per command (sqlite-utils' shape), each holding all of its command: ``ABOUT`` (one line, the
listing's and its description), ``EXAMPLES`` (its help's closing command lines), ``OPTIONS`` (the shared option
groups it takes, cli/options.py), ``arguments(parser)`` (its own flags) and ``run(args) -> int`` (the exit status).

A module imports what its command needs inside ``run``: building the parser imports only these modules and the
standard library, so ``trustindex query`` starts fast and the base install parses every command.
"""

from __future__ import annotations

from types import ModuleType

from trustindex.cli.commands import (
    backfill,
    calibrate,
    compilers,
    export,
    inspect,
    keys,
    mcp,
    policy,
    query,
    refresh,
    report,
    serve,
    snapshots,
    stats,
)

# in the order ``trustindex --help`` lists them
ALL: tuple[ModuleType, ...] = (
    refresh,
    backfill,
    query,
    compilers,
    policy,
    snapshots,
    report,
    inspect,
    stats,
    calibrate,
    mcp,
    serve,
    export,
    keys,
)


def name_of(command: ModuleType) -> str:
    """A command's name: its module's."""
    return command.__name__.rsplit(".", 1)[1]
