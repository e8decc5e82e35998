"""The request log: one structured JSON line per call, every value through the redaction function,
which is also the call's CloudWatch metrics (Embedded Metric Format).

Everything else toolfront logs (tracebacks, warnings) goes through ``logger``: the standard library's
``logging`` with a formatter that writes the Powertools Logger's JSON shape (``toolfront.calls.jsonlog``,
which says why it is not Powertools' own). The per-call line is written directly, in the same shape
(level, message, timestamp, service, correlation_id, xray_trace_id), because a logging record costs
~14-21 µs against ~4 µs for the same line encoded here, and Powertools Metrics would print a second
document per call (~17 µs); the metrics ride in the line's ``_aws`` block, whose directives are
encoded once per shape of line rather than on every call (``_add_metrics``; bench/README.md).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any

from toolfront.calls.call import Call, CallResult, Entry
from toolfront.calls.jsonlog import json_logger
from toolfront.calls.redaction import mentions_secret_field, redact
from toolfront.encoding import lenient_json as _encode
from toolfront.settings import log_settings
from toolfront.tracing import current_trace_id

logger = json_logger(log_settings().service)
_cold = True


def log_call(
    call: Call,
    result: CallResult,
    *,
    duration_ms: float,
    secrets: Collection[str] = (),
    cost: int = 0,
    tool_known: bool = False,
    handler_ran: bool = False,
) -> None:
    """Write the call's one log line (and metrics), with its request id as correlation id.

    ``tool_known``: the call names a tool of this function (only then is the name a metric
    dimension: a name a caller made up must not make a series). ``handler_ran``: the tool's
    handler was called, so an error now is the tool's (``Errors``), not a refusal (``call_outcome``).
    """
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
    trace_id = current_trace_id()  # the call's OpenTelemetry span, when tracing is on
    if trace_id is not None:
        line["trace_id"] = trace_id
    metrics = _add_metrics(
        line, call, result, duration_ms, cost, tool_known=tool_known, handler_ran=handler_ran
    )
    text = _encode(line)
    # Searching the text is cheap; the redaction walk runs only when a secret could be in it.
    if mentions_secret_field(text) or any(secret in text for secret in secrets):
        text = _encode(redact(line, secrets=secrets))
    sys.stdout.write(f"{text[:-1]},{metrics}}}\n")  # the EMF block joins the object as its last member


# What the per-call metrics count besides Calls and Latency: at most one of these per line.
HELD, ERRORS, REFUSALS = "Held", "Errors", "Refusals"

# CloudWatch bills each (metric name, dimension set, dimension values) as one series, for every hour
# it receives data. The per-call metrics go by service (the totals: alarms read them, since an alarm
# cannot sum a SEARCH over tools) and by service and tool (the dashboard's per-tool graphs). Errors,
# Held and Refusals are written only when they happen, so they make series only for the tools (and
# refusal codes) that had one: a tool that is called and never fails costs two series, Calls and
# Latency, plus the two totals once for the whole service. ColdStart, CostUnits and approved runs
# stay per service: they describe processes and budgets, not tools. docs/operating.md, "Metrics,
# the dashboard and alarms".
_Metrics = tuple[tuple[str, str], ...]  # (name, unit) of each metric a directive declares
_CALL: dict[str | None, _Metrics] = {
    None: (("Calls", "Count"), ("Latency", "Milliseconds")),
    REFUSALS: (("Calls", "Count"), ("Latency", "Milliseconds")),  # Refusals go by ErrorCode too
    HELD: (("Calls", "Count"), ("Latency", "Milliseconds"), (HELD, "Count")),
    ERRORS: (("Calls", "Count"), ("Latency", "Milliseconds"), (ERRORS, "Count")),
}
_REFUSALS: _Metrics = ((REFUSALS, "Count"),)
_BY_CODE = ("ErrorCode",)


def call_outcome(result: CallResult, *, handler_ran: bool) -> str | None:
    """What a call's line counts besides ``Calls``: ``Held``, ``Errors``, ``Refusals`` or nothing.

    Each call is exactly one of these (or a success), so the three add up with the successes to
    ``Calls``. On MCP both ``Errors`` and ``Refusals`` are ``isError`` results (on REST, the error
    envelope with a 4xx or 5xx status); they are told apart by whose failure it is:

    - ``Errors``, the tool failed: its handler ran and answered an error (a ``ToolError`` or a
      refusal of its own, whatever the status), crashed, or returned data its output schema refuses;
      or toolfront itself failed at any step (a 5xx: ``internal_error``, ``unavailable``,
      ``confirmation_unavailable``). The caller could not have avoided these: the isError rate.
    - ``Refusals``, the call was refused before its handler ran for a reason of the call's own (a
      4xx: credentials, rights, input, rate limit, idempotency), by ``ErrorCode``.
    - ``Held``: answered 202, waiting for a person (an approval was opened).
    - A replay (an idempotency key's kept answer) is none of them: its first answer was counted.
    """
    if result.replayed:
        return None
    if result.error is None:
        return HELD if result.status == 202 else None
    if handler_ran or result.status >= 500:
        return ERRORS
    return REFUSALS


def _add_metrics(
    line: dict[str, Any],
    call: Call,
    result: CallResult,
    duration_ms: float,
    cost: int,
    *,
    tool_known: bool,
    handler_ran: bool,
) -> str:
    """Put the call's metric values in ``line`` and answer its EMF block as JSON text (the
    ``"_aws": {...}`` member, written after the line's own): Calls, Latency and the call's outcome
    (``call_outcome``) per service and per tool, Refusals by error code too; CostUnits, a cold start
    and an approved run's end per service.

    The block is the same text for every call of one shape but for its timestamp, so it is encoded
    once per shape (``_directives_text``): encoding it per call cost ~5 µs, half the line's encoding.
    It holds no value, only names (the dimensions' values are the line's own fields), so it needs no
    redaction."""
    global _cold
    outcome = call_outcome(result, handler_ran=handler_ran)
    line["Calls"], line["Latency"] = 1, round(duration_ms, 3)
    if outcome is not None:
        line[outcome] = 1
        if outcome == REFUSALS and result.error is not None:
            line["ErrorCode"] = result.error.code
    totals: tuple[str, ...] = ()
    if cost:
        line["CostUnits"] = cost
        totals += ("CostUnits",)
    if _cold:
        line["ColdStart"], _cold = 1, False
        totals += ("ColdStart",)
    if call.entry is Entry.APPROVAL:  # a held call that was approved, now run
        name = "ApprovalsSucceeded" if result.error is None else "ApprovalsFailed"
        line[name] = 1
        totals += (name,)
    directives = _directives_text(log_settings().metrics_namespace, outcome, tool_known, totals)
    return f'"_aws":{{"Timestamp":{int(time.time() * 1000)},"CloudWatchMetrics":{directives}}}'


@cache
def _directives_text(namespace: str, outcome: str | None, tool_known: bool, totals: tuple[str, ...]) -> str:
    """The JSON text of a call line's metric directives, for one shape of line (a few dozen shapes)."""
    directives = [_directive(namespace, _CALL[outcome], tool_known)]
    if outcome == REFUSALS:
        directives.append(_directive(namespace, _REFUSALS, tool_known, _BY_CODE))
    if totals:
        directives.append(_directive(namespace, tuple((name, "Count") for name in totals), False))
    return _encode(directives)


@cache
def _directive(
    namespace: str,
    metrics: _Metrics,
    per_tool: bool,
    dimensions: tuple[str, ...] = (),
    rollup: bool = True,
) -> dict[str, Any]:
    """One EMF metric directive, built once per process for each shape and shared by every line that
    has it (the encoder only reads it): the per-call line is on every call's path. ``rollup``: a
    per-tool value counts in the service's series too (always, unless ``per_tool`` says otherwise)."""
    sets = [["service", *dimensions]] if rollup or not per_tool else []
    if per_tool:
        sets.append(["service", "tool", *dimensions])
    return {
        "Namespace": namespace,
        "Dimensions": sets,
        "Metrics": [{"Name": name, "Unit": unit} for name, unit in metrics],
    }


def emit_metrics(
    values: Mapping[str, float],
    *,
    units: Mapping[str, str] | None = None,
    tool: str | None = None,
    rollup: bool = True,
    dimensions: Mapping[str, str] | None = None,
) -> None:
    """Metrics outside a call, as one EMF line: per service (and ``dimensions``) and, with ``tool``
    (a registered tool's name, e.g. an approval's), per tool as well; ``rollup=False`` for a tool's
    gauge that must not count in the service's series (its total is written apart). Units default
    to ``Count``."""
    dimensions = dimensions or {}
    line: dict[str, Any] = {"service": log_settings().service, **dimensions, **values}
    if tool is not None:
        line["tool"] = tool
    declared = tuple((name, (units or {}).get(name, "Count")) for name in values)
    namespace = log_settings().metrics_namespace
    directive = _directive(namespace, declared, tool is not None, tuple(dimensions), rollup)
    line["_aws"] = {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [directive]}
    sys.stdout.write(_encode(line) + "\n")


def emit_metric(name: str, value: float = 1, *, tool: str | None = None, **dimensions: str) -> None:
    """One count outside a call (approvals decided, expired, escalated), as its own EMF line."""
    emit_metrics({name: value}, tool=tool, dimensions=dimensions)
