"""Every shipped tool declares an output schema, and what its handler really answers (on moto) holds
to it: the schema OpenAPI, generated clients and MCP hosts read is true of the answer."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import load_family
from tests.unit.test_openapi import every_kind_of_approval
from toolfront import CallContext, Registry, Tool
from toolfront.adapters.mcp.results import tool_entry
from toolfront.auth.actors import Actor, ActorKind
from toolfront.calls.redaction import hash_client_token
from toolfront.tools.answers import answer_parts
from toolfront.tools.system import all_tools, system_tools

KEY_ACTOR = Actor(ActorKind.KEY, "abcdefghijkl", "shop", frozenset({"catalogue.*"}), frozenset({"catalogue"}))


def answered(tool: Tool, data: dict[str, Any], ctx: CallContext | None = None) -> dict[str, Any]:
    """The data ``tool``'s handler answers for ``data``, checked against its output schema."""
    ctx = ctx or CallContext("r", tool.name, actor=KEY_ACTOR)
    found, _ = answer_parts(tool, tool.handler(data, ctx))  # raises OutputSchemaError on a mismatch
    assert found is not None
    assert tool.validate_output(json.loads(json.dumps(found))) == (), (tool.name, found)
    return found


@pytest.fixture
def families(aws: None) -> dict[str, Tool]:
    modules: list[ModuleType | Any] = [load_family("catalogue"), load_family("guest").guest]  # a Family
    return {tool.name: tool for tool in Registry.from_modules(modules)}


def test_every_shipped_tool_declares_an_output_schema() -> None:
    assert [tool["name"] for tool in all_tools() if not tool["output_schema"]] == []


def test_catalogue_answers_hold_to_their_output_schemas(families: dict[str, Tool]) -> None:
    product = {"sku": "MUG-01", "name": "Enamel mug", "price_cents": 1200, "currency": "EUR"}
    assert answered(families["catalogue.create_product"], product) == {"product": product}
    answered(families["catalogue.create_product"], {**product, "sku": "CUP-02"})
    assert answered(families["catalogue.get_product"], {"sku": "MUG-01"}) == {"product": product}
    page = answered(families["catalogue.list_products"], {"limit": 1})
    assert page["next_cursor"] is not None
    assert (
        answered(families["catalogue.list_products"], {"cursor": page["next_cursor"]})["next_cursor"] is None
    )
    assert answered(families["catalogue.export_products"], {}) == {"count": 2}
    assert answered(families["catalogue.export_products"], {"format": "json"}) == {"count": 2}
    assert answered(families["catalogue.get_product_label"], {"sku": "MUG-01"}) == {"sku": "MUG-01"}
    prices = {"prices": [{"sku": "MUG-01", "price_cents": 1000}]}
    assert answered(families["catalogue.set_prices"], prices) == {"updated": 1}
    discounts = {"discounts": [{"sku": "MUG-01", "percent": 10}]}
    assert answered(families["catalogue.discount_products"], discounts) == {"updated": 1}
    assert answered(families["catalogue.delete_product"], {"sku": "CUP-02"}) == {"deleted": "CUP-02"}


def test_guest_answers_hold_to_their_output_schemas(families: dict[str, Tool]) -> None:
    anonymous = CallContext("r", "guest.start_session")
    token = answered(families["guest.start_session"], {}, anonymous)["session_token"]
    session = CallContext("r", "guest.x", client_token_hash=hash_client_token(token))
    email = "ann@example.com"
    subscribed = answered(
        families["guest.subscribe_newsletter"], {"session_token": token, "email": email}, session
    )
    assert subscribed == {"subscribed": email}
    found = answered(families["guest.get_subscription"], {"session_token": token}, session)
    assert found == {"email": email, "status": "confirmed"}


def test_core_answers_hold_to_their_output_schemas() -> None:
    tools = {tool.name: tool for tool in system_tools()}
    actor = answered(tools["system.get_actor"], {})["actor"]
    assert (actor["kind"], actor["principal"]) == ("key", "shop")
    listed = answered(tools["system.list_tools"], {})["tools"]
    assert "catalogue.delete_product" in {tool["name"] for tool in listed}
    anonymous = CallContext("r", "system.list_tools")
    assert answered(tools["system.list_tools"], {}, anonymous)["tools"]  # the public tools
    for approval in every_kind_of_approval():  # what get_approval, cancel_approval and confirm_call answer
        described = json.loads(json.dumps(approval.describe()))
        for name in ("system.get_approval", "system.cancel_approval", "system.confirm_call"):
            assert tools[name].validate_output(described) == (), (name, described)


def test_mcp_declares_an_output_schema_only_for_tools_never_held() -> None:
    """A held call's structuredContent is the pending_approval data, which an outputSchema would
    make MCP clients refuse (they validate structuredContent against it)."""
    for tool in all_tools():
        entry = tool_entry(tool)
        never_held = tool["name"].startswith("system.") or (
            tool["annotations"]["read_only"] and tool["danger"] is None
        )
        assert ("outputSchema" in entry) is never_held, tool["name"]
        if never_held:  # the tool's own schema, or an error result's structuredContent
            assert entry["outputSchema"]["anyOf"][0] == tool["output_schema"]
            assert entry["outputSchema"]["anyOf"][1]["required"] == ["error"]
