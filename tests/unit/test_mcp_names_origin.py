"""MCP that assistants can load: names every model API accepts, the Origin check, a 401 clients show."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront.adapters.mcp.results import mcp_name, mcp_text
from toolfront.testing import mcp_request_headers

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
MODEL_API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
DOTTED = re.compile(r"\b[a-z][a-z0-9_]*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


@pytest.fixture
def gateway(aws: None, monkeypatch: pytest.MonkeyPatch) -> Handler:
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", "https://tools.example.com")
    monkeypatch.setenv("TOOLFRONT_ALLOWED_ORIGINS", "https://app.example.com")
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("gateway").lambda_handler
    return handler


def rpc(gateway: Handler, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 9, "method": method}
    if params is not None:
        message["params"] = params
    event = load_event("mcp_tools_call", body=json.dumps(message))
    event["headers"] = {**event["headers"], "authorization": f"Bearer {EVENT_ADMIN_KEY}", **headers}
    return gateway(event, None)


def test_mcp_names_are_the_dotted_names_with_a_dash() -> None:
    assert mcp_name("catalogue.list_products") == "catalogue-list_products"


def test_a_name_over_64_characters_keeps_55_a_dash_and_8_hex_digits_of_its_hash() -> None:
    long = "a" * 30 + "." + "b" * 20 + "_" + "c" * 30
    shortened = mcp_name(long)
    assert len(shortened) == 64 and MODEL_API_NAME.fullmatch(shortened)
    assert shortened == long.replace(".", "-")[:55] + "-" + hashlib.sha256(long.encode()).hexdigest()[:8]


def test_texts_name_tools_by_their_mcp_names() -> None:
    text = "Poll system.get_approval, then call catalogue.set_prices. Version 1.5 stays."
    assert mcp_text(text) == "Poll system-get_approval, then call catalogue-set_prices. Version 1.5 stays."


def test_every_listed_name_passes_the_model_apis_rule_and_no_text_names_a_dotted_tool(
    gateway: Handler,
) -> None:
    tools = json.loads(rpc(gateway, "tools/list")["body"])["result"]["tools"]
    assert len(tools) > 10
    for tool in tools:
        assert MODEL_API_NAME.fullmatch(tool["name"]), tool["name"]
        assert not DOTTED.search(tool["description"]), tool["description"]


@pytest.mark.parametrize("name", ["system.get_actor", "system-get_actor"])
def test_tools_call_takes_the_mcp_name_and_the_dotted_name_alike(gateway: Handler, name: str) -> None:
    result = json.loads(rpc(gateway, "tools/call", {"name": name, "arguments": {}})["body"])["result"]
    assert result["isError"] is False and result["structuredContent"]["actor"]["kind"] == "key"


@pytest.mark.parametrize(
    "origin", ["https://tools.example.com", "https://app.example.com", "https://APP.example.com/"]
)
def test_the_apis_own_origin_and_the_allowed_ones_are_served(gateway: Handler, origin: str) -> None:
    assert rpc(gateway, "ping", origin=origin)["statusCode"] == 200


def test_no_origin_is_served(gateway: Handler) -> None:
    assert rpc(gateway, "ping")["statusCode"] == 200


@pytest.mark.parametrize("origin", ["https://evil.example.com", "http://tools.example.com", "null"])
def test_any_other_origin_is_403(gateway: Handler, origin: str) -> None:
    response = rpc(gateway, "tools/list", origin=origin)
    assert response["statusCode"] == 403
    assert json.loads(response["body"])["error"]["code"] == -32600


def test_a_401_carries_a_json_rpc_error_saying_why(gateway: Handler) -> None:
    response = rpc(gateway, "tools/list", authorization="Bearer tfk_abcdefghijkl_" + "x" * 32)
    body = json.loads(response["body"])
    assert response["statusCode"] == 401 and response["headers"]["www-authenticate"].startswith("Bearer")
    assert body == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32001, "message": "the API key is not valid"},
    }


MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_HEADER = {"mcp-protocol-version": "2026-07-28"}


def modern_rpc(gateway: Handler, method: str, params: dict[str, Any], **headers: str | None) -> Any:
    """A 2026-07-28 request with the headers a client mirrors, ``headers`` changing them (None: left out)."""
    mirrored = {k.lower(): v for k, v in mcp_request_headers({"method": method, "params": params}).items()}
    sent = {**MODERN_HEADER, **mirrored, **headers}
    return rpc(
        gateway, method, {"_meta": MODERN, **params}, **{k: v for k, v in sent.items() if v is not None}
    )


def error_of(response: dict[str, Any]) -> tuple[int, int]:
    return response["statusCode"], json.loads(response["body"])["error"]["code"]


def test_2026_requests_without_the_version_in_meta_are_400_invalid_params(gateway: Handler) -> None:
    response = rpc(gateway, "tools/list", {}, **{"mcp-protocol-version": "2026-07-28"})
    assert error_of(response) == (400, -32602)


def test_2026_header_that_differs_from_meta_is_32020(gateway: Handler) -> None:
    response = modern_rpc(gateway, "tools/list", {}, **{"mcp-protocol-version": "2025-11-25"})
    assert error_of(response) == (400, -32020)


def test_2026_header_mismatch_is_named_before_an_unsupported_version(gateway: Handler) -> None:
    # sep-2575-http-server-header-mismatch-400: the header says 2026-07-28, _meta v999.0.0
    meta = {**MODERN, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    response = rpc(gateway, "tools/list", {"_meta": meta}, **MODERN_HEADER, **{"mcp-method": "tools/list"})
    assert error_of(response) == (400, -32020)


def test_2026_unsupported_version_with_a_matching_header_is_32022(gateway: Handler) -> None:
    meta = {**MODERN, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    headers = {"mcp-protocol-version": "v999.0.0", "mcp-method": "tools/list"}
    response = rpc(gateway, "tools/list", {"_meta": meta}, **headers)
    assert error_of(response) == (400, -32022)
    assert "2026-07-28" in json.loads(response["body"])["error"]["data"]["supported"]


def test_2026_request_without_the_protocol_version_header_is_32020(gateway: Handler) -> None:
    assert error_of(modern_rpc(gateway, "tools/list", {}, **{"mcp-protocol-version": None})) == (400, -32020)


def test_2026_meta_without_client_capabilities_is_400_invalid_params(gateway: Handler) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    response = rpc(
        gateway, "server/discover", {"_meta": meta}, **MODERN_HEADER, **{"mcp-method": "server/discover"}
    )
    assert error_of(response) == (400, -32602)


@pytest.mark.parametrize("method", ["initialize", "ping", "tasks/result", "tasks/list", "resources/read"])
def test_methods_outside_2026_are_404_whatever_their_headers(gateway: Handler, method: str) -> None:
    # resources/read with an Mcp-Name naming its uri: still just a method this server lacks
    response = modern_rpc(gateway, method, {"uri": "test://x"}, **{"mcp-name": "test://x"})
    assert error_of(response) == (404, -32601)


@pytest.mark.parametrize(
    "headers",
    [
        {"mcp-method": "tools/list"},
        {"mcp-name": "system-list_tools"},
        {"mcp-method": None},
        {"mcp-name": None},
        {"mcp-name": "=?base64?c3lzdGVtLWxpc3RfdG9vbHM=?="},  # system-list_tools
        {"mcp-name": "=?base64?not base64?="},
    ],
)
def test_2026_mcp_method_and_name_headers_are_required_and_must_match_the_body(
    gateway: Handler, headers: dict[str, str | None]
) -> None:
    params = {"name": "system-get_actor", "arguments": {}}
    assert error_of(modern_rpc(gateway, "tools/call", params, **headers)) == (400, -32020)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {
            "mcp-name": "   system-get_actor  ",
            "mcp-method": "\ttools/call ",
        },  # RFC 9110: OWS is not the value
        {"mcp-name": "=?base64?c3lzdGVtLWdldF9hY3Rvcg==?="},  # system-get_actor
    ],
)
def test_2026_headers_that_match_are_served(gateway: Handler, headers: dict[str, str]) -> None:
    response = modern_rpc(gateway, "tools/call", {"name": "system-get_actor", "arguments": {}}, **headers)
    assert response["statusCode"] == 200 and json.loads(response["body"])["result"]["isError"] is False


def test_2026_tasks_methods_without_the_extension_are_400_missing_capability(gateway: Handler) -> None:
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        response = modern_rpc(gateway, method, {"taskId": "apr_x"})
        assert error_of(response) == (400, -32021), method
        data = json.loads(response["body"])["error"]["data"]
        assert "io.modelcontextprotocol/tasks" in data["requiredCapabilities"]["extensions"]


def test_2026_a_task_name_header_naming_another_task_is_32020(gateway: Handler) -> None:
    response = modern_rpc(gateway, "tasks/get", {"taskId": "apr_x"}, **{"mcp-name": "apr_y"})
    assert error_of(response) == (400, -32020)


def test_2026_notifications_are_accepted_without_routing_headers(gateway: Handler) -> None:
    message = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": MODERN}}
    event = load_event("mcp_tools_call", body=json.dumps(message))
    event["headers"] = {**event["headers"], **MODERN_HEADER}
    assert gateway(event, None)["statusCode"] == 202
