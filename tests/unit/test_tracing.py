"""Traces (docs/operating.md, "Traces"): with an OTLP endpoint configured, every call is one span named and
attributed per the GenAI/MCP semantic conventions, with a child span per DynamoDB request and one for
the handler; the log line and the audit record carry its trace id; nothing secret is in a span.
Without one, nothing of OpenTelemetry is loaded or made."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.util._once import Once

from tests.aws import EVENT_ADMIN_KEY, approval_state_machine, key_store, seed
from tests.conftest import load_family, reset_process_state
from tests.helpers import catalogue_request, family, load_event
from toolfront import Registry, tracing
from toolfront.approvals.records import ApprovalStatus
from toolfront.approvals.runner import ApprovedCallRunner
from toolfront.approvals.store import ApprovalStore

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class Receiver:
    """An OTLP/HTTP trace receiver: every span it was sent, as (name, attributes, ids, kind)."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        receiver = self

        class Handle(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                exported = ExportTraceServiceRequest()
                exported.ParseFromString(body)
                for resource in exported.resource_spans:
                    for scope in resource.scope_spans:
                        receiver.spans.extend(_span(span) for span in scope.spans)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def received(self) -> list[dict[str, Any]]:
        trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
        return self.spans


def _span(span: Any) -> dict[str, Any]:
    attributes = {}
    for pair in span.attributes:
        value = pair.value
        kind = value.WhichOneof("value")
        attributes[pair.key] = (
            [item.string_value for item in value.array_value.values]
            if kind == "array_value"
            else getattr(value, kind)
        )
    return {
        "name": span.name,
        "attributes": attributes,
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent": span.parent_span_id.hex(),
        "kind": span.kind,
        "error": span.status.code == 2,
    }


def _forget_the_provider() -> None:
    # OpenTelemetry lets a process set its tracer provider once; its own tests reset it this way.
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


@pytest.fixture
def receiver(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    found = Receiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "toolfront-test")
    _forget_the_provider()
    tracing.reset()
    reset_process_state()
    try:
        yield found
    finally:
        provider = trace.get_tracer_provider()
        if hasattr(provider, "shutdown"):
            provider.shutdown()
        _forget_the_provider()
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
        tracing.reset()
        reset_process_state()
        found.server.shutdown()


@pytest.fixture
def catalogue(receiver: Receiver) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    return handler


def _one(spans: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [span for span in spans if span["name"] == name]
    assert len(found) == 1, [span["name"] for span in spans]
    return found[0]


def _log_lines(captured: str) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in captured.splitlines() if line.startswith("{") and '"tool call"' in line
    ]


def test_a_rest_call_is_one_execute_tool_span_with_its_dynamodb_and_handler_children(
    catalogue: Handler, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    response = catalogue_request(
        catalogue,
        "create_product",
        {"sku": "TR-1", "name": "Traced", "price_cents": 100, "currency": "EUR"},
        "req-traced-1",
    )
    assert response["statusCode"] == 200, response
    spans = receiver.received()
    call = _one(spans, "execute_tool catalogue.create_product")
    assert call["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert call["attributes"]["gen_ai.tool.name"] == "catalogue.create_product"
    assert "mcp.method.name" not in call["attributes"]
    assert call["kind"] == 2  # SERVER
    children = [span for span in spans if span["parent"] == call["span_id"]]
    names = {span["name"] for span in children}
    assert "handler catalogue.create_product" in names
    dynamodb = [
        span
        for span in spans
        if span["name"].startswith("DynamoDB.") and span["trace_id"] == call["trace_id"]
    ]
    assert {"ProductsTable", "KeysTable"} <= {
        t for span in dynamodb for t in span["attributes"]["aws.dynamodb.table_names"]
    }
    assert all(span["kind"] == 3 for span in dynamodb)  # CLIENT
    # The product's own write is the handler's child (a family's request through botocore or the wire).
    handler = _one(spans, "handler catalogue.create_product")
    assert any(span["parent"] == handler["span_id"] for span in dynamodb)
    [line] = [
        line for line in _log_lines(capsys.readouterr().out) if line["correlation_id"] == "req-traced-1"
    ]
    assert line["trace_id"] == call["trace_id"]


def test_the_audit_record_carries_the_calls_trace_id(catalogue: Handler, receiver: Receiver) -> None:
    catalogue_request(
        catalogue,
        "create_product",
        {"sku": "TR-2", "name": "A", "price_cents": 1, "currency": "EUR"},
        "req-traced-2",
    )
    call = _one(receiver.received(), "execute_tool catalogue.create_product")
    items = boto3.client("dynamodb").scan(TableName="AuditTable")["Items"]
    records = [json.loads(item["record"]["S"]) for item in items if "record" in item]
    [record] = [r for r in records if r.get("request_id") == "req-traced-2"]
    assert record["trace_id"] == call["trace_id"]


def test_a_callers_traceparent_is_the_calls_parent(catalogue: Handler, receiver: Receiver) -> None:
    event = load_event(
        "catalogue_create_product",
        body=json.dumps({"sku": "TR-3", "name": "A", "price_cents": 1, "currency": "EUR"}),
    )
    event["headers"] = {**event["headers"], "traceparent": TRACEPARENT}
    catalogue(event, None)
    call = _one(receiver.received(), "execute_tool catalogue.create_product")
    assert call["trace_id"] == TRACEPARENT[3:35] and call["parent"] == TRACEPARENT[36:52]


def _rpc(handler: Handler, params: dict[str, Any]) -> dict[str, Any]:
    event = load_event(
        "mcp_tools_call",
        body=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}),
    )
    event["routeKey"] = event["requestContext"]["routeKey"] = "POST /mcp/catalogue"
    event["rawPath"] = "/mcp/catalogue"
    event["headers"] = {**event["headers"], "authorization": f"Bearer {EVENT_ADMIN_KEY}"}
    return handler(event, None)


def test_an_mcp_call_is_a_tools_call_span_and_joins_the_clients_meta_trace(
    catalogue: Handler, receiver: Receiver
) -> None:
    response = _rpc(
        catalogue,
        {
            "name": "catalogue-get_product",
            "arguments": {"sku": "NOPE"},
            "_meta": {"traceparent": TRACEPARENT},
        },
    )
    result = json.loads(response["body"])["result"]
    assert result["isError"] is True, result  # no such product: the tool's own failure
    call = _one(receiver.received(), "tools/call catalogue.get_product")
    assert call["attributes"]["mcp.method.name"] == "tools/call"
    assert call["attributes"]["gen_ai.tool.name"] == "catalogue.get_product"
    assert call["attributes"]["error.type"] == "not_found"
    assert call["error"] is True  # an isError result is an error, though HTTP said 200
    assert call["trace_id"] == TRACEPARENT[3:35]


def test_a_refusal_is_named_in_error_type_without_failing_the_span(
    catalogue: Handler, receiver: Receiver
) -> None:
    catalogue_request(catalogue, "create_product", {"sku": 5}, "req-traced-4")
    call = _one(receiver.received(), "execute_tool catalogue.create_product")
    assert call["attributes"]["error.type"] == "invalid_input"
    assert call["error"] is False  # the caller's mistake, not the service's


def test_no_span_carries_an_argument_or_a_credential(catalogue: Handler, receiver: Receiver) -> None:
    catalogue_request(
        catalogue,
        "create_product",
        {"sku": "SECRET-SKU-42", "name": "hush", "price_cents": 3, "currency": "EUR"},
        "req-traced-5",
    )
    text = json.dumps(receiver.received())
    assert "SECRET-SKU-42" not in text and "hush" not in text and EVENT_ADMIN_KEY not in text


def test_untraced_nothing_of_opentelemetry_is_loaded() -> None:
    code = (
        "import sys; from toolfront import tracing; from toolfront.calls import pipeline; "
        "assert tracing.start_call('t', mcp=False) is None; "
        "assert tracing.current_trace_id() is None; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    env = {"PATH": "/usr/bin", "AWS_DEFAULT_REGION": "us-east-1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("environment", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"AWS_LAMBDA_EXEC_WRAPPER": "/opt/otel-instrument"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
    ],
)
def test_tracing_is_on_only_where_configured(environment: dict[str, str], on: bool) -> None:
    assert tracing.configured(environment) is on


def test_a_held_calls_run_joins_the_trace_of_the_call_that_held_it(
    catalogue: Handler, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", approval_state_machine())
    reset_process_state()
    product = {"sku": "TR-6", "name": "A", "price_cents": 1, "currency": "EUR"}
    catalogue_request(catalogue, "create_product", product, "req-traced-6")
    held = catalogue_request(catalogue, "delete_product", {"sku": "TR-6"}, "req-traced-7")
    assert held["statusCode"] == 202, held
    approval_id = json.loads(held["body"])["data"]["approval_id"]
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    store.transition(approval_id, ApprovalStatus.APPROVED, datetime.now(UTC))
    module = load_family("catalogue")
    runner = ApprovedCallRunner(
        Registry.from_modules([family("catalogue", module.api_tools)]), store, key_store()
    )
    assert runner.run(approval_id) == {"status": "succeeded"}
    spans = receiver.received()
    holds = [span for span in spans if span["name"] == "execute_tool catalogue.delete_product"]
    assert len(holds) == 2  # the call that was held, and its run once approved
    by_status = {span["attributes"]["toolfront.status"]: span for span in holds}
    first, run = by_status[202], by_status[200]
    assert run["trace_id"] == first["trace_id"]  # one trace from the request to the deletion
