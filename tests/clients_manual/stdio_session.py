"""A manual check, not part of ``make test``: runs a stdio MCP server as Claude Desktop does and uses it.

It starts COMMAND (``npx -y mcp-remote ...``) with this whole environment, then initializes, lists the
tools and calls ``system-get_actor`` and ``catalogue-list_products``, printing each outcome; a failure
prints the client's own error. See README.md beside this file.

Usage: ``python tests/clients_manual/stdio_session.py [--timeout S] -- COMMAND ARG...``
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CALLS = ("system-get_actor", "catalogue-list_products")


async def run_session(command: list[str]) -> None:
    """Initialize, list the tools and make the CALLS through the server that COMMAND starts."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        print(f"initialize: protocol {init.protocol_version}, server {init.server_info.name}", flush=True)
        names = [tool.name for tool in (await session.list_tools()).tools]
        print(f"tools/list: {len(names)} tools: {', '.join(names)}", flush=True)
        for name in CALLS:
            result = await session.call_tool(name, {})
            text = " | ".join(getattr(block, "text", f"<{block.type}>") for block in result.content)
            print(f"tools/call {name}: isError={result.is_error} {text[:300]}", flush=True)


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside nested exception groups, as a person would want them printed."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds before giving up (default 90)")
    parser.add_argument("command", nargs="+", help="the stdio server's command line, after --")
    args = parser.parse_args()
    print("command:", json.dumps(args.command), flush=True)

    async def bounded() -> None:
        with anyio.fail_after(args.timeout):
            await run_session(args.command)

    try:
        anyio.run(bounded)
    except BaseException as exc:  # whatever the client raised is the outcome to report
        for leaf in leaves(exc):
            print(f"FAILED: {type(leaf).__name__}: {leaf}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
