"""Never twice across invocations: the gateway invokes a family function once, and a call that may
have run is never answered "retry" (design section 22; security round 3, N2)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ConnectionClosedError, EndpointConnectionError, ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.adapters.mcp.router import ToolRouter
from toolfront.aws import clients
from toolfront.calls.remote import ToolCall
from toolfront.errors import ConfigurationError
from toolfront.tools.system import all_tools

PRODUCT = {"sku": "N2-1", "name": "Mug", "price_cents": 1000, "currency": "EUR"}


@pytest.fixture
def lambda_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The process's Lambda client, made fresh from this test's environment (nothing is sent)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(clients.INVOKE_READ_TIMEOUT_VARIABLE, raising=False)
    clients.reset_clients()
    yield clients.client("lambda")
    clients.reset_clients()


@pytest.fixture
def router() -> ToolRouter:
    def no_core_call(call: Any) -> Any:
        raise AssertionError("a family's tool ran in the gateway")

    return ToolRouter(ToolCatalog(all_tools()), no_core_call, "toolfront-test-")


def tool_call(tool: str, arguments: dict[str, Any], **headers: str) -> ToolCall:
    return ToolCall(tool, arguments, headers, "req-1", "127.0.0.1", "http://127.0.0.1:3000")


def failing_sends(client: Any, error: Exception) -> list[str]:
    """Every Invoke sent through ``client`` fails with ``error`` once on the wire; the attempts made."""
    attempts: list[str] = []

    def fail(request: Any, **_: Any) -> None:
        attempts.append(request.url)
        raise error

    client.meta.events.register("before-send.lambda.Invoke", fail)
    return attempts


def lambda_answer(payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = json.dumps(payload).encode()
    return {"StatusCode": 200, "Payload": StreamingBody(io.BytesIO(body), len(body)), **extra}


def error_of(answer: tuple[int, dict[str, Any]]) -> tuple[int, str, str]:
    status, body = answer
    return status, body["error"]["code"], body["error"]["message"]


def test_the_invoke_client_sends_once_and_outwaits_the_family_timeout(lambda_api: Any) -> None:
    config = lambda_api.meta.config
    assert config.retries["total_max_attempts"] == 1
    assert config.read_timeout == clients.DEFAULT_INVOKE_READ_TIMEOUT_SECONDS > 10  # families: Timeout 10
    assert clients.client("dynamodb").meta.config.read_timeout == 5  # other clients keep the shared config


def test_the_invoke_read_timeout_comes_from_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert clients.invoke_read_timeout_seconds({clients.INVOKE_READ_TIMEOUT_VARIABLE: "27.5"}) == 27.5
    for bad in ("soon", "0", "-3", "nan", "inf"):
        with pytest.raises(ConfigurationError, match=clients.INVOKE_READ_TIMEOUT_VARIABLE):
            clients.invoke_read_timeout_seconds({clients.INVOKE_READ_TIMEOUT_VARIABLE: bad})


def test_an_invoke_that_timed_out_is_sent_once_and_may_have_run(lambda_api: Any, router: ToolRouter) -> None:
    attempts = failing_sends(lambda_api, ReadTimeoutError(endpoint_url="https://lambda.invalid"))

    status, code, message = error_of(router(tool_call("catalogue.create_product", PRODUCT)))

    assert len(attempts) == 1  # botocore's standard mode would have sent it 4 times
    assert (status, code) == (503, "unavailable")
    assert "may have run" in message and "check whether it took effect" in message
    assert "retry shortly" not in message


def test_an_invoke_whose_connection_dropped_with_a_key_is_outcome_unknown(
    lambda_api: Any, router: ToolRouter
) -> None:
    attempts = failing_sends(lambda_api, ConnectionClosedError(endpoint_url="https://lambda.invalid"))

    answer = router(tool_call("catalogue.create_product", PRODUCT, **{"idempotency-key": "n2-key"}))

    assert len(attempts) == 1
    status, body = answer
    assert (status, body["error"]["code"]) == (409, "idempotency_outcome_unknown")
    assert body["error"]["details"] == {"field": "idempotency_key"}
    assert "same idempotency key" in body["error"]["message"]


def test_a_key_in_the_arguments_counts_like_the_header(lambda_api: Any, router: ToolRouter) -> None:
    failing_sends(lambda_api, ReadTimeoutError(endpoint_url="https://lambda.invalid"))

    keyed = router(tool_call("catalogue.create_product", {**PRODUCT, "idempotency_key": "n2-body"}))

    assert error_of(keyed)[:2] == (409, "idempotency_outcome_unknown")


def test_an_unanswered_read_only_call_says_retry(lambda_api: Any, router: ToolRouter) -> None:
    failing_sends(lambda_api, ReadTimeoutError(endpoint_url="https://lambda.invalid"))

    status, code, message = error_of(router(tool_call("catalogue.list_products", {})))

    assert (status, code) == (503, "unavailable") and "only reads" in message


def test_an_invoke_never_sent_did_not_run(lambda_api: Any, router: ToolRouter) -> None:
    attempts = failing_sends(lambda_api, EndpointConnectionError(endpoint_url="https://lambda.invalid"))

    status, code, message = error_of(router(tool_call("catalogue.create_product", PRODUCT)))

    assert len(attempts) == 1
    assert (status, code) == (503, "unavailable") and "retry shortly" in message


@pytest.mark.parametrize(
    ("error", "http_status"),
    [("TooManyRequestsException", 429), ("ResourceNotFoundException", 404), ("AccessDeniedException", 403)],
)
def test_an_invoke_lambda_refused_did_not_run(
    lambda_api: Any, router: ToolRouter, error: str, http_status: int
) -> None:
    with Stubber(lambda_api) as stub:
        stub.add_client_error("invoke", error, http_status_code=http_status)
        status, code, message = error_of(router(tool_call("catalogue.create_product", PRODUCT)))

    assert (status, code) == (503, "unavailable") and "retry shortly" in message


def test_a_lambda_service_error_may_have_run(lambda_api: Any, router: ToolRouter) -> None:
    with Stubber(lambda_api) as stub:
        stub.add_client_error("invoke", "ServiceException", http_status_code=500)
        status, code, message = error_of(router(tool_call("catalogue.create_product", PRODUCT)))

    assert (status, code) == (503, "unavailable") and "may have run" in message


def test_a_family_function_that_timed_out_may_have_run(lambda_api: Any, router: ToolRouter) -> None:
    timed_out = {"errorType": "Sandbox.Timedout", "errorMessage": "RequestId: r Error: Task timed out"}
    with Stubber(lambda_api) as stub:
        stub.add_response("invoke", lambda_answer(timed_out, FunctionError="Unhandled"))
        keyed = router(tool_call("catalogue.create_product", PRODUCT, **{"idempotency-key": "t-1"}))
        stub.add_response("invoke", lambda_answer(timed_out, FunctionError="Unhandled"))
        unkeyed = router(tool_call("catalogue.create_product", PRODUCT))

    assert error_of(keyed)[:2] == (409, "idempotency_outcome_unknown")
    assert error_of(unkeyed)[:2] == (503, "unavailable") and "may have run" in error_of(unkeyed)[2]


def test_a_family_function_that_could_not_load_is_an_internal_error(
    lambda_api: Any, router: ToolRouter
) -> None:
    broken = {"errorType": "Runtime.ImportModuleError", "errorMessage": "Unable to import module 'app'"}
    with Stubber(lambda_api) as stub:
        stub.add_response("invoke", lambda_answer(broken, FunctionError="Unhandled"))
        answer = router(tool_call("catalogue.create_product", PRODUCT))

    assert error_of(answer)[:2] == (500, "internal_error")
