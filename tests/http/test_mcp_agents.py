"""The names agent frameworks hand to a model, read through their own MCP clients: every one must pass
the model APIs' tool-name rule (openai-agents' ``MCPServerStreamableHttp`` in this process;
langchain-mcp-adapters, which needs the 1.x MCP SDK, in a process of its own from .venv-langchain)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from agents import Agent, RunContextWrapper
from agents.mcp import MCPServerStreamableHttp, MCPUtil

from tests.http.conftest import PROJECT_DIR
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack

LANGCHAIN_PYTHON = PROJECT_DIR / ".venv-langchain" / "bin" / "python"

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


def test_langchain_mcp_adapters_hands_the_model_only_names_it_accepts(
    stack: LocalStack, admin_key: str
) -> None:
    if not LANGCHAIN_PYTHON.exists():
        pytest.fail("run `make install`: it makes .venv-langchain, where langchain-mcp-adapters runs")
    urls = [f"{stack.api_url}/mcp", f"{stack.api_url}/mcp/catalogue"]
    script = PROJECT_DIR / "tests" / "mcp_langchain" / "names.py"
    done = subprocess.run(
        [str(LANGCHAIN_PYTHON), str(script), admin_key, *urls],
        check=False,  # the return code is asserted with the error output
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "NO_PROXY": "*"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, list[str]] = json.loads(done.stdout)
    assert set(found) == set(urls)
    for url, names in found.items():
        assert len(names) >= 10, (url, names)
        assert [name for name in names if not MODEL_API_NAME.fullmatch(name)] == [], url
    assert "catalogue-list_products" in found[urls[1]]
