"""The checks of a tool's input that follow the rate limit: ``max_items``, a required client token,
and the input schema (the contract's order; the pipeline runs them before its rate-limit write,
because an idempotency claim rides in that write, and raises their refusals after it)."""

from __future__ import annotations

from typing import Any

from toolfront.errors import ClientTokenRequiredError, InvalidInputError, TooManyItemsError
from toolfront.tools.definition import Tool
from toolfront.tools.rules import longest_list


def check_max_items(tool: Tool, arguments: dict[str, Any]) -> None:
    if tool.max_items is None:
        return
    longest = longest_list(arguments)
    if longest > tool.max_items:
        raise TooManyItemsError(
            f"a list in the input has {longest} items; {tool.name} takes at most {tool.max_items}",
            details={"max_items": tool.max_items, "items": longest},
        )


def check_input(tool: Tool, arguments: dict[str, Any]) -> None:
    token = tool.client_token
    if token and token in (tool.input_schema.get("required") or []) and not arguments.get(token):
        raise ClientTokenRequiredError(
            f"{tool.name} needs the client token {token!r} (call the tool that starts a session first)",
            details={"field": token},
        )
    errors = tool.validate_input(arguments)
    if errors:
        plural = "s" if len(errors) > 1 else ""
        raise InvalidInputError(
            f"the input does not match the tool's schema ({len(errors)} error{plural})",
            details=[e.as_dict() for e in errors],
        )
