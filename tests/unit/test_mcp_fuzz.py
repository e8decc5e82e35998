"""The MCP endpoint fuzzed with generated JSON-RPC messages: never a 5xx, never invalid JSON."""

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
def gateway(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("gateway").lambda_handler
    return handler


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, headers=HEADERS)
def test_mcp_never_answers_5xx_or_invalid_json(gateway: Handler, body: str, headers: dict[str, str]) -> None:
    event = load_event("mcp_tools_call", body=body)
    event["headers"] = {
        k: v for k, v in event["headers"].items() if k not in ("mcp-protocol-version", "content-type")
    } | headers
    response = gateway(event, None)
    assert response["statusCode"] < 500, (body, response["body"])
    if response["body"]:
        answer = json.loads(response["body"], parse_constant=_no_constants)
        assert isinstance(answer, dict)


def _no_constants(name: str) -> Any:
    raise AssertionError(f"the answer holds {name}, which is not JSON")
