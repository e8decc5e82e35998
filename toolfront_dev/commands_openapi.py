"""``toolfront openapi``: the OpenAPI 3.1 document built from the code (no stack needed)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolfront.adapters.openapi.document import openapi_document
from toolfront.tools.system import system_manifest
from toolfront_dev.command import Command
from toolfront_dev.commands_tools import add_project_argument, declared_tools
from toolfront_dev.output import print_json


def project_tools(project: Path) -> list[dict[str, Any]]:
    """Every tool the project serves: its families' (read from the code) and core's ``system.*``."""
    return sorted([*declared_tools(project), *system_manifest()], key=lambda tool: str(tool["name"]))


def _configure(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser)
    parser.add_argument(
        "--server", metavar="URL", help="the API's address, written as servers[0] (default: none)"
    )


def _run(args: argparse.Namespace) -> int:
    print_json(openapi_document(project_tools(args.project), server_url=args.server))
    return 0


OPENAPI = Command(
    name="openapi",
    help="print the OpenAPI 3.1 document of every tool, built from the code",
    configure=_configure,
    run=_run,
)
