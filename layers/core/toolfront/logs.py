"""The request log: one structured JSON line per call (Powertools Logger).

The line names the tool, the actor, the status and the duration; it never carries the body, the
query string or a credential.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.logging import Logger

from toolfront.credentials import redact

if TYPE_CHECKING:
    from toolfront.pipeline import Call, CallResult

logger = Logger(service="toolfront", logger_formatter=None, log_uncaught_exceptions=False)


def log_call(call: Call, result: CallResult, *, duration_ms: float, secrets: Collection[str] = ()) -> None:
    """Write the call's one log line, with its request id as correlation id; every value redacted."""
    fields: dict[str, Any] = {
        "request_id": call.request_id,
        "tool": call.tool_name,
        "entry": call.entry,
        "status": result.status,
        "duration_ms": round(duration_ms, 3),
    }
    if result.actor is not None:
        fields["actor"] = {"kind": str(result.actor.kind), "id": result.actor.id}
    if result.error is not None:
        fields["error"] = {"code": result.error.code, "message": result.error.message}
    if result.replayed:
        fields["replayed"] = True
    logger.set_correlation_id(call.request_id)
    logger.info("tool call", extra=redact(fields, secrets=secrets))
