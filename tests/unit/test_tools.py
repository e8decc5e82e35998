"""Every rule of the tool definition (docs/authoring.md), one test each."""

from __future__ import annotations

from typing import Any

import pytest

from toolfront import Annotations, Audience, CallContext, Tool, ToolDefinitionError
from toolfront.auth.actors import ActorKind


def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"ok": True}


def admin(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": "catalogue.get_product",
        "audience": "admin",
        "scope": "catalogue.products:read",
        "permission": "catalogue",
        "handler": handler,
    }
    fields.update(overrides)
    return fields


TOKEN_SCHEMA = {
    "type": "object",
    "properties": {"session_token": {"type": "string"}, "email": {"type": "string", "format": "email"}},
    "required": ["session_token", "email"],
    "additionalProperties": False,
}


def public(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"name": "guest.start_session", "audience": "public", "handler": handler}
    fields.update(overrides)
    return fields


def errors_of(**fields: Any) -> list[str]:
    tool, errors = Tool.try_new(**fields)
    assert tool is None
    return errors


# --- building -------------------------------------------------------------------------------


def test_new_valid_admin_tool_fills_defaults() -> None:
    tool = Tool.new(**admin())
    assert tool.title == "catalogue.get_product"
    assert tool.description == ""
    assert tool.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert tool.annotations == Annotations()
    assert tool.replay is True
    assert tool.danger is None and tool.cost is None and tool.max_items is None
    assert tool.client_token is None and tool.credentials == () and tool.module is None
    assert tool.audience is Audience.ADMIN


def test_new_invalid_tool_raises_with_every_problem_at_once() -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        Tool.new(**admin(name="Bad Name", scope=None, danger="sometimes", cost=0, max_items=-1))
    errors = raised.value.errors
    assert len(errors) == 5
    assert any("name" in e for e in errors)
    assert any("scope is required" in e for e in errors)
    assert any("danger" in e for e in errors)
    assert any("cost" in e for e in errors)
    assert any("max_items" in e for e in errors)


def test_try_new_valid_tool_answers_tool_and_no_errors() -> None:
    tool, errors = Tool.try_new(**admin())
    assert isinstance(tool, Tool)
    assert errors == []


def test_try_new_invalid_tool_answers_none_and_errors() -> None:
    tool, errors = Tool.try_new(**admin(audience="staff"))
    assert tool is None
    assert errors == ["audience must be 'admin' or 'public', got 'staff'"]


def test_try_new_missing_required_fields_names_each() -> None:
    assert errors_of() == ["name is required", "audience is required", "handler is required"]


def test_try_new_unknown_field_is_refused() -> None:
    assert errors_of(**admin(colour="red")) == ["unknown field 'colour'"]


# --- name -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["catalogue.set_prices", "guest.start_session", "a.b_c", "my_mod2.get_item_by_id", "x.do_1"],
)
def test_name_of_namespace_verb_noun_is_accepted(name: str) -> None:
    assert Tool.new(**admin(name=name)).name == name


@pytest.mark.parametrize(
    "name",
    [
        "catalogue",  # no dot
        "catalogue.prices",  # no _noun
        "catalogue.set_prices.now",  # two dots
        "Catalogue.set_prices",  # uppercase
        "catalogue.Set_prices",
        "catalogue.set_Prices",
        "1catalogue.set_prices",  # namespace starts with a digit
        "catalogue.set__prices",  # empty word
        "catalogue.set_prices_",
        "catalogue._set_prices",
        "catalogue.set-prices",
        ".set_prices",
        "catalogue.set prices",
    ],
)
def test_name_malformed_is_refused(name: str) -> None:
    assert any("must be '<namespace>.<verb>_<noun>'" in e for e in errors_of(**admin(name=name)))


def test_name_of_100_characters_is_accepted() -> None:
    name = "ns.get_" + "x" * 93
    assert len(name) == 100
    assert Tool.new(**admin(name=name)).name == name


def test_name_over_100_characters_is_refused() -> None:
    name = "ns.get_" + "x" * 94
    assert errors_of(**admin(name=name)) == ["name must be at most 100 characters, got 101"]


def test_name_not_a_string_is_refused() -> None:
    assert errors_of(**admin(name=42)) == ["name must be a string, got int"]


# --- audience, scope, permission --------------------------------------------------------------


def test_audience_public_string_becomes_enum() -> None:
    assert Tool.new(**public()).audience is Audience.PUBLIC


def test_audience_unknown_is_refused() -> None:
    assert errors_of(**admin(audience="everyone")) == ["audience must be 'admin' or 'public', got 'everyone'"]


def test_scope_missing_on_admin_tool_is_refused() -> None:
    assert errors_of(**admin(scope=None)) == ["scope is required for an admin tool"]


def test_permission_missing_on_admin_tool_is_refused() -> None:
    assert errors_of(**admin(permission=None)) == ["permission is required for an admin tool"]


