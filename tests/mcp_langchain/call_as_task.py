"""Calls one tool as a task with the 1.x MCP SDK's ``session.experimental.call_tool_as_task``, then
reads the task back (``get_task``, ``get_task_result``), and prints each answer as one JSON line:
``call_as_task.py URL KEY TOOL ARGUMENTS_JSON``. Run with .venv-langchain's Python (the 1.x SDK,
where the 2025-11-25 tasks client lives); tests/http/test_mcp_tasks_at_once.py reads the output."""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client


async def call_as_task(url: str, key: str, tool: str, arguments: dict[str, object]) -> None:
    async with (
        streamablehttp_client(url, headers={"Authorization": f"Bearer {key}"}) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        created = await session.experimental.call_tool_as_task(tool, arguments)
        print(json.dumps({"created": created.model_dump(mode="json", by_alias=True)}), flush=True)
        task = await session.experimental.get_task(created.task.taskId)
        print(json.dumps({"task": task.model_dump(mode="json", by_alias=True)}), flush=True)
        result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
        print(json.dumps({"result": result.model_dump(mode="json", by_alias=True)}), flush=True)


if __name__ == "__main__":
    asyncio.run(call_as_task(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))
