"""No 500 from input: what Python's JSON parser lets through is refused at every entry (REST, MCP,
the approval form), and integral floats reach handlers and fingerprints as the integers they are."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.aws import EVENT_ADMIN_KEY, seed
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront.calls.inputs import parse_json
from toolfront.errors import InvalidJsonError

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
HOSTILE_BODIES = {
    "a lone surrogate": '{"sku": "\\ud800"}',
    "a lone surrogate in a key": '{"\\udfff": 1}',
    "NaN": '{"limit": NaN}',
    "Infinity": '{"limit": -Infinity}',
    "an overflowing number": '{"limit": 1e400}',
    "nesting over 64": '{"x": ' + "[" * 70 + "]" * 70 + "}",
    "nesting of 2000": '{"x": ' + "[" * 2000 + "]" * 2000 + "}",
}


@pytest.fixture
def catalogue(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    return handler


@pytest.fixture
def gateway(aws: None) -> Handler:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("gateway").lambda_handler
    return handler


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_rest_refuses_what_is_not_json_with_400(catalogue: Handler, body: str) -> None:
    response = catalogue(load_event("catalogue_set_prices", body=body), None)
    assert response["statusCode"] == 400, response["body"]
    assert json.loads(response["body"])["error"]["code"] == "invalid_json"
    assert len(response["body"]) < 1000


def mcp(gateway: Handler, body: str, **headers: str) -> dict[str, Any]:
    event = load_event("mcp_tools_call", body=body)
    event["headers"] = {**event["headers"], **headers}
    return gateway(event, None)


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_mcp_refuses_what_is_not_json_with_a_parse_error(gateway: Handler, body: str) -> None:
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})[:-1]
    response = mcp(gateway, f'{message}, "params": {{"name": "system.list_tools", "arguments": {body}}}}}')
    assert response["statusCode"] == 400
    assert json.loads(response["body"])["error"]["code"] == -32700


@pytest.mark.parametrize("params", [[1], "x", 5, True])
def test_mcp_params_that_are_no_object_are_invalid_params(gateway: Handler, params: Any) -> None:
    response = mcp(gateway, json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}))
    answer = json.loads(response["body"])
    assert response["statusCode"] == 400 and answer["error"]["code"] == -32602 and answer["id"] == 7


@pytest.mark.parametrize("message_id", [{"a": 1}, [1], True, 1.5])
def test_mcp_ids_other_than_string_integer_or_null_are_invalid_requests(
    gateway: Handler, message_id: Any
) -> None:
    response = mcp(gateway, json.dumps({"jsonrpc": "2.0", "id": message_id, "method": "ping"}))
    answer = json.loads(response["body"])
    assert response["statusCode"] == 400 and answer["error"]["code"] == -32600 and answer["id"] is None


def test_mcp_bodies_over_one_mib_are_413(gateway: Handler) -> None:
    padding = "x" * (1024 * 1024)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": padding}})
    assert mcp(gateway, body)["statusCode"] == 413


def test_integral_floats_are_integers_for_the_handler_and_the_store(catalogue: Handler) -> None:
    created = catalogue(
        load_event(
            "catalogue_create_product",
            body=json.dumps({"sku": "F-1", "name": "f", "price_cents": 1.2e3, "currency": "EUR"}),
        ),
        None,
    )
    assert json.loads(created["body"])["data"]["product"]["price_cents"] == 1200
    for limit in ("66.0", "1e2", "2e0"):
        listed = catalogue(load_event("catalogue_list_products", body=f'{{"limit": {limit}}}'), None)
        assert listed["statusCode"] == 200, listed["body"]


def test_an_integral_float_replays_the_answer_of_its_integer(catalogue: Handler) -> None:
    first = {"sku": "F-2", "name": "f", "price_cents": 5, "currency": "EUR", "idempotency_key": "k"}
    again = {**first, "price_cents": 5.0}
    catalogue(load_event("catalogue_create_product", body=json.dumps(first)), None)
    replay = catalogue(load_event("catalogue_create_product", body=json.dumps(again)), None)
    assert replay["statusCode"] == 200 and replay["headers"].get("idempotent-replayed") == "true"


def test_a_float_with_a_fraction_is_still_refused_for_an_integer(catalogue: Handler) -> None:
    response = catalogue(load_event("catalogue_list_products", body='{"limit": 2.5}'), None)
    assert response["statusCode"] == 422


def test_the_log_line_of_a_refused_deep_body_stays_small(
    catalogue: Handler, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    body = '{"prices": ' + "[" * 900 + "]" * 900 + "}"  # once a 352 KB traceback per request
    capsys.readouterr()
    response = catalogue(load_event("catalogue_set_prices", body=body), None)
    assert response["statusCode"] == 400
    written = capsys.readouterr()
    assert len(written.out) + len(written.err) < 2000
    assert not [record for record in caplog.records if record.exc_info]


def test_mcp_with_a_key_while_the_key_table_is_down_is_503_not_500(gateway: Handler) -> None:
    from botocore.exceptions import EndpointConnectionError

    from toolfront.aws import clients

    def down(**_: Any) -> None:
        raise EndpointConnectionError(endpoint_url="https://dynamodb.invalid")

    shared = clients.client("dynamodb")
    shared.meta.events.register("provide-client-params.dynamodb", down)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        response = mcp(gateway, body, authorization=f"Bearer {EVENT_ADMIN_KEY}")
    finally:
        shared.meta.events.unregister("provide-client-params.dynamodb", down)
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["error"]["code"] == "unavailable"


def test_an_mcp_call_whose_function_cannot_be_invoked_is_an_unavailable_result(gateway: Handler) -> None:
    from botocore.stub import Stubber

    from toolfront.aws import clients

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "catalogue-list_products", "arguments": {}},
        }
    )
    with Stubber(clients.client("lambda")) as lambda_api:  # the family's function is not there
        lambda_api.add_client_error("invoke", "ResourceNotFoundException", http_status_code=404)
        response = mcp(gateway, body, authorization=f"Bearer {EVENT_ADMIN_KEY}")
    result = json.loads(response["body"])["result"]
    assert response["statusCode"] == 200
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "unavailable"


def test_an_mcp_call_whose_function_answers_no_response_is_an_internal_error_result(gateway: Handler) -> None:
    import io

    from botocore.response import StreamingBody
    from botocore.stub import Stubber

    from toolfront.aws import clients

    body = json.dumps(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "catalogue-list_products"}}
    )
    garbage = b'{"errorMessage": "not a function answer"}'
    with Stubber(clients.client("lambda")) as lambda_api:
        lambda_api.add_response(
            "invoke", {"StatusCode": 200, "Payload": StreamingBody(io.BytesIO(garbage), len(garbage))}
        )
        response = mcp(gateway, body, authorization=f"Bearer {EVENT_ADMIN_KEY}")
    result = json.loads(response["body"])["result"]
    assert response["statusCode"] == 200
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "internal_error"


def encoded(event: dict[str, Any], body: bytes) -> dict[str, Any]:
    """``event`` carrying ``body`` as API Gateway carries bytes that are no UTF-8 text: base64."""
    return {**event, "body": base64.b64encode(body).decode(), "isBase64Encoded": True}


def no_key(tool: str, body: bytes) -> dict[str, Any]:
    """A keyless REST call of ``<namespace>.<tool>`` with ``body`` as it is."""
    namespace, verb_noun = tool.split(".")
    event = load_event("catalogue_get_product_without_key")
    route = "POST /v1/tools/" + namespace + "/{verb_noun}"
    context = {**event["requestContext"], "routeKey": route}
    path = f"/v1/tools/{namespace}/{verb_noun}"
    return encoded(
        {
            **event,
            "routeKey": route,
            "rawPath": path,
            "requestContext": context,
            "pathParameters": {"verb_noun": verb_noun},
        },
        body,
    )


# Every JSON text here holds a lone surrogate once decoded (json.loads detects UTF-16 and UTF-32).
NOT_UTF8 = {
    "UTF-16, an escaped surrogate": '{"session_token": "\\ud800xxxxxxxxxxxxxxxxxxxxxxxx"}'.encode("utf-16"),
    "UTF-16-LE, a raw surrogate": '{"session_token": "\ud800xxxxxxxxxxxxxxxxxxxxxxxx"}'.encode(
        "utf-16-le", "surrogatepass"
    ),
    "UTF-32-BE, an escaped surrogate": '{"session_token": "\\udfffxxxxxxxxxxxxxxxxxxxxxxxx"}'.encode(
        "utf-32-be"
    ),
}


@pytest.mark.parametrize("body", NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_guest_get_subscription_refuses_a_body_that_is_not_utf8_with_400(aws: None, body: bytes) -> None:
    guest: Handler = load_family("guest").lambda_handler
    response = guest(no_key("guest.get_subscription", body), None)
    assert response["statusCode"] == 400, response["body"]
    assert json.loads(response["body"])["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_system_confirm_call_refuses_a_body_that_is_not_utf8_with_400(
    gateway: Handler, encoding: str
) -> None:
    body = '{"approval_id": "apr_1", "code": "\ud800"}'.encode(encoding, "surrogatepass")
    response = gateway(no_key("system.confirm_call", body), None)
    assert response["statusCode"] == 400, response["body"]
    assert json.loads(response["body"])["error"]["code"] == "invalid_json"


def test_rest_refuses_valid_json_in_utf16_with_400(catalogue: Handler) -> None:
    body = json.dumps({"prices": []}).encode("utf-16")
    response = catalogue(encoded(load_event("catalogue_set_prices"), body), None)
    assert response["statusCode"] == 400 and json.loads(response["body"])["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_mcp_refuses_a_method_with_a_surrogate_in_utf16_or_utf32_with_a_parse_error(
    gateway: Handler, encoding: str
) -> None:
    body = '{"jsonrpc": "2.0", "id": 1, "method": "\ud800"}'.encode(encoding, "surrogatepass")
    response = gateway(encoded(load_event("mcp_tools_call"), body), None)
    assert response["statusCode"] == 400, response["body"]
    assert json.loads(response["body"])["error"]["code"] == -32700


def test_a_utf8_byte_order_mark_is_ignored() -> None:
    assert parse_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


def test_a_lone_surrogate_in_a_str_is_refused_without_an_escape() -> None:
    with pytest.raises(InvalidJsonError, match="lone surrogate"):
        parse_json('{"a": "\udc00"}')