@pytest.mark.parametrize(
    "scope",
    ["catalogue", "catalogue.products", "catalogue:read", "catalogue.products:*", "Catalogue.products:read"],
)
def test_scope_not_module_resource_action_is_refused(scope: str) -> None:
    assert any("scope" in e and "malformed" in e for e in errors_of(**admin(scope=scope)))


def test_permission_malformed_is_refused() -> None:
    assert any("permission" in e for e in errors_of(**admin(permission="has spaces")))


def test_public_tool_with_scope_is_refused() -> None:
    errors = errors_of(**public(scope="guest.sessions:write"))
    assert errors == ["scope must be None for public tools, got 'guest.sessions:write'"]


def test_public_tool_with_permission_is_refused() -> None:
    assert errors_of(**public(permission="guest")) == [
        "permission must be None for public tools, got 'guest'"
    ]


def test_system_tool_without_scope_or_permission_is_accepted() -> None:
    tool = Tool.new(name="system.get_actor", audience="admin", handler=handler)
    assert tool.is_system
    assert tool.scope is None and tool.permission is None


def test_system_tool_with_scope_is_refused() -> None:
    errors = errors_of(name="system.get_actor", audience="admin", handler=handler, scope="system.actor:read")
    assert errors == ["scope must be None for core's system.* tools, got 'system.actor:read'"]


# --- texts, handler, annotations ----------------------------------------------------------------


def test_title_and_description_given_are_kept() -> None:
    tool = Tool.new(**admin(title="Get a product", description="Returns one product."))
    assert (tool.title, tool.description) == ("Get a product", "Returns one product.")


def test_title_not_a_string_is_refused() -> None:
    assert errors_of(**admin(title=3)) == ["title must be a string"]


def test_handler_not_callable_is_refused() -> None:
    assert errors_of(**admin(handler="app.handler")) == [
        "handler must be a callable handler(input, ctx) -> dict or ToolResult"
    ]


def test_annotations_dict_becomes_annotations_with_false_defaults() -> None:
    tool = Tool.new(**admin(annotations={"read_only": True}))
    assert tool.annotations == Annotations(
        read_only=True, destructive=False, idempotent=False, open_world=False
    )


def test_annotations_object_is_kept() -> None:
    given = Annotations(destructive=True, open_world=True)
    assert Tool.new(**admin(annotations=given)).annotations is given


def test_annotations_unknown_hint_is_refused() -> None:
    assert errors_of(**admin(annotations={"readonly": True})) == ["annotations has unknown hints: readonly"]


def test_annotations_non_boolean_hint_is_refused() -> None:
    assert errors_of(**admin(annotations={"read_only": "yes"})) == ["annotations hints must be booleans"]


# --- schemas ------------------------------------------------------------------------------------


def test_input_schema_with_unsupported_keyword_is_refused_naming_keyword_and_path() -> None:
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}
    assert errors_of(**admin(input_schema=schema)) == [
        "input_schema unsupported keyword 'anyOf' at /properties/a/anyOf"
    ]


def test_input_schema_not_an_object_type_is_refused() -> None:
    errors = errors_of(**admin(input_schema={"type": "array"}))
    assert errors == ['input_schema must have "type": "object" at its root']


def test_input_schema_declaring_idempotency_key_is_refused() -> None:
    schema = {"type": "object", "properties": {"idempotency_key": {"type": "string"}}}
    assert errors_of(**admin(input_schema=schema)) == [
        "input_schema may not declare the control field 'idempotency_key'"
    ]


def test_output_schema_is_checked_like_input_schema() -> None:
    errors = errors_of(**admin(output_schema={"type": "object", "oneOf": []}))
    assert errors == ["output_schema unsupported keyword 'oneOf' at /oneOf"]


def test_output_schema_valid_is_kept() -> None:
    schema = {"type": "object", "properties": {"product": {"type": "object"}}}
    assert Tool.new(**admin(output_schema=schema)).output_schema == schema


# --- danger -------------------------------------------------------------------------------------


def test_danger_always_is_accepted() -> None:
    assert Tool.new(**admin(danger="always")).danger == "always"


def test_danger_callable_is_accepted() -> None:
    def check(data: dict[str, Any], ctx: Any) -> bool:
        return True

    assert Tool.new(**admin(danger=check)).danger is check


@pytest.mark.parametrize("danger", ["never", True, 1, {"when": "always"}, ("mod", "fun")])
def test_danger_other_value_is_refused(danger: Any) -> None:
    assert any(
        e.startswith("danger must be None, 'always' or a callable") for e in errors_of(**admin(danger=danger))
    )


# --- replay -------------------------------------------------------------------------------------


def test_replay_false_is_accepted_and_withdraws_idempotency() -> None:
    tool = Tool.new(**admin(name="catalogue.issue_token", scope="catalogue.tokens:write", replay=False))
    assert tool.replay is False
    assert tool.offers_idempotency is False


def test_replay_default_offers_idempotency_on_writes_only() -> None:
    assert Tool.new(**admin()).offers_idempotency is True
    assert Tool.new(**admin(annotations={"read_only": True})).offers_idempotency is False


