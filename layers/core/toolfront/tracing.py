"""Traces with OpenTelemetry: one span per call, a child span per DynamoDB request and one for the
tool's handler, named and attributed per the GenAI and MCP semantic conventions (docs/operating.md,
"Traces"). Off unless configured, and then free: the functions below return at once on one module
flag.

On when the process is configured to export: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or its traces-only
form) is set, or the ADOT Lambda layer wraps the function (``AWS_LAMBDA_EXEC_WRAPPER``); off again
when ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``. Only then is OpenTelemetry
imported (its API alone costs ~30 ms of cold start; docs/performance.md): toolfront's Lambda code
speaks the API. The SDK and exporter are the ADOT layer's (the documented way on AWS), which
installs its tracer provider before the handler loads; with an endpoint and no provider installed,
this module installs the SDK's with a batching OTLP exporter, flushed after every call inside Lambda
(a frozen sandbox would otherwise hold the spans). With no SDK to be found, tracing stays off and
says so once.

Nothing secret goes into a span: names, the tool, the method, error codes, DynamoDB's operation
and table; never arguments, answers, keys or tokens.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

#: A W3C trace context header's shape (version 00): checked before it is handed to OpenTelemetry.
_TRACEPARENT_LENGTH = 55


class _State:
    """What the process decided, and what it holds once on (one object: no module globals)."""

    on = False  # whether spans are made: the hot path's only check
    decided = False
    api: Any = None  # opentelemetry.trace, once on
    context: Any = None  # opentelemetry.context
    tracer: Any = None
    flush: Any = None  # the SDK provider's force_flush when this module installed it inside Lambda
    dynamodb_span: Any = None  # a ContextVar: the DynamoDB span in progress (botocore's under the wire's)
    lock = threading.Lock()


_state = _State()


def configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for traces (see the module docstring)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
        or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
        or "otel" in env.get("AWS_LAMBDA_EXEC_WRAPPER", "")
    )


def enabled() -> bool:
    """Whether this process makes spans (decided on first use, from the environment)."""
    if not _state.decided:
        _decide()
    return _state.on


def _decide() -> None:
    with _state.lock:
        if _state.decided:
            return
        _state.decided = True
        if not configured():
            return
        try:
            from contextvars import ContextVar

            from opentelemetry import context, trace
        except ImportError:
            logger.warning("tracing is configured but OpenTelemetry is not installed: no spans are made")
            return
        if not _sdk_installed(trace):
            flush = _install_sdk(trace)
            if flush is None:
                return
            if "AWS_LAMBDA_FUNCTION_NAME" in os.environ:
                _state.flush = flush
        _state.api, _state.context = trace, context
        _state.tracer = trace.get_tracer("toolfront")
        _state.dynamodb_span = ContextVar("toolfront_dynamodb_span", default=None)
        _state.on = True


def _sdk_installed(trace: Any) -> bool:
    """Whether a tracer provider is in place already (ADOT's wrapper, or the process's own code)."""
    return type(trace.get_tracer_provider()).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider")


def _install_sdk(trace: Any) -> Any:
    """The SDK's provider with a batching OTLP/HTTP exporter (endpoint, headers and service name
    from the ``OTEL_*`` variables, as the SDK reads them); its ``force_flush``, or None without it."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "tracing is configured but the OpenTelemetry SDK and OTLP exporter are not installed: no "
            "spans are made (add the ADOT Lambda layer, or opentelemetry-sdk and "
            "opentelemetry-exporter-otlp-proto-http)"
        )
        return None
    service = os.environ.get("OTEL_SERVICE_NAME") or os.environ.get("AWS_LAMBDA_FUNCTION_NAME") or "toolfront"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider.force_flush


def reset() -> None:
    """Decide again on next use (tests that change the environment)."""
    with _state.lock:
        _state.on = _state.decided = False
        _state.tracer = _state.flush = None


