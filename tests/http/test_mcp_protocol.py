"""MCP over raw HTTP: the transport and JSON-RPC details of docs/contract.md, "MCP", request by request."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.http.conftest import Api, Reply
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.testing import mcp_request_headers

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def rpc(
    api: Api,
    method: str,
    params: Any = None,
    *,
    key: str | None = None,
    message_id: Any = 1,
    headers: dict[str, str] | None = None,
) -> Reply:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if message_id is not None:
        message["id"] = message_id
    if params is not None:
        message["params"] = params
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and VERSION_KEY in meta:  # 2026-07-28: headers mirror the body
        sent |= {"MCP-Protocol-Version": meta[VERSION_KEY], **mcp_request_headers(message)}
    sent |= headers or {}
    return api.request("POST", "/mcp", body=json.dumps(message).encode(), headers=sent, key=key)


def modern(params: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    return {
        **(params or {}),
        "_meta": {VERSION_KEY: version, "io.modelcontextprotocol/clientCapabilities": {}},
    }


@pytest.fixture(scope="module")
def key(store: DynamoDBKeyStore) -> str:
    owner = f"mcp-raw-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_echoes_a_supported_handshake_version(api: Api, version: str) -> None:
    reply = rpc(
        api,
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    result = reply.json()["result"]
    assert (reply.status, result["protocolVersion"]) == (200, version)
    tasks = {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}} if version == "2025-11-25" else {}
    assert result["capabilities"] == {"tools": {"listChanged": False}, **tasks}  # tasks: held calls
    assert result["serverInfo"]["name"] == "toolfront"
    assert "mcp-session-id" not in reply.headers


def test_initialize_with_an_unknown_version_offers_the_latest(api: Api) -> None:
    reply = rpc(api, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {}})
    assert reply.json()["result"]["protocolVersion"] == "2025-11-25"


def test_notifications_are_accepted_with_202_and_no_body(api: Api) -> None:
    reply = rpc(api, "notifications/initialized", message_id=None)
    assert (reply.status, reply.body) == (202, b"")


def test_ping_answers_an_empty_result(api: Api) -> None:
    reply = rpc(api, "ping", message_id="p-1")
    assert reply.json() == {"jsonrpc": "2.0", "id": "p-1", "result": {}}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405(api: Api, method: str) -> None:
    reply = api.request(method, "/mcp")
    assert reply.status == 405
    assert reply.headers["allow"] == "POST"


def test_unknown_method_is_32601_with_http_200(api: Api) -> None:
    reply = rpc(api, "resources/list")
    assert (reply.status, reply.json()["error"]["code"]) == (200, -32601)


def test_unknown_tool_is_32602(api: Api) -> None:
    reply = rpc(api, "tools/call", {"name": "catalogue-melt_products", "arguments": {}})
    assert (reply.status, reply.json()["error"]["code"]) == (200, -32602)


def test_invalid_key_is_http_401_with_www_authenticate(api: Api) -> None:
    reply = rpc(api, "tools/list", key="tfk_abcdefghijkl_" + "x" * 32)
    assert reply.status == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")


def test_content_type_with_charset_is_accepted(api: Api) -> None:
    reply = rpc(api, "ping", headers={"Content-Type": "application/json; charset=utf-8"})
    assert reply.status == 200


def test_malformed_json_is_a_parse_error(api: Api) -> None:
    reply = api.request("POST", "/mcp", body=b"{nope", headers={"Content-Type": "application/json"})
    assert reply.json()["error"]["code"] == -32700


def test_server_discover_lists_every_version(api: Api) -> None:
    result = rpc(api, "server/discover", modern()).json()["result"]
    assert MODERN in result["supportedVersions"] and "2025-11-25" in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert result["serverInfo"]["name"] == "toolfront"
    assert result["capabilities"]["tools"] == {"listChanged": False}


def test_modern_requests_get_result_type_and_cache_hints(api: Api) -> None:
    result = rpc(api, "tools/list", modern()).json()["result"]
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")
    called = rpc(api, "tools/call", modern({"name": "guest-start_session", "arguments": {}})).json()["result"]
    assert called["resultType"] == "complete" and called["isError"] is False


def test_modern_unknown_method_is_http_404(api: Api) -> None:
    reply = rpc(api, "resources/list", modern())
    assert (reply.status, reply.json()["error"]["code"]) == (404, -32601)


def test_modern_unsupported_version_is_http_400(api: Api) -> None:
    reply = rpc(api, "tools/list", modern(version="2099-01-01"))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == -32022
    assert MODERN in reply.json()["error"]["data"]["supported"]


def every_tool(api: Api, key: str | None, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every page of ``tools/list`` (4 tools a page on this stack), following ``nextCursor``."""
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        sent = {**(params or {}), **({"cursor": cursor} if cursor else {})}
        result = rpc(api, "tools/list", sent or None, key=key).json()["result"]
        tools += result["tools"]
        cursor = result.get("nextCursor")
        if cursor is None:
            return tools


def test_tool_entries_carry_every_hint_and_the_idempotency_key_where_offered(api: Api, key: str) -> None:
    tools = {t["name"]: t for t in every_tool(api, key)}
    for tool in tools.values():
        assert set(tool["annotations"]) >= {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
        assert tool["inputSchema"]["type"] == "object"
    assert "idempotency_key" in tools["catalogue-create_product"]["inputSchema"]["properties"]
    assert "idempotency_key" not in tools["catalogue-get_product"]["inputSchema"]["properties"]
    assert "idempotency_key" not in tools["guest-start_session"]["inputSchema"]["properties"]


def test_call_answers_structured_content_and_the_same_json_as_text(api: Api, key: str) -> None:
    result = rpc(
        api, "tools/call", {"name": "catalogue-list_products", "arguments": {"limit": 1}}, key=key
    ).json()["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_failure_is_an_error_result_with_the_rest_error_object(api: Api, key: str) -> None:
    result = rpc(
        api, "tools/call", {"name": "catalogue-get_product", "arguments": {"sku": ""}}, key=key
    ).json()["result"]
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_input" and set(error) == {"code", "message", "details"}


def test_idempotent_retry_over_mcp_replays(api: Api, key: str) -> None:
    product = {
        "sku": f"MI-{uuid.uuid4().hex[:6]}",
        "name": "Mug",
        "price_cents": 1,
        "currency": "EUR",
        "idempotency_key": f"mcp-{uuid.uuid4().hex}",
    }
    first = rpc(api, "tools/call", {"name": "catalogue-create_product", "arguments": product}, key=key)
    again = rpc(api, "tools/call", {"name": "catalogue-create_product", "arguments": product}, key=key)
    assert first.json()["result"]["structuredContent"] == again.json()["result"]["structuredContent"]
    assert again.json()["result"]["isError"] is False  # not already_exists: the first answer came back
