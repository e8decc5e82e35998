"""Lambda's limits on the local stack: each function's Timeout and MemorySize from the template, the
6 MB payload limit each way, and API Gateway's 30 s integration timeout, answered as AWS answers."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from toolfront.aws import clients
from toolfront.tools.system import all_tools
from toolfront_dev import server
from toolfront_dev.aws import moto_client
from toolfront_dev.lambdas import LocalFunction, invoke_function, register_functions, unregister_functions
from toolfront_dev.payload import PAYLOAD_LIMIT_BYTES, RESPONSE_TOO_LARGE
from toolfront_dev.server import HandlerLoader, LocalApi
from toolfront_dev.stack import LocalStack
from toolfront_dev.template import Template, load_template

PROJECT_DIR = Path(__file__).resolve().parents[2]
TEMPLATE = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  QuickFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: limits/
      Handler: app.lambda_handler
      Timeout: 1
      MemorySize: 256
      Events:
        Run: {Type: HttpApi, Properties: {Path: /quick, Method: GET}}
  PatientFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: limits/
      Handler: app.lambda_handler
      Timeout: 60
      Events:
        Run: {Type: HttpApi, Properties: {Path: /patient, Method: GET}}
"""

# Sleeps ``sleep`` seconds, then answers ``size`` characters (or a result that is not JSON).
APP = """\
import time


def lambda_handler(event, context):
    asked = event.get("queryStringParameters") or event
    time.sleep(float(asked.get("sleep", 0)))
    if asked.get("unjsonable"):
        return {"body": {1, 2}}
    body = "x" * int(asked.get("size", 0))
    if "routeKey" in event:
        return {"statusCode": 200, "body": body}
    left_ms = context.get_remaining_time_in_millis()
    return {"body": body, "memory": context.memory_limit_in_mb, "left_ms": left_ms}
"""
# The bytes Lambda counts besides the body: {"statusCode": 200, "body": ""} as the runtime writes it.
HTTP_ENVELOPE = len(json.dumps({"statusCode": 200, "body": ""}))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    root = tmp_path_factory.mktemp("limits")
    (root / "limits").mkdir()
    (root / "limits" / "app.py").write_text(APP, encoding="utf-8")
    (root / "template.yaml").write_text(TEMPLATE, encoding="utf-8")
    return load_template(root / "template.yaml")


@pytest.fixture(scope="module")
def http(template: Template) -> Client:
    return Client(LocalApi(template))


@pytest.fixture(scope="module")
def quick(template: Template) -> LocalFunction:
    return LocalFunction(
        "limits-quick", template.function("QuickFunction"), HandlerLoader(template.functions)
    )


def invoke(function: LocalFunction, event: dict[str, Any]) -> tuple[dict[str, str], Any]:
    headers: dict[str, str] = {}
    payload = invoke_function(function, json.dumps(event).encode(), headers)
    return headers, json.loads(payload)


def test_the_template_sets_each_functions_timeout_and_memory(template: Template) -> None:
    quick = template.function("QuickFunction")
    assert (quick.timeout_seconds, quick.memory_size_mb) == (1, 256)
    assert template.function("PatientFunction").memory_size_mb == 128  # Lambda's default


def test_an_invocation_reports_its_memory_and_deadline(quick: LocalFunction) -> None:
    headers, answer = invoke(quick, {})
    assert headers == {} and answer["memory"] == 256 and 0 < answer["left_ms"] <= 1000


