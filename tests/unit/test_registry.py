"""The registry: collection from modules, warnings, duplicates, lookups and the manifest."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from toolfront import DuplicateToolError, Registry, Tool
from toolfront.tools.registry import collect_module_tools, module_name


def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def tool_fields(name: str, **overrides: Any) -> dict[str, Any]:
    namespace = name.split(".", maxsplit=1)[0]
    fields: dict[str, Any] = {
        "name": name,
        "audience": "admin",
        "scope": f"{namespace}.things:read",
        "permission": namespace,
        "handler": handler,
    }
    fields.update(overrides)
    return fields


def family(name: str, *tools: Any) -> SimpleNamespace:
    return SimpleNamespace(FAMILY=name, api_tools=lambda: list(tools))


def test_from_modules_registers_every_tool_and_fills_module() -> None:
    shop = family(
        "shop", Tool.new(**tool_fields("shop.get_item")), Tool.new(**tool_fields("shop.list_items"))
    )
    registry = Registry.from_modules([shop])
    assert registry.names() == ["shop.get_item", "shop.list_items"]
    assert {tool.module for tool in registry} == {"shop"}


def test_from_modules_accepts_dicts_of_tool_fields() -> None:
    registry = Registry.from_modules([family("shop", tool_fields("shop.get_item"))])
    tool = registry["shop.get_item"]
    assert isinstance(tool, Tool)
    assert tool.title == "shop.get_item"


def test_invalid_tool_is_ignored_with_one_warning_per_module(caplog: pytest.LogCaptureFixture) -> None:
    shop = family(
        "shop",
        tool_fields("shop.get_item"),
        tool_fields("shop.bad_one", scope=None),
        tool_fields("shop.bad_two", danger="sometimes"),
        "not a tool",
    )
    with caplog.at_level(logging.WARNING, logger="toolfront.tools.registry"):
        registry = Registry.from_modules([shop])
    assert registry.names() == ["shop.get_item"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "module shop: ignored 3 invalid tool(s)" in message
    assert "'shop.bad_one' (scope is required for an admin tool)" in message
    assert "shop.bad_two" in message


def test_tool_object_that_breaks_a_rule_is_ignored() -> None:
    broken = Tool(
        name="shop.get_item", audience=Tool.new(**tool_fields("shop.get_item")).audience, handler=handler
    )
    assert collect_module_tools(family("shop", broken)) == []


def test_system_tools_of_a_module_are_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    sneaky = Tool.new(name="system.drop_tables", audience="admin", handler=handler)
    with caplog.at_level(logging.WARNING, logger="toolfront.tools.registry"):
        registry = Registry.from_modules([family("shop", sneaky, tool_fields("shop.get_item"))])
    assert "system.drop_tables" not in registry
    assert "shop.get_item" in registry
    assert any("system namespace: system.drop_tables" in r.getMessage() for r in caplog.records)


def test_core_system_tools_are_registered() -> None:
    core = Tool.new(name="system.get_actor", audience="admin", handler=handler, module="core")
    registry = Registry.from_modules([], core_tools=[core])
    assert registry.get("system.get_actor") is core


def test_duplicate_names_across_modules_are_refused() -> None:
    first = family("shop", tool_fields("shop.get_item"))
    second = family("store", tool_fields("shop.get_item"))
    with pytest.raises(DuplicateToolError, match=r"'shop\.get_item' is declared twice"):
        Registry.from_modules([first, second])


def test_module_whose_api_tools_fails_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    def explode() -> list[Tool]:
        raise RuntimeError("boom")

    broken = SimpleNamespace(FAMILY="broken", api_tools=explode)
    with caplog.at_level(logging.WARNING, logger="toolfront.tools.registry"):
        registry = Registry.from_modules([broken, family("shop", tool_fields("shop.get_item"))])
    assert registry.names() == ["shop.get_item"]
    assert any(
        "module broken: api_tools() failed (RuntimeError: boom)" in r.getMessage() for r in caplog.records
    )


def test_module_without_api_tools_offers_nothing() -> None:
    assert collect_module_tools(SimpleNamespace(FAMILY="empty")) == []


def test_module_name_prefers_family_then_last_import_part() -> None:
    assert module_name(SimpleNamespace(FAMILY="shop", __name__="functions.shop.app")) == "shop"
    assert module_name(SimpleNamespace(__name__="functions.shop.app")) == "app"


def test_lookup_unknown_name_answers_none() -> None:
    registry = Registry.from_modules([family("shop", tool_fields("shop.get_item"))])
    assert registry.get("shop.nope_nope") is None
    assert "shop.nope_nope" not in registry
    assert len(registry) == 1


def test_listing_is_sorted_by_name_whatever_the_declaration_order() -> None:
    registry = Registry.from_modules(
        [family("zoo", tool_fields("zoo.feed_lions")), family("ant", tool_fields("ant.count_ants"))]
    )
    assert [tool.name for tool in registry] == ["ant.count_ants", "zoo.feed_lions"]


def test_manifest_is_json_describing_every_tool() -> None:
    shop = family(
        "shop",
        tool_fields("shop.get_item", annotations={"read_only": True}, max_items=5, cost=2),
        tool_fields("shop.delete_item", scope="shop.things:write", danger="always"),
    )
    manifest = json.loads(json.dumps(Registry.from_modules([shop]).manifest()))
    assert manifest["version"] == 1
    by_name = {tool["name"]: tool for tool in manifest["tools"]}
    assert list(by_name) == ["shop.delete_item", "shop.get_item"]
    item = by_name["shop.get_item"]
    assert item["module"] == "shop"
    assert item["scope"] == "shop.things:read"
    assert item["annotations"]["read_only"] is True
    assert (item["max_items"], item["cost"], item["danger"]) == (5, 2, None)
    assert by_name["shop.delete_item"]["danger"] == "always"
    assert item["input_schema"] == {"type": "object", "properties": {}, "additionalProperties": False}
