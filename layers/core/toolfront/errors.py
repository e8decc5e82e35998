"""Every error toolfront raises, under one base class.

ToolfrontError
├── ToolDefinitionError      a tool declaration breaks a rule of the tool spec (``.errors``)
├── RegistryError            the set of tools cannot be served
│   └── DuplicateToolError   two tools share a name
└── ToolError                raised by a handler: a refusal with its own code and 4xx status

Errors that reach a caller carry a stable ``code`` and an ``http_status``; they are mapped to
HTTP and to MCP in exactly two places, the REST and MCP adapters.
"""

from __future__ import annotations

from typing import Any


class ToolfrontError(Exception):
    """Base of every toolfront error."""

    code: str = "internal_error"
    http_status: int = 500

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ToolDefinitionError(ToolfrontError):
    """A tool declaration breaks one or more rules; ``errors`` lists every problem at once."""

    code = "invalid_tool_definition"

    def __init__(self, errors: list[str], *, name: object = None) -> None:
        label = f"tool {name!r}" if isinstance(name, str) else "tool"
        super().__init__(f"{label} is invalid: " + "; ".join(errors), details=list(errors))
        self.errors = list(errors)


class RegistryError(ToolfrontError):
    """The registry cannot serve the tools it was given."""

    code = "registry_error"


class DuplicateToolError(RegistryError):
    """Two tools were declared under one name."""

    code = "duplicate_tool"


class ToolError(ToolfrontError):
    """A handler's refusal: its own snake_case code, a message for the caller and a 4xx status.

    Example: ``raise ToolError("not_found", "no product with sku 'X-1'", 404)``.
    """

    def __init__(self, code: str, message: str, status: int = 400, *, details: Any = None) -> None:
        if not 400 <= status <= 499:
            raise ValueError(f"a tool error's status must be a 4xx, got {status}")
        super().__init__(message, details=details)
        self.code = code
        self.http_status = status