def test_an_http_handler_past_its_timeout_is_a_gateway_500_and_its_thread_runs_on(
    http: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolfront_dev.server"):
        reply = http.get("/quick?sleep=1.4")

    assert reply.status_code == 500
    assert reply.get_data() == b'{"message":"Internal Server Error"}'
    assert "Task timed out after 1 seconds" in caplog.text and "runs on" in caplog.text


def test_an_http_handler_past_the_gateways_30_s_is_503(http: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "INTEGRATION_TIMEOUT_SECONDS", 0.3)  # the function's own Timeout is 60

    reply = http.get("/patient?sleep=0.8")

    assert reply.status_code == 503
    assert reply.get_data() == b'{"message":"Service Unavailable"}'


def test_an_http_answer_within_6_mb_is_served_and_one_over_it_is_a_gateway_500(http: Client) -> None:
    fits = http.get(f"/quick?size={PAYLOAD_LIMIT_BYTES - HTTP_ENVELOPE}")
    over = http.get(f"/quick?size={PAYLOAD_LIMIT_BYTES - HTTP_ENVELOPE + 1}")

    assert fits.status_code == 200 and len(fits.get_data()) == PAYLOAD_LIMIT_BYTES - HTTP_ENVELOPE
    assert over.status_code == 500
    assert over.get_data() == b'{"message":"Internal Server Error"}'


def test_an_invocation_past_its_timeout_is_lambdas_task_timed_out(quick: LocalFunction) -> None:
    headers, answer = invoke(quick, {"sleep": 1.4})

    assert headers == {"x-amz-function-error": "Unhandled"}
    assert answer["errorType"] == "Sandbox.Timedout"
    assert answer["errorMessage"].startswith("RequestId: ")
    assert answer["errorMessage"].endswith(" Error: Task timed out after 1.00 seconds")


def test_an_invocation_answering_over_6_mb_is_response_size_too_large(quick: LocalFunction) -> None:
    headers, answer = invoke(quick, {"size": PAYLOAD_LIMIT_BYTES})

    assert headers == {"x-amz-function-error": "Unhandled"}
    assert answer == RESPONSE_TOO_LARGE


def test_an_invocation_answering_what_is_not_json_is_a_marshal_error(quick: LocalFunction) -> None:
    headers, answer = invoke(quick, {"unjsonable": True})

    assert headers == {"x-amz-function-error": "Unhandled"}
    assert answer["errorType"] == "Runtime.MarshalError"
    assert answer["errorMessage"].startswith("Unable to marshal response:")


@pytest.fixture
def lambda_in_moto(quick: LocalFunction, stack: LocalStack) -> Iterator[tuple[Any, str]]:
    """``quick`` created in the package stack's moto, its invocations run by the local stack's patch."""
    lambdas = moto_client(stack.moto_endpoint, "lambda")
    role = moto_client(stack.moto_endpoint, "iam").list_roles()["Roles"][0]["Arn"]
    name = f"limits-{uuid.uuid4().hex[:8]}"
    lambdas.create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=role,
        Handler="app.lambda_handler",
        Code={"ZipFile": b"z"},
    )
    register_functions([LocalFunction(name, quick.spec, quick.loader)])
    try:
        yield lambdas, name
    finally:
        unregister_functions([name])
        lambdas.delete_function(FunctionName=name)


def test_an_invoke_over_6_mb_is_refused_before_anything_runs(lambda_in_moto: tuple[Any, str]) -> None:
    lambdas, name = lambda_in_moto
    payload = json.dumps({"pad": "x" * PAYLOAD_LIMIT_BYTES}).encode()

    with pytest.raises(lambdas.exceptions.ClientError) as refused:
        lambdas.invoke(FunctionName=name, Payload=payload)

    error = refused.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 413
    assert error["Error"]["Code"] == "RequestEntityTooLargeException"
    assert f"{len(payload)} byte payload is too large" in error["Error"]["Message"]


def test_an_invoke_through_moto_carries_lambdas_function_error(lambda_in_moto: tuple[Any, str]) -> None:
    lambdas, name = lambda_in_moto

    answered = lambdas.invoke(FunctionName=name, Payload=json.dumps({"size": PAYLOAD_LIMIT_BYTES}).encode())

    assert answered["FunctionError"] == "Unhandled"
    assert json.loads(answered["Payload"].read()) == RESPONSE_TOO_LARGE


def test_the_gateway_outwaits_the_functions_it_invokes_within_api_gateways_30_s() -> None:
    template = load_template(PROJECT_DIR / "template.yaml")
    gateway = template.function("GatewayFunction")
    modules = {str(tool.get("module")) for tool in all_tools()} - {"None", "core"}
    names = [{"Fn::Sub": f"${{AWS::StackName}}-{module}"} for module in modules]
    invoked = [function for function in template.functions if function.function_name in names]
    variable = clients.INVOKE_READ_TIMEOUT_VARIABLE
    wait = clients.invoke_read_timeout_seconds(
        {k: str(v) for k, v in gateway.environment.items() if k == variable}
    )

    assert len(invoked) == len(modules)
    assert all(function.timeout_seconds < wait for function in invoked)  # Lambda's own answer comes first
    assert wait < gateway.timeout_seconds <= server.INTEGRATION_TIMEOUT_SECONDS
