"""The mcp bench's sanity checks: every server answers both requests correctly, and their sizes."""

from __future__ import annotations

import json
from typing import Any

from mcp_mlh import call_floor, list_floor
from mcp_requests import (
    ARGUMENTS,
    CALL_BODY,
    CALLED,
    INPUT_SCHEMA,
    LIST_BODY,
    MODERN,
    N_TOOLS,
    SDK_ANSWER,
    SDK_MODERN_CALL_BODY,
    asgi_headers,
)


def _result(text: str | bytes) -> dict[str, Any]:
    message = json.loads(text)
    if "result" not in message:
        raise SystemExit(f"bench_mcp: an error instead of a result: {str(text)[:500]}")
    found: dict[str, Any] = message["result"]
    return found


def sanity_check(servers: dict[str, Any]) -> dict[str, Any]:
    """Every server answers both requests correctly; the sizes of the answers. Stops on a failure."""
    sdk, mlh, endpoint, stub = servers["sdk"], servers["mlh"], servers["toolfront"], servers["stub"]
    events, ctx = servers["events"], servers["ctx"]
    sizes: dict[str, int] = {}

    status, body = sdk.post_now(LIST_BODY.encode(), asgi_headers())
    tools = _result(body)["tools"]
    assert status == 200 and len(tools) == N_TOOLS, (status, body[:300])
    sizes["sdk_list"] = len(body)
    status, body = sdk.post_now(CALL_BODY.encode(), asgi_headers())
    assert status == 200 and _result(body)["content"][0]["text"] == SDK_ANSWER, (status, body)
    sizes["sdk_call"] = len(body)
    modern = {"mcp-method": "tools/call", "mcp-name": f"get_product{CALLED:03d}"}
    status, body = sdk.post_now(SDK_MODERN_CALL_BODY.encode(), asgi_headers(MODERN, modern))
    found = _result(body)
    assert status == 200 and found["content"][0]["text"] == SDK_ANSWER, (status, body)
    assert found.get("resultType") == "complete", body
    sizes["sdk_call_modern"] = len(body)

    response = mlh.handle_request(events["list"], ctx)
    assert response["statusCode"] == 200 and len(_result(response["body"])["tools"]) == N_TOOLS
    sizes["mlh_list"] = len(response["body"].encode())
    response = mlh.handle_request(events["call"], ctx)
    assert response["statusCode"] == 200, response
    assert _result(response["body"])["content"][0]["text"] == SDK_ANSWER, response
    sizes["mlh_call"] = len(response["body"].encode())

    response = endpoint(events["tf_list"])
    tools = _result(response["body"])["tools"]
    assert response["statusCode"] == 200 and len(tools) == N_TOOLS, response["body"][:300]
    assert tools[0]["inputSchema"] == INPUT_SCHEMA and tools[0]["annotations"]["readOnlyHint"] is True
    sizes["toolfront_list"] = len(response["body"].encode())
    for key, event in (("toolfront_call", events["tf_call"]), ("toolfront_call_modern", events["tf_modern"])):
        stub.last = None
        response = endpoint(event)
        found = _result(response["body"])
        assert response["statusCode"] == 200, response
        assert found["structuredContent"] == {"ok": True} and found["isError"] is False, response
        assert stub.last is not None and stub.last.tool == f"bench.get_product{CALLED:03d}", stub.last
        assert stub.last.arguments == ARGUMENTS, stub.last
        sizes[key] = len(response["body"].encode())
    assert _result(endpoint(events["tf_modern"])["body"]).get("resultType") == "complete"

    tools = servers["floor_tools"]
    sizes["floor_list"] = len(list_floor(tools)(events["list"]).encode())
    sizes["floor_call"] = len(call_floor(servers["functions"])(events["call"]).encode())
    return {"response_bytes": sizes, "tools": N_TOOLS}
