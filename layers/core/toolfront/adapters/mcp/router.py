"""Where an MCP tool call runs: core's own tools in the gateway's pipeline, a family's tools in that
family's function (a Lambda invoke; locally the stack runs it in-process). Tool logic is never
duplicated in the gateway: the family's pipeline does every check.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.aws import clients as aws
from toolfront.calls.call import Call, CallResult
from toolfront.calls.envelopes import error_body
from toolfront.calls.remote import ToolCall, call_event, pipeline_call, unanswered
from toolfront.errors import CallRefusedError, InternalError, StoreUnavailableError
from toolfront.tools.manifest import ToolInfo

logger = logging.getLogger(__name__)

#: A function error of these types means Lambda could not load the handler: the call never began.
_NOT_STARTED = frozenset(
    {
        "Runtime.ImportModuleError",
        "Runtime.HandlerNotFound",
        "Runtime.MalformedHandlerName",
        "Runtime.UserCodeSyntaxError",
        "Runtime.InvalidEntrypoint",
    }
)


def envelope_of(result: CallResult, request_id: str) -> dict[str, Any]:
    """The REST envelope of a pipeline result (the exact stored answer on a replay)."""
    if result.body is not None:
        body: dict[str, Any] = json.loads(result.body)
        return body
    if result.error is not None:
        return {"error": result.error.to_dict(), "request_id": request_id}
    return {"data": result.data, "request_id": request_id}


class LocalRouter:
    """Runs every MCP tool call in this function's own pipeline (``/mcp/{family}``: the family's
    tools and core's, no second Lambda in the path)."""

    def __init__(self, run: Callable[[Call], CallResult]) -> None:
        self._run = run

    def __call__(self, call: ToolCall) -> tuple[int, dict[str, Any]]:
        result = self._run(pipeline_call(call_event(call), call.function))
        return result.status, envelope_of(result, call.request_id)


class ToolRouter:
    """Runs each MCP tool call where its tool lives."""

    def __init__(
        self, catalog: ToolCatalog, run_core: Callable[[Call], CallResult], function_prefix: str
    ) -> None:
        self._catalog = catalog
        self._run_core = run_core
        self._prefix = function_prefix

    def __call__(self, call: ToolCall) -> tuple[int, dict[str, Any]]:
        module = self._catalog.by_name[call.tool].get("module") or "core"
        if module == "core":  # in this process: no event, no JSON round trip
            result = self._run_core(pipeline_call(call_event(call), ""))
            return result.status, envelope_of(result, call.request_id)
        return self._invoke(f"{self._prefix}{module}", call)

    def _invoke(self, function: str, call: ToolCall) -> tuple[int, dict[str, Any]]:
        try:
            answer = aws.client("lambda").invoke(
                FunctionName=function, Payload=json.dumps(call_event(call)).encode()
            )
            payload = answer["Payload"].read()
        except Exception as exc:
            if _may_have_run(exc):  # sent, then no answer: Lambda may be running it still
                logger.exception(
                    "%s did not answer tool call %s (request %s); it may have run",
                    function,
                    call.tool,
                    call.request_id,
                )
                return self._refused(self._unanswered(call), call)
            # throttled, missing, not allowed, unreachable: the call did not run
            logger.exception(
                "%s could not be invoked for tool call %s (request %s)", function, call.tool, call.request_id
            )
            unavailable = StoreUnavailableError("the tool's function could not be reached; retry shortly")
            return self._refused(unavailable, call)
        if answer.get("FunctionError"):  # the family function failed: its logs hold the detail
            kind = _error_type(payload)
            logger.error(
                "%s failed (%s) on tool call %s (request %s)", function, kind, call.tool, call.request_id
            )
            if kind in _NOT_STARTED:
                return self._refused(InternalError(), call)
            return self._refused(self._unanswered(call), call)  # timed out, out of memory, too large...
        try:
            response = json.loads(payload)
            body: dict[str, Any] = json.loads(str(response["body"]))
            return int(response["statusCode"]), body
        except (ValueError, KeyError, TypeError):  # not a function's answer: never a bare 500 upstream
            logger.error(
                "%s answered tool call %s (request %s) with no response", function, call.tool, call.request_id
            )
            return self._refused(InternalError(), call)

    def _unanswered(self, call: ToolCall) -> CallRefusedError:
        info = ToolInfo.of(self._catalog.by_name[call.tool])
        return unanswered(call, read_only=info.is_read_only, offers_idempotency=info.offers_idempotency)

    @staticmethod
    def _refused(error: CallRefusedError, call: ToolCall) -> tuple[int, dict[str, Any]]:
        return error.http_status, json.loads(error_body(error, call.request_id))


def _may_have_run(exc: Exception) -> bool:
    """Whether an invoke that raised may still have started the function.

    A refusal by Lambda (a 4xx: throttled, missing, not allowed, too large) and a connection never
    made are certain: nothing ran. A request sent and then not answered (a read timeout, a dropped
    connection, a broken answer) or a 5xx from Lambda itself is not.
    """
    from botocore.exceptions import ClientError, HTTPClientError, SSLError

    if isinstance(exc, ClientError):
        return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 500) >= 500
    return isinstance(exc, HTTPClientError | SSLError)


def _error_type(payload: bytes) -> str:
    """The ``errorType`` of Lambda's function-error payload (``Sandbox.Timedout``...), or ``unknown``."""
    try:
        found = json.loads(payload).get("errorType")
    except (ValueError, AttributeError):
        return "unknown"
    return str(found) if found else "unknown"
