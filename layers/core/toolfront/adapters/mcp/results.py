"""How MCP sees toolfront's tools and answers (docs/contract.md, "MCP").

On MCP a tool is called by its MCP name: the dot of ``catalogue.list_products`` becomes a dash
(``catalogue-list_products``), because the tool-name rules of the model APIs behind the assistants
(``^[a-zA-Z0-9_-]{1,64}$``) refuse a dot, and clients hand MCP names to the model unchanged. Every
text an agent reads here names tools that way; ``tools/call`` takes either form.

Tool entries are serialised once per cold start (per tool) and joined per caller, so ``tools/list``
costs a string join, not a JSON encoding of every schema on every request.
"""

from __future__ import annotations

import re
from typing import Any

from toolfront.encoding import compact_json as _encode
from toolfront.tools.manifest import ToolInfo, offered_input_schema
from toolfront.tools.rules import MCP_NAME_MAX, mcp_name

__all__ = ["MCP_NAME_MAX", "mcp_name"]  # MCP's name rule, kept with the tools' rules

FINAL_STATUSES = "succeeded, failed, rejected, expired or cancelled"


def mcp_text(text: str, names: re.Pattern[str] | None = None) -> str:
    """``text`` with every dotted tool name it mentions written as that tool's MCP name."""
    pattern = names or _DOTTED
    return pattern.sub(lambda found: mcp_name(found.group(0)), text)


_GET_APPROVAL = mcp_name("system.get_approval")
# A dotted tool name anywhere in a text (the grammar of tool names, bounded by non-name characters).
_DOTTED = re.compile(r"(?<![\w.])[a-z][a-z0-9_]*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w|\.\w)")


def tool_entry(tool: dict[str, Any]) -> dict[str, Any]:
    """A manifest tool as an MCP ``Tool``; all four hints explicit (MCP's defaults differ from ours:
    ``destructiveHint`` and ``openWorldHint`` default to true there)."""
    hints = tool["annotations"]
    entry: dict[str, Any] = {
        "name": mcp_name(tool["name"]),
        "title": tool["title"],
        "description": mcp_text(tool["description"]),
        "inputSchema": offered_input_schema(tool),
        "annotations": {
            "title": tool["title"],
            "readOnlyHint": hints["read_only"],
            "destructiveHint": hints["destructive"],
            "idempotentHint": hints["idempotent"],
            "openWorldHint": hints["open_world"],
        },
    }
    if offers_tasks(tool):
        entry["execution"] = {"taskSupport": "optional"}
    # A held call's structuredContent is the pending_approval data, which clients refuse against
    # the tool's outputSchema (they validate it): only a tool that is never held declares one.
    if has_output_schema(tool):
        entry["outputSchema"] = {"type": "object", "anyOf": [tool["output_schema"], ERROR_RESULT_SCHEMA]}
    if tool.get("icons"):
        entry["icons"] = [_icon(icon) for icon in tool["icons"]]
    meta = dict(tool.get("meta") or {})
    if tool.get("search_hint"):  # for clients that defer tool definitions and search them
        meta["anthropic/searchHint"] = tool["search_hint"]
    if tool.get("always_load"):
        meta["anthropic/alwaysLoad"] = True
    if meta or tool.get("meta") is not None:
        entry["_meta"] = meta
    return entry


#: What an error result's ``structuredContent`` holds: a tool's ``outputSchema`` admits it beside the
#: tool's own data, since clients check ``structuredContent`` against it even on an ``isError``
#: result (the TypeScript SDK does).
ERROR_RESULT_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}


def has_output_schema(tool: dict[str, Any]) -> bool:
    """Whether the tool's MCP entry has an ``outputSchema``: it declares one and is never held (a
    held call's ``structuredContent`` is its ``pending_approval`` data, which no client would
    accept against the tool's schema)."""
    return bool(tool.get("output_schema")) and not ToolInfo.of(tool).may_be_held


def offers_tasks(tool: dict[str, Any]) -> bool:
    """Whether a tool takes tasks (``execution.taskSupport``): an admin write that a person may
    have to confirm (a held call is a task), whose answer its idempotency record keeps (so a call
    that runs at once is a task too: ``tasks.py``)."""
    info = ToolInfo.of(tool)
    return tool["audience"] == "admin" and info.may_be_held and info.offers_idempotency


def _icon(icon: dict[str, Any]) -> dict[str, Any]:
    """An icon in MCP's spelling (``mimeType``)."""
    found: dict[str, Any] = {"src": icon["src"]}
    if icon.get("mime_type"):
        found["mimeType"] = icon["mime_type"]
    if icon.get("sizes"):
        found["sizes"] = icon["sizes"]
    return found


class ToolCatalog:
    """Every served tool, by name, with its MCP entry encoded once (per cold start)."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        # tools/call takes the MCP name and the dotted name alike
        self.by_name = {tool["name"]: tool for tool in tools} | {mcp_name(t["name"]): t for t in tools}
        self._encoded = {tool["name"]: _encode(tool_entry(tool)) for tool in tools}

    def entries_text(self, names: list[str]) -> str:
        """The JSON array of the named tools' entries, joined from their encoded text."""
        return "[" + ",".join(self._encoded[name] for name in names) + "]"


def success_result(data: Any) -> dict[str, Any]:
    """``structuredContent`` plus a text block of the same JSON (for clients without structured output)."""
    return {"content": [{"type": "text", "text": _encode(data)}], "structuredContent": data, "isError": False}


def error_result(error: dict[str, Any]) -> dict[str, Any]:
    """A per-call failure: a normal result with ``isError``, carrying the REST error object."""
    body = {"error": error}
    return {"content": [{"type": "text", "text": _encode(body)}], "structuredContent": body, "isError": True}


def held_result(data: dict[str, Any]) -> dict[str, Any]:
    """A call held for a person: not an error; the agent is told how to follow it."""
    text = (
        f"This call is waiting for a person's confirmation (approval {data.get('approval_id')}, expires "
        f"{data.get('expires_at')}); nothing has run yet. Poll the tool {_GET_APPROVAL} with "
        f'{{"approval_id": "{data.get("approval_id")}"}} until its status is {FINAL_STATUSES}; '
        "once succeeded, its result is the call's answer."
    )
    return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}


def result_of_answer(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The MCP result of a tool call's REST answer (status and envelope)."""
    if "error" in body:
        return error_result(body["error"])
    if status == 202:
        return held_result(body["data"])
    if "content" in body:
        return content_result(body["content"], body.get("data"))
    return success_result(body["data"])


def content_result(content: list[dict[str, Any]], data: Any) -> dict[str, Any]:
    """A ``ToolResult``'s blocks in the handler's order; its data as ``structuredContent``, and then
    as one text block at the end unless the handler gave a text block itself."""
    blocks = list(content)
    result: dict[str, Any] = {"content": blocks, "isError": False}
    if data is not None:
        result["structuredContent"] = data
        if not any(block.get("type") == "text" for block in blocks):
            blocks.append({"type": "text", "text": _encode(data)})
    return result
