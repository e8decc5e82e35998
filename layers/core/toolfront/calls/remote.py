"""A call that runs in another function: the event a family function takes for an MCP tool call.

The gateway's MCP router builds the event from a ``ToolCall``; the family function turns it back
into the pipeline's ``Call``. Step Functions tasks are marked by the same field
(``calls.call.TASK_FIELD``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfront.calls.call import CALL_TASK, TASK_FIELD, Call, Entry

#: The only headers that travel with a routed call: the credentials and the retry key.
FORWARDED_HEADERS = ("authorization", "x-api-key", "idempotency-key")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One ``tools/call`` as the owning family's pipeline will run it."""

    tool: str
    arguments: dict[str, Any]
    headers: Mapping[str, str]  # the caller's, for its credentials and Idempotency-Key
    request_id: str
    source_ip: str
    base_url: str
    function: str = ""  # the ARN of the function serving it, when that is this one (/mcp/{family})


def call_event(call: ToolCall) -> dict[str, Any]:
    """The family function's event for a tool call (credentials travel only inside AWS)."""
    return {
        TASK_FIELD: CALL_TASK,
        "tool": call.tool,
        "arguments": call.arguments,
        "headers": {name: call.headers[name] for name in FORWARDED_HEADERS if name in call.headers},
        "request_id": call.request_id,
        "source_ip": call.source_ip,
        "base_url": call.base_url,
    }


def pipeline_call(event: dict[str, Any], function_arn: str) -> Call:
    """The pipeline's ``Call`` for a family function's ``call`` event."""
    return Call(
        tool_name=str(event["tool"]),
        request_id=str(event["request_id"]),
        headers={str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()},
        arguments=event["arguments"],
        source_ip=str(event.get("source_ip", "")),
        entry=Entry.MCP,
        function=function_arn,
        base_url=str(event.get("base_url", "")),
    )
