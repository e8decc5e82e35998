"""What a handler returned, made into the answer's parts: JSON data and, for a ``ToolResult``, its
content blocks in wire form. A tool's ``output_schema`` holds here, before anything is stored or
sent: data that breaks it is the tool's bug (a 500, the data never kept), named by paths only.
"""

from __future__ import annotations

from typing import Any

from toolfront.results import ToolResult, wire
from toolfront.tools.definition import Tool


class OutputSchemaError(Exception):
    """A handler answered data its tool's ``output_schema`` refuses. The message names the tool and
    the JSON Pointer paths that fail, never a value (it is logged)."""

    def __init__(self, tool: str, paths: list[str]) -> None:
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        super().__init__(f"{tool} answered data that does not match its output_schema (at {shown})")
        self.tool, self.paths = tool, paths


def answer_parts(tool: Tool, returned: Any) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """``(data, content)`` of what ``tool``'s handler returned (``content`` is None for a plain dict).

    Raises:
        TypeError: the handler returned neither a dict nor a ``ToolResult``.
        OutputSchemaError: the data does not match the tool's ``output_schema``.
    """
    if isinstance(returned, ToolResult):
        default = tool.mime_types[0] if tool.mime_types else None  # the first declared type
        data, content = returned.data, [wire(block, default) for block in returned.content]
    elif isinstance(returned, dict):
        data, content = returned, None
    else:
        raise TypeError(
            f"handler of {tool.name} returned {type(returned).__name__}, not a dict or ToolResult"
        )
    if tool.output_schema is not None:
        if data is None:
            raise OutputSchemaError(tool.name, ["(no data: a tool with an output_schema answers data)"])
        errors = tool.validate_output(data)
        if errors:
            raise OutputSchemaError(tool.name, sorted({error.path or "/" for error in errors}))
    return data, content
