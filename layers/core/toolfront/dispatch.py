"""Where an MCP tool call runs: core's own tools in the gateway's pipeline, a family's tools in that
family's function (a Lambda invoke; locally the stack runs it in-process). Tool logic is never
duplicated in the gateway: the family's pipeline does every check.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from toolfront import aws
from toolfront.envelopes import error_body
from toolfront.errors import InternalError
from toolfront.mcp import ToolCall
from toolfront.mcp_shapes import ToolCatalog
from toolfront.pipeline import Call, CallResult
from toolfront.rest import result_response

logger = logging.getLogger("toolfront.dispatch")
CALL_TASK = "call"  # the event a family function takes for an MCP tool call
FORWARDED_HEADERS = ("authorization", "x-api-key", "idempotency-key")


def call_event(call: ToolCall) -> dict[str, Any]:
    """The family function's event for a tool call (credentials travel only inside AWS)."""
    return {
        "toolfront_task": CALL_TASK,
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
        entry="mcp",
        function=function_arn,
        base_url=str(event.get("base_url", "")),
    )


def answer_of(status: int, body_text: str) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = json.loads(body_text)
    return status, body


class ToolRouter:
    """Runs each MCP tool call where its tool lives."""

    def __init__(
        self, catalog: ToolCatalog, run_core: Callable[[Call], CallResult], function_prefix: str | None = None
    ) -> None:
        self._catalog = catalog
        self._run_core = run_core
        self._prefix = (
            function_prefix
            if function_prefix is not None
            else os.environ.get("TOOLFRONT_FUNCTION_PREFIX", "")
        )

    def __call__(self, call: ToolCall) -> tuple[int, dict[str, Any]]:
        module = self._catalog.by_name[call.tool].get("module") or "core"
        if module == "core":
            result = self._run_core(pipeline_call(call_event(call), ""))
            response = result_response(result, call.request_id)
            return answer_of(int(response["statusCode"]), str(response["body"]))
        return self._invoke(f"{self._prefix}{module}", call)

    def _invoke(self, function: str, call: ToolCall) -> tuple[int, dict[str, Any]]:
        answer = aws.client("lambda").invoke(
            FunctionName=function, Payload=json.dumps(call_event(call)).encode()
        )
        payload = answer["Payload"].read()
        if answer.get("FunctionError"):  # the family function crashed: its logs hold the detail
            logger.error("%s failed on tool call %s (request %s)", function, call.tool, call.request_id)
            return 500, json.loads(error_body(InternalError(), call.request_id))
        response = json.loads(payload)
        return answer_of(int(response["statusCode"]), str(response["body"]))
