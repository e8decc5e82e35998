"""The MCP endpoints (``/mcp`` and a family's ``/mcp/{family}``) fuzzed with generated JSON-RPC
messages: never a 5xx, never invalid JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event
from tests.strategies import JSON_VALUES

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
METHODS = st.sampled_from(
    ["initialize", "ping", "tools/list", "tools/call", "server/discover", "notifications/initialized"]
) | st.text(max_size=12)
TOOL_NAMES = st.sampled_from(["system.list_tools", "system.get_actor", "catalogue.list_products"]) | st.text(
    max_size=20
)
META = st.fixed_dictionaries(
    {}, optional={"io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "1999-01-01"])}
)
PARAMS = st.one_of(
    st.none(),
    JSON_VALUES,
    st.fixed_dictionaries(
        {"name": TOOL_NAMES},
        optional={"arguments": JSON_VALUES, "_meta": META, "protocolVersion": JSON_VALUES},
    ),
)
MESSAGES = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"]), "method": METHODS},
    optional={"id": JSON_VALUES, "params": PARAMS},
)
BODIES = MESSAGES.map(json.dumps) | st.text(max_size=40) | JSON_VALUES.map(json.dumps)
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "mcp-protocol-version": st.sampled_from(["2025-06-18", "2025-11-25", "2026-07-28", "bogus"]),
        "authorization": st.sampled_from([f"Bearer {EVENT_ADMIN_KEY}", "Bearer tfk_nope", "Basic x"]),
        "content-type": st.sampled_from(["application/json", "text/plain"]),
    },
)


@pytest.fixture
def endpoints(aws: None) -> dict[str, Handler]:
    """Each MCP route and the function that serves it."""
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    return {
        "/mcp": load_family("gateway").lambda_handler,
        "/mcp/catalogue": load_family("catalogue").lambda_handler,
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/mcp", "/mcp/catalogue"]), body=BODIES, headers=HEADERS)
def test_mcp_never_answers_5xx_or_invalid_json(
    endpoints: dict[str, Handler], path: str, body: str, headers: dict[str, str]
) -> None:
    event = load_event("mcp_tools_call", body=body)
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST {path}"
    event["rawPath"] = path
    event["headers"] = {
        k: v for k, v in event["headers"].items() if k not in ("mcp-protocol-version", "content-type")
    } | headers
    response = endpoints[path](event, None)
    assert response["statusCode"] < 500, (body, response["body"])
    assert response["headers"]["x-request-id"]
    if response["body"]:
        answer = json.loads(response["body"], parse_constant=_no_constants)
        assert isinstance(answer, dict)


def _no_constants(name: str) -> Any:
    raise AssertionError(f"the answer holds {name}, which is not JSON")
