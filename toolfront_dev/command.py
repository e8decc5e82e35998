"""What a subcommand of ``toolfront`` is: a :class:`Command`, or a group of them (``keys create``).

Kept apart from cli.py so that the modules defining commands need not import the entry point.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: its name, one-line help, argument setup and the function that runs it."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def command_group(name: str, help: str, actions: Sequence[Command]) -> Command:
    """A command whose first argument picks one of ``actions`` (``toolfront keys create ...``).

    Args:
        name: the group's name (``keys``).
        help: its one-line help.
        actions: the commands it groups; each becomes ``toolfront <name> <action.name>``.
    """

    def configure(parser: argparse.ArgumentParser) -> None:
        subparsers = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        for action in actions:
            sub = subparsers.add_parser(action.name, help=action.help, description=action.help)
            action.configure(sub)
            sub.set_defaults(run_action=action.run)

    return Command(name=name, help=help, configure=configure, run=_run_action)


def _run_action(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.run_action
    return run(args)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """``--json``: print a JSON document instead of text meant for people."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
