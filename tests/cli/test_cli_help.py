"""The command line's help: every command (one module each, cli/commands/) shows an example that parses and documents
every flag; a shared option reads the same in every command that takes it; the build commands take --verbose after
the command name as well as before it."""

from __future__ import annotations

import argparse
import shlex

import pytest

from trustindex.cli.commands import ALL, name_of
from trustindex.cli.main import COMMANDS, main
from trustindex.cli.options import shared_options
from trustindex.cli.parser import build_parser


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_subcommand_has_a_handler():
    assert set(_subcommands()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_help_shows_an_example_and_explains_every_flag(name, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    examples = out.split("examples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith(f"  trustindex {name}") for line in examples if line.strip())
    undocumented = [a.option_strings or a.dest for a in _subcommands()[name]._actions if not a.help]
    assert undocumented == []


@pytest.mark.parametrize("command", ALL, ids=name_of)
def test_every_example_is_a_command_line_that_parses(command):
    assert command.EXAMPLES, f"{name_of(command)} has no example"
    for line in command.EXAMPLES:
        argv = shlex.split(line)
        assert argv[:2] == ["trustindex", name_of(command)]
        assert build_parser().parse_args(argv[1:]).command == name_of(command)


def test_a_shared_option_reads_the_same_in_every_command_that_takes_it():
    shared = {o: a.help for g in shared_options().values() for a in g._actions for o in a.option_strings}
    seen: dict[str, set[str]] = {}
    for parser in _subcommands().values():
        for action in parser._actions:
            for option in action.option_strings:
                if option in shared and option != "--policy":  # --policy says what each command reads without it
                    seen.setdefault(option, set()).add(action.help)
    assert {"--data", "--json", "--sources", "--wait", "--verbose", "--endpoint"} <= set(seen)
    assert {o: helps for o, helps in seen.items() if helps != {shared[o]}} == {}


def test_top_level_help_shows_examples(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "examples:\n  trustindex refresh --sources" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["refresh", "backfill"])
def test_verbose_after_the_command_shows_the_traceback_like_before_it(command, tmp_path, capsys):
    missing = str(tmp_path / "missing-sources.toml")
    argv = [command, "--sources", missing, "--data", str(tmp_path / "data")]
    if command == "backfill":
        argv += ["--as-of", "2026-01-01"]
    assert main(argv) == 1
    quiet = capsys.readouterr().err
    assert "Traceback" not in quiet and "missing-sources.toml" in quiet
    for verbose_argv in (["--verbose", *argv], [command, "--verbose", *argv[1:]]):
        assert main(verbose_argv) == 1
        err = capsys.readouterr().err
        assert "Traceback (most recent call last)" in err and err.rstrip().endswith(quiet.rstrip())
