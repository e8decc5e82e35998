"""The mcp bench's tools and requests: the 200 tool functions, JSON-RPC bodies, API Gateway events."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

N_TOOLS = 200
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CALLED = 7  # the tool every tools/call calls
ARGUMENTS = {"sku": "MUG-01"}
SDK_ANSWER = "MUG-01 x1 (en-GB)"


def description(i: int) -> str:
    return f"Look up product family {i:03d}: price and stock of one SKU."


INPUT_SCHEMA = {  # what the SDK derives from fn's signature, as toolfront declares it
    "type": "object",
    "properties": {
        "sku": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1, "default": 1},
        "locale": {"type": "string", "default": "en-GB"},
    },
    "required": ["sku"],
    "additionalProperties": False,
}


def product_function(i: int) -> Callable[..., str]:
    """The i-th tool function of the SDK and mcp-lambda-handler servers (one object per tool)."""

    def fn(sku: str, quantity: int = 1, locale: str = "en-GB") -> str:
        return f"{sku} x{quantity} ({locale})"

    fn.__name__ = fn.__qualname__ = f"get_product{i:03d}"
    fn.__doc__ = description(i)
    return fn


def rpc(method: str, params: dict[str, Any] | None = None, message_id: int = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def modern_meta() -> dict[str, Any]:
    return {
        VERSION_KEY: MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


LIST_BODY = rpc("tools/list")
CALL_PARAMS = {"name": f"get_product{CALLED:03d}", "arguments": ARGUMENTS}
CALL_BODY = rpc("tools/call", CALL_PARAMS, 2)
TF_CALL_BODY = rpc("tools/call", {**CALL_PARAMS, "name": f"bench.get_product{CALLED:03d}"}, 2)
SDK_MODERN_CALL_BODY = rpc("tools/call", {**CALL_PARAMS, "_meta": modern_meta()}, 2)
TF_MODERN_CALL_BODY = rpc(
    "tools/call", {**CALL_PARAMS, "name": f"bench.get_product{CALLED:03d}", "_meta": modern_meta()}, 2
)


def api_event(body: str, protocol: str = HANDSHAKE, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) event of ``POST /mcp`` from an anonymous MCP client."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-length": str(len(body.encode())),
        "content-type": "application/json",
        "host": "abc123def4.execute-api.eu-west-1.amazonaws.com",
        "mcp-protocol-version": protocol,
        "user-agent": "bench-mcp-client/1.0",
        "x-amzn-trace-id": "Root=1-67891234-abcdef012345678912345678",
        "x-forwarded-for": "198.51.100.7",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
        **(extra or {}),
    }
    return {
        "version": "2.0",
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123def4",
            "domainName": headers["host"],
            "domainPrefix": "abc123def4",
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": "198.51.100.7",
                "userAgent": headers["user-agent"],
            },
            "requestId": "JKJaXmPLvHcESHA=",
            "routeKey": "POST /mcp",
            "stage": "$default",
            "time": "30/Nov/2026:05:00:00 +0000",
            "timeEpoch": 1796014800000,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def asgi_headers(protocol: str = HANDSHAKE, extra: dict[str, str] | None = None) -> list[tuple[bytes, bytes]]:
    found = {
        "host": "127.0.0.1:8000",  # the SDK's DNS-rebinding guard allows 127.0.0.1:*
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": protocol,
        **(extra or {}),
    }
    return [(k.encode(), v.encode()) for k, v in found.items()]


class FakeContext:
    function_name = "bench-mcp"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:bench-mcp"
    aws_request_id = "bench-request"
