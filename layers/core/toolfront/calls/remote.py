"""A call that runs in another function: the event a family function takes for an MCP tool call.

The gateway's MCP router builds the event from a ``ToolCall``; the family function turns it back
into the pipeline's ``Call``. Step Functions tasks are marked by the same field
(``calls.call.TASK_FIELD``). Also what the caller is told when that function never answered, so
that the call may have run (section 16 of the design: never "retry" a write that may have happened).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfront.calls.call import CALL_TASK, TASK_FIELD, Call, Entry
from toolfront.errors import CallRefusedError, IdempotencyOutcomeUnknownError, StoreUnavailableError

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
    traceparent: str = ""  # the caller's trace context (MCP's ``params._meta.traceparent``)


def call_event(call: ToolCall) -> dict[str, Any]:
    """The family function's event for a tool call (credentials travel only inside AWS); the trace
    context is the caller's, else the span in progress here, so that the call's span joins it."""
    from toolfront.tracing import current_traceparent

    event = {
        TASK_FIELD: CALL_TASK,
        "tool": call.tool,
        "arguments": call.arguments,
        "headers": {name: call.headers[name] for name in FORWARDED_HEADERS if name in call.headers},
        "request_id": call.request_id,
        "source_ip": call.source_ip,
        "base_url": call.base_url,
    }
    traceparent = call.traceparent or current_traceparent()
    if traceparent:
        event["traceparent"] = traceparent
    return event


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
        traceparent=str(event.get("traceparent", "")),
    )


def unanswered(call: ToolCall, *, read_only: bool, offers_idempotency: bool) -> CallRefusedError:
    """The refusal of a call whose function was invoked but never answered (it timed out, died, or
    its answer was lost on the way): it may have run, and a blind retry could run it twice.

    With an idempotency key the family keeps the call's answer under it, so the same key is safe to
    send again (409 ``idempotency_outcome_unknown``); without one, only the caller can find out
    whether the call took effect (503 ``unavailable``, saying so). A read-only tool changed nothing.
    """
    # deferred: only this failure path needs the idempotency module (~15 ms of the gateway's cold start)
    from toolfront.admission.idempotency import HEADER as IDEMPOTENCY_HEADER
    from toolfront.admission.idempotency import KEY_FIELD

    if read_only:
        return StoreUnavailableError("the tool's function did not answer; the tool only reads: retry")
    if offers_idempotency and (KEY_FIELD in call.arguments or IDEMPOTENCY_HEADER in call.headers):
        return IdempotencyOutcomeUnknownError(
            "the tool's function did not answer, so the call may have run: send it again with the same "
            "idempotency key to get its answer once it is kept (it never runs twice), or check whether "
            "it took effect before calling with a new key",
            details={"field": KEY_FIELD},
        )
    return StoreUnavailableError(
        "the tool's function did not answer, so the call may have run: check whether it took effect "
        "before calling again (an idempotency_key makes a retry safe)"
    )