class CallSpan:
    """A call's span, current while the call runs (so that DynamoDB's and the handler's are its
    children); ``end`` records the outcome and makes the previous context current again."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Any, token: Any) -> None:
        self._span, self._token = span, token

    def end(self, status: int, error_code: str | None, *, failed: bool) -> None:
        """``error_code`` names any error the caller got (MCP's ``isError``); ``failed`` says it was
        the service's (the tool's own failure, or a 5xx) rather than a refusal of the caller."""
        if error_code is not None:
            self._span.set_attribute("error.type", error_code)
        if failed:
            self._span.set_status(_state.api.Status(_state.api.StatusCode.ERROR))
        self._span.set_attribute("toolfront.status", status)
        self._span.end()
        _state.context.detach(self._token)
        if _state.flush is not None:
            _state.flush()


def start_call(tool: str, *, mcp: bool, traceparent: str = "") -> CallSpan | None:
    """The span of one tool call (None when tracing is off): ``tools/call <tool>`` for MCP,
    ``execute_tool <tool>`` for REST and the workflow; a child of ``traceparent`` when the caller
    sent one (a header, MCP's ``_meta``, or the gateway's across an Invoke), else of whatever span
    is current (ADOT's invocation span)."""
    if not _state.on and (_state.decided or not enabled()):
        return None
    parent = None
    if len(traceparent) == _TRACEPARENT_LENGTH:
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    # The request id is not an attribute: the log line and the audit record carry the trace id.
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    if mcp:
        attributes["mcp.method.name"] = "tools/call"
    name = f"tools/call {tool}" if mcp else f"execute_tool {tool}"
    span = _state.tracer.start_span(
        name, context=parent, kind=_state.api.SpanKind.SERVER, attributes=attributes
    )
    return CallSpan(span, _state.context.attach(_state.api.set_span_in_context(span)))


class _HandlerSpan:
    """The handler's span, current while the handler runs. An exception's message may quote a
    secret: the span says that the handler failed, never with what."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Any) -> None:
        self._span, self._token = span, None

    def __enter__(self) -> None:
        self._token = _state.context.attach(_state.api.set_span_in_context(self._span))

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self._span.set_attribute("error.type", kind.__name__)
            self._span.set_status(_state.api.Status(_state.api.StatusCode.ERROR))
        self._span.end()
        _state.context.detach(self._token)


def handler_span(tool: str) -> _HandlerSpan | None:
    """The handler's span as a context manager; None when tracing is off or the call's span is not
    recorded (a sampled-out trace: its children would cost as much and be dropped too)."""
    if not _state.on or not _state.api.get_current_span().is_recording():
        return None
    span = _state.tracer.start_span(
        f"handler {tool}", kind=_state.api.SpanKind.INTERNAL, attributes={"gen_ai.tool.name": tool}
    )
    return _HandlerSpan(span)


def start_dynamodb(operation: str, request: Mapping[str, Any]) -> Any:
    """A DynamoDB request's client span, current while it runs (None when off, or when it is the
    botocore request under one of the wire's, which already has its span)."""
    if not _state.on or _state.dynamodb_span.get() is not None:
        return None
    if not _state.api.get_current_span().is_recording():
        return None  # outside a recorded call (a sampled-out trace, or no call at all)
    # The DynamoDB conventions' attributes only (each costs ~3 µs to set and encode): the name and
    # these say what rpc.* would say again.
    attributes: dict[str, Any] = {"db.system.name": "aws.dynamodb", "db.operation.name": operation}
    tables = _tables(request)
    if tables:
        attributes["aws.dynamodb.table_names"] = tables
    span = _state.tracer.start_span(
        f"DynamoDB.{operation}", kind=_state.api.SpanKind.CLIENT, attributes=attributes
    )
    token = _state.context.attach(_state.api.set_span_in_context(span))
    return (span, token, _state.dynamodb_span.set(span))


def end_dynamodb(started: Any, error_code: str | None = None) -> None:
    """End what ``start_dynamodb`` started: with the AWS error code (or the exception's name) when
    it failed."""
    if started is None:
        return
    span, token, marker = started
    if error_code is not None:
        span.set_attribute("error.type", error_code)
        span.set_status(_state.api.Status(_state.api.StatusCode.ERROR))
    span.end()
    _state.dynamodb_span.reset(marker)
    _state.context.detach(token)


def _tables(request: Mapping[str, Any]) -> list[str]:
    """The tables a request names (its ``TableName``, a batch's keys, a transaction's items)."""
    if "TableName" in request:
        return [str(request["TableName"])]
    names = set(request.get("RequestItems") or ())
    for item in request.get("TransactItems") or ():
        names.update(str(part["TableName"]) for part in item.values() if "TableName" in part)
    return sorted(names)


def current_trace_id() -> str | None:
    """The trace id of the span in progress (32 hex digits), None when off or outside a span."""
    if not _state.on:
        return None
    context = _state.api.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


def current_traceparent() -> str:
    """The W3C ``traceparent`` of the span in progress, to hand a call to another function ("" when
    off or outside a span)."""
    if not _state.on:
        return ""
    context = _state.api.get_current_span().get_span_context()
    if not context.is_valid:
        return ""
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def instrument_botocore(client: Any) -> None:
    """Spans for the DynamoDB requests a family's code sends through botocore itself
    (``toolfront.dynamodb.client()``), from botocore's own events: the tables are read from the
    parameters, the span starts once they are validated (``before-call``) and ends with the answer
    (``after-call``) or the failure to get one (``after-call-error``); the request's ``context``
    carries it from one event to the next."""
    if not enabled():
        return

    def tables(params: Any, context: dict[str, Any], **_: Any) -> None:
        context["toolfront_tables"] = params

    def before(model: Any, context: dict[str, Any], **_: Any) -> None:
        context["toolfront_span"] = start_dynamodb(model.name, context.get("toolfront_tables") or {})

    def after(context: dict[str, Any], http_response: Any = None, parsed: Any = None, **_: Any) -> None:
        code = None
        if http_response is not None and http_response.status_code >= 300:
            code = str((parsed or {}).get("Error", {}).get("Code") or http_response.status_code)
        end_dynamodb(context.pop("toolfront_span", None), code)

    def failed(context: dict[str, Any], exception: BaseException | None = None, **_: Any) -> None:
        failed = type(exception).__name__ if exception is not None else "error"  # no answer: no AWS code
        end_dynamodb(context.pop("toolfront_span", None), failed)

    client.meta.events.register("provide-client-params.dynamodb", tables)
    client.meta.events.register("before-call.dynamodb", before)
    client.meta.events.register("after-call.dynamodb", after)
    client.meta.events.register("after-call-error.dynamodb", failed)
