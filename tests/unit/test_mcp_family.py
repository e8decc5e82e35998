"""``POST /mcp/{family}``: a family's own MCP endpoint, served by the family's function itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture
def catalogue(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    return handler


def rpc(handler: Handler, method: str, params: dict[str, Any] | None = None, route: str = "catalogue") -> Any:
    event = load_event(
        "mcp_tools_call",
        body=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}),
    )
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST /mcp/{route}"
    event["rawPath"] = f"/mcp/{route}"
    event["headers"] = {**event["headers"], "authorization": f"Bearer {EVENT_ADMIN_KEY}"}
    return handler(event, None)


def test_a_family_endpoint_lists_its_tools_and_cores_only(catalogue: Handler) -> None:
    tools = json.loads(rpc(catalogue, "tools/list")["body"])["result"]["tools"]
    families = {tool["name"].split("-", 1)[0] for tool in tools}
    assert families == {"catalogue", "system"}
    assert "catalogue-list_products" in {tool["name"] for tool in tools}


@pytest.mark.parametrize("name", ["catalogue-list_products", "system-get_actor"])
def test_a_family_endpoint_runs_calls_in_its_own_function(catalogue: Handler, name: str) -> None:
    from botocore.stub import Stubber

    from toolfront.aws import clients

    with Stubber(clients.client("lambda")):  # no Lambda request may be made: a stubbed call would fail
        response = rpc(catalogue, "tools/call", {"name": name, "arguments": {}})
    result = json.loads(response["body"])["result"]
    assert response["statusCode"] == 200 and result["isError"] is False, result


def test_an_mcp_endpoint_of_no_family_is_404(aws: None) -> None:
    gateway: Handler = load_family("gateway").lambda_handler
    event = load_event("mcp_tools_call")
    event["routeKey"] = "POST /mcp/{family}"
    event["pathParameters"] = {"family": "nosuchfamily"}
    response = gateway(event, None)
    error = json.loads(response["body"])["error"]  # JSON-RPC: an MCP route answers in its own form
    assert response["statusCode"] == 404 and error["data"]["code"] == "not_found"


@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("family", ["catalogue", "nosuchfamily"])
def test_a_family_endpoint_has_no_stream_or_session_to_open(aws: None, method: str, family: str) -> None:
    # What SSE-first clients (mcp-remote) try after POST: API Gateway has no such route and hands it to
    # $default, whose 405 (Allow: POST) says "no stream here", in JSON-RPC, as an MCP route answers.
    gateway: Handler = load_family("gateway").lambda_handler
    event = load_event("mcp_tools_call")
    event["routeKey"] = event["requestContext"]["routeKey"] = "$default"
    event["requestContext"]["http"]["method"] = method
    event["rawPath"] = f"/mcp/{family}"
    response = gateway(event, None)
    assert (response["statusCode"], response["headers"]["allow"]) == (405, "POST")
    assert json.loads(response["body"])["error"]["data"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("name", ["api_key", "token", "apikey", "client_secret"])
def test_a_credential_in_the_url_of_a_family_endpoint_is_refused_as_on_mcp(
    catalogue: Handler, name: str
) -> None:
    event = load_event(
        "mcp_tools_call", body=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    )
    event["routeKey"] = event["requestContext"]["routeKey"] = "POST /mcp/catalogue"
    event["rawPath"] = "/mcp/catalogue"
    event["queryStringParameters"] = {name: EVENT_ADMIN_KEY}
    answer = catalogue(event, None)
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["error"]["data"]["code"] == "credential_in_url"
    assert EVENT_ADMIN_KEY not in answer["body"]
