"""``toolfront manifest [--check]``: regenerate the layer's manifest.json, or check it matches the code.

``--check`` is for CI: it exits 1, naming the tools that differ, when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from toolfront_dev.command import Command
from toolfront_dev.commands_tools import add_project_argument, declared_tools
from toolfront_dev.errors import CommandError
from toolfront_dev.families import MANIFEST_PATH, manifest_text, write_manifest


def _configure(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser)
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the file differs from the code"
    )


def _run(args: argparse.Namespace) -> int:
    tools = declared_tools(args.project)  # first: a clear error outside a project
    if not args.check:
        path = write_manifest(args.project)
        print(f"wrote {path} ({len(tools)} tools)")
        return 0
    path = args.project / MANIFEST_PATH
    expected = manifest_text(args.project)
    try:
        committed = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(f"{path} is missing: run `toolfront manifest` and commit it") from None
    if committed != expected:
        raise CommandError(
            f"{path} differs from the code{_differences(committed, expected)}: "
            "run `toolfront manifest` and commit the result"
        )
    print(f"{path} matches the code ({len(tools)} tools)")
    return 0


def _differences(committed: str, expected: str) -> str:
    """`` (tools changed: a, b)``: which tools differ, when both files parse."""
    try:
        before, after = _by_name(json.loads(committed)), _by_name(json.loads(expected))
    except (ValueError, KeyError, TypeError):
        return ""
    parts = [
        (label, sorted(names))
        for label, names in (
            ("added", after.keys() - before.keys()),
            ("removed", before.keys() - after.keys()),
            ("changed", {n for n in before.keys() & after.keys() if before[n] != after[n]}),
        )
        if names
    ]
    listed = "; ".join(label + ": " + ", ".join(names) for label, names in parts)
    return f" (tools {listed})" if parts else ""


def _by_name(manifest: Any) -> dict[str, Any]:
    return {tool["name"]: tool for tool in manifest["tools"]}


MANIFEST = Command(
    name="manifest",
    help="write layers/core/toolfront/manifest.json from the code (--check: only compare)",
    configure=_configure,
    run=_run,
)
