"""The ``trustindex`` command: parse (cli/parser.py), run the command's module (cli/commands/), turn errors into
one line and an exit status.  Build commands import Prefect and the model lazily, so ``query`` and ``snapshots``
start fast and run in the base install; a command that needs an extra says which one (``cli/extras.py``)."""

from __future__ import annotations

import sys
import traceback

from trustindex.cli.commands import ALL, name_of
from trustindex.cli.parser import build_parser
from trustindex.schemas.errors import TrustIndexError

COMMANDS = {name_of(command): command.run for command in ALL}  # a command's name -> its run(args) -> exit status


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TrustIndexError as e:
        if args.verbose:
            traceback.print_exc()
        print(f"trustindex {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: still one line, with the way to see more
        if args.verbose:
            traceback.print_exc()
        else:
            print(
                f"trustindex {args.command}: internal error: {type(e).__name__}: {e} (run with --verbose for "
                f"the traceback)",
                file=sys.stderr,
            )
        return 70


if __name__ == "__main__":
    sys.exit(main())
