"""MCP's 401s when the stack signs people in (Cognito enabled): each points at the endpoint's
protected-resource metadata (RFC 9728 section 5.1), and a family with no public tool challenges a
request without credentials at once, naming its scopes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family, reset_process_state
from tests.helpers import load_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
BASE = "https://tools.example.com"
SCOPES = "toolfront/catalogue.products:read toolfront/catalogue.products:write"


@pytest.fixture
def cognito(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", BASE)
    monkeypatch.setenv(
        "TOOLFRONT_COGNITO_ISSUER", "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_pool"
    )
    monkeypatch.setenv("TOOLFRONT_COGNITO_CLIENT_IDS", "own-client")
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    reset_process_state()


def rpc(family: str, route: str, authorization: str | None = None) -> dict[str, Any]:
    event = load_event(
        "mcp_tools_call", body=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}})
    )
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST {route}"
    event["rawPath"] = route
    headers = {k: v for k, v in event["headers"].items() if k.lower() not in ("authorization", "x-api-key")}
    if authorization:
        headers["authorization"] = authorization
    event["headers"] = headers
    handler: Handler = load_family(family).lambda_handler
    return handler(event, None)


def test_a_family_without_public_tools_challenges_a_request_without_credentials(cognito: None) -> None:
    answer = rpc("catalogue", "/mcp/catalogue")
    assert answer["statusCode"] == 401
    assert answer["headers"]["www-authenticate"] == (
        f'Bearer realm="toolfront", '
        f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/catalogue", scope="{SCOPES}"'
    )
    error = json.loads(answer["body"])
    assert error["id"] == 7 and error["error"]["code"] == -32001
    assert "sign in" in error["error"]["message"]


def test_a_refused_credential_is_an_invalid_token_challenge(cognito: None) -> None:
    answer = rpc("catalogue", "/mcp/catalogue", "Bearer not-a-token")
    assert answer["statusCode"] == 401
    assert answer["headers"]["www-authenticate"] == (
        f'Bearer realm="toolfront", error="invalid_token", '
        f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp/catalogue"'
    )


def test_a_family_with_public_tools_serves_them_without_credentials(cognito: None) -> None:
    answer = rpc("guest", "/mcp/guest")
    assert answer["statusCode"] == 200
    names = {tool["name"] for tool in json.loads(answer["body"])["result"]["tools"]}
    assert "guest-start_session" in names


def test_mcp_of_every_tool_serves_public_tools_and_points_401s_at_its_metadata(cognito: None) -> None:
    gateway = load_family("gateway")
    gateway.mcp_endpoint.cache_clear()  # built with this test's settings
    try:
        served = rpc("gateway", "/mcp")
        assert served["statusCode"] == 200
        refused = rpc("gateway", "/mcp", "Bearer tfk_nosuchkey00_abcdefghijklmnopqrstuvwxyz012345")
        assert refused["statusCode"] == 401
        assert (
            f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
            in (refused["headers"]["www-authenticate"])
        )
    finally:
        gateway.mcp_endpoint.cache_clear()


def test_a_key_only_stack_challenges_with_no_metadata(aws: None) -> None:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    answer = rpc("catalogue", "/mcp/catalogue", "Bearer not-a-key")
    assert answer["statusCode"] == 401
    assert answer["headers"]["www-authenticate"] == 'Bearer realm="toolfront", error="invalid_token"'
    assert rpc("catalogue", "/mcp/catalogue")["statusCode"] == 200  # no sign-in to ask for: public list
