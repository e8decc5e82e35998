"""Payload format 2.0: the event a request becomes and the HTTP reply a handler result becomes."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from toolfront_dev.payload import InvalidResponseError, LambdaContext, build_event, build_response
from toolfront_dev.routing import RouteMatch
from toolfront_dev.template import Route

CATALOGUE = Route("CatalogueFunction", "POST", "/v1/tools/catalogue/{verb_noun}")


def catalogue_event(body: bytes = b'{"sku": "MUG-01"}', **builder: Any) -> dict[str, Any]:
    request = Request(
        EnvironBuilder(
            method="POST",
            path="/v1/tools/catalogue/get_product",
            query_string="a=1&a=2&b=x%20y",
            headers=[("X-Api-Key", "tfk_x"), ("User-Agent", "tests/1.0"), ("Cookie", "s=1; t=2")],
            data=body,
            **builder,
        ).get_environ()
    )
    match = RouteMatch(CATALOGUE, {"verb_noun": "get_product"})
    return build_event(request, match, request_id="req-1", now=datetime(2026, 3, 5, 19, 3, 58, tzinfo=UTC))


def test_build_event_sets_version_and_route_key() -> None:
    event = catalogue_event()

    assert event["version"] == "2.0"
    assert event["routeKey"] == "POST /v1/tools/catalogue/{verb_noun}"
    assert event["requestContext"]["routeKey"] == event["routeKey"]
    assert event["rawPath"] == "/v1/tools/catalogue/get_product"


def test_build_event_carries_path_parameters() -> None:
    assert catalogue_event()["pathParameters"] == {"verb_noun": "get_product"}


def test_build_event_duplicate_query_values_comma_joined() -> None:
    event = catalogue_event()

    assert event["rawQueryString"] == "a=1&a=2&b=x%20y"
    assert event["queryStringParameters"] == {"a": "1,2", "b": "x y"}


def test_build_event_headers_lowercased_and_cookies_split_out() -> None:
    event = catalogue_event()

    assert event["headers"]["x-api-key"] == "tfk_x"
    assert all(name == name.lower() for name in event["headers"])
    assert "cookie" not in event["headers"]
    assert event["cookies"] == ["s=1", "t=2"]


def test_build_event_request_context_describes_the_call() -> None:
    context = catalogue_event()["requestContext"]

    assert context["http"] == {
        "method": "POST",
        "path": "/v1/tools/catalogue/get_product",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "tests/1.0",
    }
    assert context["requestId"] == "req-1"
    assert context["stage"] == "$default"
    assert context["time"] == "05/Mar/2026:19:03:58 +0000"
    assert context["timeEpoch"] == 1772737438000


def test_build_event_utf8_body_stays_text() -> None:
    event = catalogue_event('{"name": "café"}'.encode())

    assert event["body"] == '{"name": "café"}'
    assert event["isBase64Encoded"] is False


def test_build_event_binary_body_base64_encoded() -> None:
    event = catalogue_event(b"\xff\xfe\x00binary")

    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\xff\xfe\x00binary"


def test_build_event_empty_body_and_query_left_out() -> None:
    request = Request(EnvironBuilder(method="GET", path="/health").get_environ())
    event = build_event(request, RouteMatch(Route("Gateway", "GET", "/health"), {}), request_id="r")

    assert not {"body", "queryStringParameters", "pathParameters", "cookies"} & set(event)
    assert event["rawQueryString"] == ""


def test_build_event_validates_against_powertools_v2_model() -> None:
    models = pytest.importorskip("aws_lambda_powertools.utilities.parser.models")

    parsed = models.APIGatewayProxyEventV2Model.model_validate(catalogue_event())

    assert parsed.pathParameters == {"verb_noun": "get_product"}
    assert parsed.requestContext.http.method == "POST"


def test_build_response_full_result_maps_status_headers_cookies() -> None:
    response = build_response(
        {
            "statusCode": 201,
            "headers": {"content-type": "application/json", "x-n": 3},
            "cookies": ["a=1; Path=/", "b=2"],
            "body": '{"ok": true}',
        }
    )

    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-n"] == "3"
    assert response.headers.getlist("Set-Cookie") == ["a=1; Path=/", "b=2"]
    assert response.get_data() == b'{"ok": true}'


def test_build_response_base64_body_decoded() -> None:
    body = base64.b64encode(b"\x89PNG").decode()
    response = build_response({"statusCode": 200, "body": body, "isBase64Encoded": True})

    assert response.get_data() == b"\x89PNG"


def test_build_response_without_status_code_is_200_json() -> None:
    response = build_response({"hello": "world"})

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert json.loads(response.get_data()) == {"hello": "world"}


@pytest.mark.parametrize(
    "result",
    [
        {"statusCode": "200"},
        {"statusCode": 200, "body": {"not": "a string"}},
        {"statusCode": 200, "body": "%%%", "isBase64Encoded": True},
        {"statusCode": 200, "headers": ["x"]},
        {"not_json": object()},
    ],
)
def test_build_response_malformed_result_raises(result: Any) -> None:
    with pytest.raises(InvalidResponseError):
        build_response(result)


def test_lambda_context_remaining_time_counts_down_to_zero() -> None:
    context = LambdaContext("fn", 512, "arn:aws:lambda:us-east-1:123456789012:function:fn", "id", 0)

    assert context.get_remaining_time_in_millis() == 0