def test_replay_not_a_boolean_is_refused() -> None:
    assert errors_of(**admin(replay="no")) == ["replay must be true or false, got 'no'"]


# --- client_token -------------------------------------------------------------------------------


def test_client_token_naming_a_string_property_is_accepted() -> None:
    tool = Tool.new(
        **public(name="guest.get_subscription", client_token="session_token", input_schema=TOKEN_SCHEMA)
    )
    assert tool.client_token == "session_token"


def test_client_token_on_admin_tool_is_refused() -> None:
    errors = errors_of(**admin(client_token="session_token", input_schema=TOKEN_SCHEMA))
    assert errors == ["client_token is only for public tools"]


def test_client_token_naming_a_missing_property_is_refused() -> None:
    errors = errors_of(**public(client_token="guest_token", input_schema=TOKEN_SCHEMA))
    assert errors == ["client_token 'guest_token' must name a string property of input_schema"]


def test_client_token_naming_a_non_string_property_is_refused() -> None:
    schema = {"type": "object", "properties": {"session_token": {"type": "integer"}}}
    errors = errors_of(**public(client_token="session_token", input_schema=schema))
    assert errors == ["client_token 'session_token' must name a string property of input_schema"]


def test_public_tool_with_danger_without_client_token_is_refused() -> None:
    errors = errors_of(**public(danger="always", input_schema=TOKEN_SCHEMA))
    assert errors == ["a public tool with a danger must declare a client_token (and require it)"]


def test_public_tool_with_danger_and_optional_client_token_is_refused() -> None:
    schema = {**TOKEN_SCHEMA, "required": ["email"]}
    errors = errors_of(**public(danger="always", client_token="session_token", input_schema=schema))
    assert errors == [
        "client_token 'session_token' must be listed in input_schema's required (the tool has a danger)"
    ]


def test_public_tool_with_danger_and_required_client_token_is_accepted() -> None:
    tool = Tool.new(
        **public(
            name="guest.subscribe_newsletter",
            danger="always",
            client_token="session_token",
            input_schema=TOKEN_SCHEMA,
        )
    )
    assert tool.danger == "always"


# --- credentials, max_items, cost ---------------------------------------------------------------


def test_credentials_list_becomes_tuple() -> None:
    assert Tool.new(**admin(credentials=["claim_url"])).credentials == ("claim_url",)


@pytest.mark.parametrize("credentials", ["claim_url", [""], [1], {"claim_url": True}])
def test_credentials_not_a_list_of_names_is_refused(credentials: Any) -> None:
    assert errors_of(**admin(credentials=credentials)) == ["credentials must be a list of output field names"]


@pytest.mark.parametrize("max_items", [1, 500])
def test_max_items_positive_is_accepted(max_items: int) -> None:
    assert Tool.new(**admin(max_items=max_items)).max_items == max_items


@pytest.mark.parametrize("max_items", [0, -1, 2.5, "10", True])
def test_max_items_not_positive_integer_is_refused(max_items: Any) -> None:
    errors = errors_of(**admin(max_items=max_items))
    assert errors == [f"max_items must be None or a positive integer, got {max_items!r}"]


@pytest.mark.parametrize("cost", [1, 1000])
def test_cost_fixed_within_range_is_accepted(cost: int) -> None:
    assert Tool.new(**admin(cost=cost)).cost == cost


def test_cost_callable_is_accepted() -> None:
    def cost(data: dict[str, Any]) -> int:
        return 3

    assert Tool.new(**admin(cost=cost)).cost is cost


@pytest.mark.parametrize("cost", [0, 1001, -5, 1.5, "3", True])
def test_cost_outside_rule_is_refused(cost: Any) -> None:
    errors = errors_of(**admin(cost=cost))
    assert errors == [f"cost must be None, an integer from 1 to 1000, or a callable(input), got {cost!r}"]


# --- checking a tool built another way ----------------------------------------------------------


def test_problems_of_directly_built_tool_reports_broken_rules() -> None:
    tool = Tool(
        name="catalogue.get_product",
        audience=Audience.PUBLIC,
        handler=handler,
        scope="catalogue.products:read",
    )
    assert tool.problems() == ["scope must be None for public tools, got 'catalogue.products:read'"]


def test_describe_is_json_data_naming_callables_by_kind() -> None:
    def check(data: dict[str, Any], ctx: Any) -> bool:
        return False

    described = Tool.new(**admin(danger=check, cost=lambda data: 2)).describe()
    assert described["danger"] == "check"
    assert described["cost"] == "dynamic"
    assert described["audience"] == "admin"
    assert described["annotations"] == {
        "read_only": False,
        "destructive": False,
        "idempotent": False,
        "open_world": False,
    }


def test_a_context_always_has_an_actor_an_anonymous_one_when_built_by_hand() -> None:
    ctx = CallContext("r", "guest.start_session")
    assert (ctx.actor.kind, ctx.actor.id, ctx.actor.authenticated) == (ActorKind.ANONYMOUS, "", False)
