"""``toolfront tools list``: the tools the code serves, read from the families and core (no stack
needed)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolfront.errors import ToolfrontError
from toolfront.tools.system import system_manifest
from toolfront_dev.command import Command, add_json_flag, command_group
from toolfront_dev.errors import CommandError
from toolfront_dev.families import FUNCTIONS_DIR, build_registry
from toolfront_dev.output import print_json, print_table

TOOL_FIELDS = ("name", "audience", "scope", "permission", "danger", "title")


def add_project_argument(parser: argparse.ArgumentParser) -> None:
    """``--project DIR``: the project whose code a command reads."""
    parser.add_argument(
        "--project",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="folder holding functions/ (default: the current directory)",
    )


def declared_tools(project: Path) -> list[dict[str, Any]]:
    """The manifest entries of every tool the project's families declare, in manifest order.

    Raises:
        CommandError: the folder has no functions/ (an invalid tool is ignored with a warning, as at
            run time).
    """
    if not (project / FUNCTIONS_DIR).is_dir():
        raise CommandError(
            f"no {FUNCTIONS_DIR}/ folder in {project.resolve()}: run from the project or pass --project"
        )
    try:
        tools: list[dict[str, Any]] = build_registry(project).manifest()["tools"]
    except ToolfrontError as exc:
        raise CommandError(f"the families' tools cannot be served: {exc}") from exc
    return tools


def _configure_list(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser)
    add_json_flag(parser)


def _run_list(args: argparse.Namespace) -> int:
    served = sorted([*declared_tools(args.project), *system_manifest()], key=lambda tool: str(tool["name"]))
    tools = [{name: tool[name] for name in TOOL_FIELDS} for tool in served]
    if args.json:
        print_json(tools)
    else:
        rows = [["-" if tool[name] is None else str(tool[name]) for name in TOOL_FIELDS] for tool in tools]
        print_table([name.upper() for name in TOOL_FIELDS], rows)
    return 0


TOOLS = command_group(
    "tools",
    "list the tools the code declares",
    [
        Command(
            "list",
            "name, audience, scope, permission, danger and title of every tool",
            _configure_list,
            _run_list,
        )
    ],
)
