"""Prints, as JSON, the tool names langchain-mcp-adapters' client hands to a model for each MCP URL
given: ``names.py KEY URL...``. Run with .venv-langchain's Python (langchain-mcp-adapters needs the
1.x MCP SDK); tests/http/test_mcp_langchain.py reads the output."""

from __future__ import annotations

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient


async def names(key: str, urls: list[str]) -> dict[str, list[str]]:
    servers = {
        f"server{i}": {
            "transport": "streamable_http",
            "url": url,
            "headers": {"Authorization": f"Bearer {key}"},
        }
        for i, url in enumerate(urls)
    }
    client = MultiServerMCPClient(servers)  # type: ignore[arg-type]
    found: dict[str, list[str]] = {}
    for i, url in enumerate(urls):
        tools = await client.get_tools(server_name=f"server{i}")
        found[url] = [tool.name for tool in tools]
    return found


if __name__ == "__main__":
    print(json.dumps(asyncio.run(names(sys.argv[1], sys.argv[2:]))))
