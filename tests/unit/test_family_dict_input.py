"""DESIGN section 12: an input annotated ``dict`` means "give the schema"; without ``input_schema=``
the tool is refused where it is declared, not served with an empty closed schema."""

from __future__ import annotations

from typing import Any, Dict  # noqa: UP035 (the old spelling is a dict annotation too)

import pytest

from toolfront import CallContext, Family
from toolfront.errors import ToolDefinitionError


def _declare_plain_dict(notes: Family) -> None:
    @notes.tool(scope="notes.entries:write")
    def add_note(data: dict, ctx: CallContext) -> dict:  # type: ignore[type-arg]
        return data


def _declare_dict_str_any(notes: Family) -> None:
    @notes.tool(scope="notes.entries:write")
    def add_note(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return data


def _declare_typing_dict(notes: Family) -> None:
    @notes.tool(scope="notes.entries:write")
    def add_note(data: Dict[str, Any], ctx: CallContext) -> dict[str, Any]:  # noqa: UP006
        return data


@pytest.mark.parametrize("declare", [_declare_plain_dict, _declare_dict_str_any, _declare_typing_dict])
def test_family_tool_dict_input_without_schema_is_refused_naming_the_tool(declare: Any) -> None:
    notes = Family("notes", permission="notes")
    with pytest.raises(ToolDefinitionError) as raised:
        declare(notes)
    message = str(raised.value)
    assert "notes.add_note" in message and "input_schema=" in message
    assert notes.api_tools() == []


def test_family_tool_dict_input_with_schema_is_accepted() -> None:
    notes = Family("notes", permission="notes")
    given = {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False}

    @notes.tool(scope="notes.entries:write", input_schema=given)
    def add_note(data: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return data

    (tool,) = notes.api_tools()
    assert tool.input_schema == given
