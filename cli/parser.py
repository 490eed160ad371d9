"""The ``trustindex`` argument parser, assembled from one module per command (cli/commands/) over the options
they share (cli/options.py).

Each subcommand's ``--help`` ends with examples (tests/cli/test_cli_help.py checks every command's).  Only
``argparse``, the command modules and the embedding model's names (standard library only) are imported here: the
command line must start fast.
"""

from __future__ import annotations

import argparse

from trustindex.cli.commands import ALL, name_of
from trustindex.cli.options import examples, shared_options


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="trustindex",
        description="A trust-aware documentation index.",
        epilog=examples(
            "trustindex refresh --sources examples/sources.toml --data data",
            'trustindex query "How do I install the Compact compiler?" --data data --explain',
            "trustindex COMMAND --help",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--verbose", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    groups = shared_options()
    for command in ALL:
        about = command.ABOUT
        parser = sub.add_parser(
            name_of(command),
            help=about,
            description=about[0].upper() + about[1:] + ".",
            epilog=examples(*command.EXAMPLES),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[groups[group] for group in command.OPTIONS],
        )
        command.arguments(parser)
    return p
