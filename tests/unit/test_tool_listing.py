"""Large registries (docs/contract.md, section 11): tools/list and GET /v1/tools in pages (name order, every
tool once, a tampered cursor refused), the hints clients that defer tools read, and
``system.search_tools``, which finds tools by what they do among exactly those the caller may call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolfront import Tool, ToolDefinitionError
from toolfront.adapters.http import Edge, Route
from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal
from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.auth.access import may_call
from toolfront.auth.actors import Actor, ActorKind
from toolfront.tools.paging import InvalidCursorError, Pager
from toolfront.tools.search import ToolIndex, found_tools, words
from toolfront.tools.system import all_tools

ADMIN = Actor(ActorKind.KEY, "k-admin", "admin", frozenset({"shop.*"}), frozenset({"shop"}))
READ_ONLY = Actor(ActorKind.KEY, "k-read", "reader", frozenset({"shop.items:read"}), frozenset({"shop"}))
NO_PERMISSION = Actor(ActorKind.KEY, "k-none", "other", frozenset({"shop.*"}), frozenset())
ANONYMOUS = Actor(ActorKind.ANONYMOUS, "203.0.113.7")
CALLERS = {"admin": ADMIN, "read_only": READ_ONLY, "no_permission": NO_PERMISSION, "anonymous": ANONYMOUS}


def registry(n: int) -> list[dict[str, Any]]:
    """``n`` tools: reads and writes of many families, every fourth one public."""
    tools = []
    for i in range(n):
        public = i % 4 == 0
        write = i % 3 == 0 and not public
        tools.append(
            {
                **Tool.new(
                    name=f"fam{i % 40:02d}.{'set' if write else 'get'}_thing{i:04d}",
                    audience="public" if public else "admin",
                    scope=None if public else f"shop.items:{'write' if write else 'read'}",
                    permission=None if public else "shop",
                    handler=lambda data, ctx: {},
                    title=f"Thing {i}",
                    description=f"Handles the thing number {i} (word{i}x) of family {i % 40}.",
                    annotations={"read_only": not write},
                ).describe(),
                "module": "core",
            }
        )
    return sorted(tools, key=lambda tool: tool["name"])


def endpoint(tools: list[dict[str, Any]], actor: Actor, page_size: int) -> Any:
    mcp = McpEndpoint(
        ToolCatalog(tools),
        lambda call: (500, {}),
        lambda headers, ip: actor,
        records=lambda actor, tool, key: None,
        page_size=page_size,
    )
    return Edge({"POST /mcp": Route(mcp, rpc_refusal)})


def rpc(edge: Any, method: str, params: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    event = {
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "headers": {"content-type": "application/json", "host": "api.example.com"},
        "body": json.dumps(body),
        "requestContext": {
            "http": {"method": "POST", "path": "/mcp", "sourceIp": "203.0.113.7"},
            "requestId": "r",
        },
    }
    answer = edge(event, None)
    return answer["statusCode"], json.loads(answer["body"])


def every_page(edge: Any) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        status, body = rpc(edge, "tools/list", {"cursor": cursor} if cursor else {})
        assert status == 200, body
        pages.append([tool["name"] for tool in body["result"]["tools"]])
        cursor = body["result"].get("nextCursor")
        if cursor is None:
            return pages


def callable_names(tools: list[dict[str, Any]], actor: Actor) -> list[str]:
    return sorted(
        tool["name"].replace(".", "-")
        for tool in tools
        if may_call(
            audience=tool["audience"], scope=tool["scope"], permission=tool["permission"], actor=actor
        )
    )


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_every_page_together_is_every_callable_tool_once_in_name_order(caller: str) -> None:
    tools, actor = registry(250), CALLERS[caller]
    pages = every_page(endpoint(tools, actor, 100))
    seen = [name for page in pages for name in page]
    assert seen == callable_names(tools, actor)  # each once, in order, only what the caller may call
    assert all(len(page) <= 100 for page in pages) and all(pages)
    assert every_page(endpoint(tools, actor, 100)) == pages  # the same for the same caller


@pytest.mark.parametrize("cursor", ["garbage", "", "A" * 30, 42])
def test_a_cursor_this_server_did_not_give_is_invalid_params(cursor: Any) -> None:
    edge = endpoint(registry(30), ADMIN, 10)
    status, body = rpc(edge, "tools/list", {"cursor": cursor})
    if cursor == "":  # an empty cursor is the first page (openai-agents' strict mode sends one)
        assert status == 200 and body["result"]["nextCursor"]
        return
    assert (status, body["error"]["code"]) == (200, -32602)


def test_a_tampered_cursor_or_one_of_another_registry_is_refused() -> None:
    tools = registry(30)
    _, first = rpc(endpoint(tools, ADMIN, 10), "tools/list", {})
    cursor = first["result"]["nextCursor"]
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    assert rpc(endpoint(tools, ADMIN, 10), "tools/list", {"cursor": tampered})[1]["error"]["code"] == -32602
    other = registry(31)  # another registry (a tool added): its cursors are not this one's
    assert rpc(endpoint(other, ADMIN, 10), "tools/list", {"cursor": cursor})[1]["error"]["code"] == -32602
    with pytest.raises(InvalidCursorError):
        Pager(["a.b_c"]).page(["a.b_c"], cursor, 10)


def test_hints_are_published_for_clients_that_defer_tools() -> None:
    tool = Tool.new(
        name="shop.find_orders",
        audience="public",
        handler=lambda data, ctx: {},
        search_hint="orders purchases invoices",
        always_load=True,
        meta={"com.example/x": 1},
    )
    _, body = rpc(endpoint([{**tool.describe(), "module": "core"}], ANONYMOUS, 10), "tools/list", {})
    meta = body["result"]["tools"][0]["_meta"]
    assert meta == {
        "com.example/x": 1,
        "anthropic/searchHint": "orders purchases invoices",
        "anthropic/alwaysLoad": True,
    }


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"search_hint": ""}, "search_hint"),
        ({"search_hint": "x" * 201}, "search_hint"),
        ({"always_load": "yes"}, "always_load"),
    ],
)
def test_hints_are_checked_naming_the_field(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ToolDefinitionError) as refused:
        Tool.new(name="shop.find_orders", audience="public", handler=lambda data, ctx: {}, **fields)
    assert named in str(refused.value)


def test_words_split_fold_and_singularise() -> None:
    assert words("getProductLabel list_products HTTPServer boxes categories") == [
        "get",
        "product",
        "label",
        "list",
        "product",
        "http",
        "server",
        "box",
        "category",
    ]
    assert words("remove an item") == words("delete a product")  # synonyms fold to one word


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("remove a product from the catalogue", "catalogue.delete_product"),
        ("download the whole catalogue", "catalogue.export_products"),
        ("print a price tag", "catalogue.get_product_label"),
        ("reduce prices of several products", "catalogue.discount_products"),
        ("add a new item", "catalogue.create_product"),
        ("who am I", "system.get_actor"),
        ("withdraw my held call", "system.cancel_approval"),
        ("sign up for the newsletter", "guest.subscribe_newsletter"),
    ],
)
def test_search_finds_the_shipped_tools_by_paraphrase(query: str, expected: str) -> None:
    everyone = Actor(ActorKind.KEY, "k", "p", frozenset({"catalogue.*"}), frozenset({"catalogue"}))
    found = [hit["name"] for hit in found_tools(all_tools(), query, everyone, 5)]
    assert expected in found[:3], found


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_search_shows_exactly_what_listing_shows(caller: str) -> None:
    tools, actor = registry(200), CALLERS[caller]
    listed = set(callable_names(tools, actor))
    for tool in tools:  # a query naming the tool's own word finds it only where it may be called
        number = int(tool["name"][-4:])
        hits = found_tools(tools, f"word{number}x", actor, 50)
        shown = {hit["mcp_name"] for hit in hits}
        assert shown <= listed
        assert (tool["name"].replace(".", "-") in shown) == (tool["name"].replace(".", "-") in listed)


def test_search_over_two_thousand_tools_ranks_the_described_one_first() -> None:
    tools = registry(2000)
    index = ToolIndex(tools)
    for number in (0, 7, 1234, 1999):
        hits = index.search(f"thing {number} word{number}x", lambda tool: True, 5)
        assert hits[0].tool["title"] == f"Thing {number}", [h.tool["name"] for h in hits]
    assert index.search("nothing matches zyzzyva", lambda tool: True) == []


def test_search_tools_is_listed_with_its_hints() -> None:
    entry = next(tool for tool in all_tools() if tool["name"] == "system.search_tools")
    assert entry["audience"] == "public" and entry["always_load"] is True and entry["search_hint"]
