"""`POST /mcp` on the local stack, driven by the official MCP SDK clients (Python 2.x; TypeScript in
test_mcp_typescript.py): list, call, an error result, a held call."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.stack import LocalStack


@pytest.fixture(scope="module")
def admin_key(store: DynamoDBKeyStore) -> str:
    owner = f"mcp-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


@asynccontextmanager
async def client_session(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    """The 1.x-style API: ClientSession over the streamable HTTP client, with initialize."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (
            read,
            write,
            *_,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def high_level(url: str, key: str | None) -> AsyncIterator[Client]:
    """The 2.x `Client` (auto mode: server/discover first, the 2026-07-28 stateless protocol)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


Opener = Callable[[str, str | None], Any]
OPENERS = [pytest.param(client_session, id="ClientSession"), pytest.param(high_level, id="Client")]


def run(test: Callable[[], Awaitable[None]]) -> None:
    # A thread of its own: Playwright's sync API (tests/browser, session-scoped) keeps an event loop
    # registered on the main thread for the whole session.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(anyio.run, test).result()


def structured(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.structured_content
    return data


async def every_tool(client: Any) -> list[Any]:
    """Every page of ``tools/list`` (the stack lists 4 tools a page), as a client that wants them all
    follows ``nextCursor``: a page never repeats a tool, and the last has no cursor."""
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        if isinstance(client, ClientSession):
            page = await client.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
        else:
            page = await client.list_tools(cursor=cursor)
        assert len(page.tools) <= 4
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            names = [tool.name for tool in tools]
            assert len(names) == len(set(names))
            return tools


@pytest.mark.parametrize("opener", OPENERS)
def test_tools_list_shows_what_the_key_may_call(stack: LocalStack, admin_key: str, opener: Opener) -> None:
    async def scenario() -> None:
        async with opener(f"{stack.api_url}/mcp", admin_key) as client:
            listed = await every_tool(client)
        names = [tool.name for tool in listed]
        assert names == sorted(names)
        assert {"catalogue-get_product", "catalogue-delete_product", "system-get_actor"} <= set(names)
        delete = next(tool for tool in listed if tool.name == "catalogue-delete_product")
        assert delete.annotations.destructive_hint is True
        assert delete.annotations.read_only_hint is False
        assert delete.annotations.open_world_hint is False  # explicit: MCP's own default is true
        create = next(tool for tool in listed if tool.name == "catalogue-create_product")
        assert "idempotency_key" in create.input_schema["properties"]

    run(scenario)


@pytest.mark.parametrize("opener", OPENERS)
def test_anonymous_sees_only_public_tools(stack: LocalStack, opener: Opener) -> None:
    async def scenario() -> None:
        async with opener(f"{stack.api_url}/mcp", None) as client:
            listed = await every_tool(client)
        names = {tool.name for tool in listed}
        assert "guest-start_session" in names
        assert not any(name.startswith("catalogue-") for name in names)

    run(scenario)


@pytest.mark.parametrize("opener", OPENERS)
def test_call_success_error_and_held(stack: LocalStack, admin_key: str, opener: Opener) -> None:
    sku = f"M-{uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        async with opener(f"{stack.api_url}/mcp", admin_key) as client:
            product = {"sku": sku, "name": "Mug", "price_cents": 700, "currency": "EUR"}
            created = await client.call_tool("catalogue-create_product", product)
            assert created.is_error is False
            assert structured(created) == {"product": product}
            assert sku in created.content[0].text
            missing = await client.call_tool("catalogue-get_product", {"sku": "NOPE-1"})
            assert missing.is_error is True
            assert structured(missing)["error"]["code"] == "not_found"
            invalid = await client.call_tool("catalogue-get_product", {"sku": ""})
            assert structured(invalid)["error"]["code"] == "invalid_input"
            held = await client.call_tool("catalogue-delete_product", {"sku": sku})
            assert held.is_error is False
            assert structured(held)["status"] == "pending_approval"
            assert "system-get_approval" in held.content[0].text
            approval = await client.call_tool(
                "system-get_approval", {"approval_id": structured(held)["approval_id"]}
            )
            assert structured(approval)["status"] == "pending"
            actor = await client.call_tool("system-get_actor", {})
            assert structured(actor)["actor"]["kind"] == "key"

    run(scenario)


@pytest.mark.parametrize("opener", OPENERS)
def test_admin_tool_without_a_key_is_an_error_result(stack: LocalStack, opener: Opener) -> None:
    async def scenario() -> None:
        async with opener(f"{stack.api_url}/mcp", None) as client:
            refused = await client.call_tool("catalogue-list_products", {})
        assert refused.is_error is True
        assert structured(refused)["error"]["code"] == "unauthenticated"

    run(scenario)


def test_invalid_key_is_refused(stack: LocalStack) -> None:
    async def scenario() -> None:
        with pytest.raises(BaseExceptionGroup):  # the SDK's task group carries the HTTP 401 it got
            async with client_session(f"{stack.api_url}/mcp", "tfk_abcdefghijkl_" + "x" * 32) as session:
                await session.list_tools()

    run(scenario)


@pytest.mark.parametrize("opener", OPENERS)
def test_a_familys_own_endpoint_lists_and_calls_its_tools(
    stack: LocalStack, admin_key: str, opener: Opener
) -> None:
    async def scenario() -> None:
        async with opener(f"{stack.api_url}/mcp/catalogue", admin_key) as client:
            listed = await every_tool(client)
            called = await client.call_tool("catalogue-list_products", {"limit": 1})
            actor = await client.call_tool("system-get_actor", {})
        assert {tool.name.split("-", 1)[0] for tool in listed} == {"catalogue", "system"}
        assert called.is_error is False and "products" in structured(called)
        assert actor.is_error is False

    run(scenario)
