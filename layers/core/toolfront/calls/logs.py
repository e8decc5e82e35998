"""The request log: one structured JSON line per call, every value through the redaction function,
which is also the call's CloudWatch metrics (Embedded Metric Format).

Everything else toolfront logs (tracebacks, warnings) goes through ``logger``: the standard library's
``logging`` with a formatter that writes the Powertools Logger's JSON shape (``toolfront.calls.jsonlog``,
which says why it is not Powertools' own). The per-call line is written directly, in the same shape
(level, message, timestamp, service, correlation_id, xray_trace_id), because a logging record costs
~14-21 µs against ~4 µs for the same line encoded here, and Powertools Metrics would print a second
document per call (~17 µs); folding the metrics into the line's ``_aws`` block costs a few µs
(bench/README.md).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from toolfront.calls.call import Call, CallResult, Entry
from toolfront.calls.jsonlog import json_logger
from toolfront.calls.redaction import mentions_secret_field, redact
from toolfront.encoding import lenient_json as _encode
from toolfront.settings import log_settings

logger = json_logger(log_settings().service)
_cold = True


def log_call(
    call: Call, result: CallResult, *, duration_ms: float, secrets: Collection[str] = (), cost: int = 0
) -> None:
    """Write the call's one log line (and metrics), with its request id as correlation id."""
    if logger.level > logging.INFO:
        return
    line: dict[str, Any] = {
        "level": "INFO",
        "message": "tool call",
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "service": log_settings().service,
        "correlation_id": call.request_id,
        "tool": call.tool_name,
        "entry": call.entry,
        "status": result.status,
        "duration_ms": round(duration_ms, 3),
    }
    if result.actor is not None:
        line["actor"] = {"kind": str(result.actor.kind), "id": result.actor.id}
    if result.error is not None:
        line["error"] = {"code": result.error.code, "message": result.error.message}
    if result.replayed:
        line["replayed"] = True
    trace = os.environ.get("_X_AMZN_TRACE_ID")  # not a setting: Lambda sets it anew per invocation
    if trace:
        line["xray_trace_id"] = trace.split(";", 1)[0].removeprefix("Root=")
    _add_metrics(line, call, result, duration_ms, cost)
    text = _encode(line)
    # Searching the text is cheap; the redaction walk runs only when a secret could be in it.
    if mentions_secret_field(text) or any(secret in text for secret in secrets):
        text = _encode(redact(line, secrets=secrets))
    sys.stdout.write(text + "\n")


def _add_metrics(line: dict[str, Any], call: Call, result: CallResult, duration_ms: float, cost: int) -> None:
    """The EMF block: Calls, CostUnits and Latency per service; Refusals by error code; a cold start."""
    global _cold
    metrics = [{"Name": "Calls", "Unit": "Count"}, {"Name": "Latency", "Unit": "Milliseconds"}]
    line["Calls"], line["Latency"] = 1, round(duration_ms, 3)
    if cost:
        metrics.append({"Name": "CostUnits", "Unit": "Count"})
        line["CostUnits"] = cost
    if _cold:
        metrics.append({"Name": "ColdStart", "Unit": "Count"})
        line["ColdStart"], _cold = 1, False
    if call.entry is Entry.APPROVAL:  # a held call that was approved, now run
        name = "ApprovalsSucceeded" if result.error is None else "ApprovalsFailed"
        metrics.append({"Name": name, "Unit": "Count"})
        line[name] = 1
    elif result.status == 202 and not result.replayed:
        metrics.append({"Name": "ApprovalsOpened", "Unit": "Count"})
        line["ApprovalsOpened"] = 1
    directives = [
        {"Namespace": log_settings().metrics_namespace, "Dimensions": [["service"]], "Metrics": metrics}
    ]
    if result.error is not None and result.status >= 400:
        line["ErrorCode"], line["Refusals"] = result.error.code, 1
        refusal = [{"Name": "Refusals", "Unit": "Count"}]
        directives.append(
            {
                "Namespace": log_settings().metrics_namespace,
                "Dimensions": [["service", "ErrorCode"]],
                "Metrics": refusal,
            }
        )
    line["_aws"] = {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": directives}


def emit_metric(name: str, value: float = 1, **dimensions: str) -> None:
    """One metric outside a call (approvals decided or expired), as its own EMF line."""
    line: dict[str, Any] = {"service": log_settings().service, **dimensions, name: value}
    line["_aws"] = {
        "Timestamp": int(time.time() * 1000),
        "CloudWatchMetrics": [
            {
                "Namespace": log_settings().metrics_namespace,
                "Dimensions": [["service", *dimensions]],
                "Metrics": [{"Name": name, "Unit": "Count"}],
            }
        ],
    }
    sys.stdout.write(_encode(line) + "\n")
