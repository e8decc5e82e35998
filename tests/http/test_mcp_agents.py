"""The names agent frameworks hand to a model, read through their own MCP clients: every one must pass
the model APIs' tool-name rule (openai-agents' ``MCPServerStreamableHttp``; langchain-mcp-adapters
needs mcp 1.x, which this suite's mcp 2.3.0 excludes)."""

from __future__ import annotations

import asyncio
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from agents import Agent, RunContextWrapper
from agents.mcp import MCPServerStreamableHttp, MCPUtil

from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack

MODEL_API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture(scope="module")
def admin_key(store: DynamoDBKeyStore) -> str:
    owner = f"agents-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/catalogue"])
@pytest.mark.parametrize("strict", [False, True])
def test_openai_agents_hands_the_model_only_names_it_accepts(
    stack: LocalStack, admin_key: str, path: str, strict: bool
) -> None:
    async def names() -> list[str]:
        params = {"url": f"{stack.api_url}{path}", "headers": {"Authorization": f"Bearer {admin_key}"}}
        async with MCPServerStreamableHttp(params=params, name="toolfront") as server:
            agent = Agent(name="a", mcp_servers=[server])
            tools = await MCPUtil.get_all_function_tools([server], strict, RunContextWrapper(None), agent)
        return [tool.name for tool in tools]

    # A thread of its own: Playwright's sync API (tests/browser) keeps an event loop on the main one.
    with ThreadPoolExecutor(1) as thread:
        found = thread.submit(asyncio.run, names()).result()
    assert len(found) >= 10
    assert [name for name in found if not MODEL_API_NAME.fullmatch(name)] == []
