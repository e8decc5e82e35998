"""API Gateway HTTP API payload format 2.0: the event a request becomes, and the reply a result becomes.

Also the Lambda context object handlers receive, and Lambda's limit on a synchronous response.
Shapes follow AWS's documentation of payload 2.0.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from werkzeug.datastructures import Headers
from werkzeug.wrappers import Request, Response

from toolfront_dev.routing import RouteMatch

LOCAL_ACCOUNT_ID = "123456789012"  # moto's default account, so ARNs line up with moto's
LOCAL_API_ID = "local"
#: Lambda's limit on a synchronous invocation's payload, each way: 6 MB as documented. Lambda's own
#: error names 6,291,556 bytes for a response; refusing from the documented figure is 100 bytes
#: stricter, so what passes locally passes on AWS.
PAYLOAD_LIMIT_BYTES = 6_291_456
#: What Lambda answers an ``Invoke`` whose function returned more (with ``FunctionError: Unhandled``).
RESPONSE_TOO_LARGE = {
    "errorMessage": "Response payload size exceeded maximum allowed payload size (6291556 bytes).",
    "errorType": "Function.ResponseSizeTooLarge",
}
# API Gateway's time field uses English month abbreviations whatever the locale; strftime's %b does not.
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class InvalidResponseError(ValueError):
    """A handler returned something API Gateway cannot turn into an HTTP response (it answers 500)."""


@dataclass(frozen=True, slots=True)
class LambdaContext:
    """The attributes and method of the Python runtime's context object that handlers use."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    aws_request_id: str
    deadline_epoch_ms: int
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = "local"
    identity: None = None
    client_context: None = None

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the function's Timeout, as Lambda counts them."""
        return max(0, self.deadline_epoch_ms - int(time.time() * 1000))


def build_event(
    request: Request,
    match: RouteMatch,
    *,
    request_id: str,
    api_id: str = LOCAL_API_ID,
    account_id: str = LOCAL_ACCOUNT_ID,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Build the payload 2.0 event API Gateway would send for ``request`` on ``match.route``.

    Keys API Gateway leaves out when empty (``cookies``, ``queryStringParameters``,
    ``pathParameters``, ``body``) are left out here too.
    """
    now = now or datetime.now(UTC)
    host = request.host
    headers = {name.lower(): value for name, value in request.headers.items() if name.lower() != "cookie"}
    # API Gateway always adds these; code reading the caller's address depends on them.
    headers.setdefault("x-forwarded-for", request.remote_addr or "127.0.0.1")
    headers.setdefault("x-forwarded-proto", request.scheme)
    headers.setdefault("x-forwarded-port", str(request.environ.get("SERVER_PORT", "")))
    route_key = match.route.route_key
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        # HTTP APIs hand over the decoded path in rawPath (unlike REST APIs and function URLs).
        "rawPath": request.path,
        "rawQueryString": request.query_string.decode("utf-8", "replace"),
        "headers": headers,
        "requestContext": {
            "accountId": account_id,
            "apiId": api_id,
            "domainName": host,
            "domainPrefix": host.split(":")[0].split(".")[0],
            "http": {
                "method": request.method,
                "path": request.path,
                "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                "sourceIp": request.remote_addr or "127.0.0.1",
                "userAgent": request.headers.get("User-Agent", ""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": "$default",
            "time": _gateway_time(now),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    cookies = _cookies(request.headers.getlist("Cookie"))
    if cookies:
        event["cookies"] = cookies
    if request.args:
        # Payload 2.0 has no multi-value fields: duplicates are joined with commas.
        event["queryStringParameters"] = {key: ",".join(request.args.getlist(key)) for key in request.args}
    if match.path_parameters:
        event["pathParameters"] = dict(match.path_parameters)
    body = request.get_data()
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(body).decode("ascii")
            event["isBase64Encoded"] = True
    return event


def response_payload(result: Any) -> bytes:
    """A handler's result as the Python runtime sends it to Lambda (its JSON).

    Raises:
        InvalidResponseError: the result is not JSON-serialisable (the runtime's
            ``Runtime.MarshalError``).
    """
    try:
        return json.dumps(result).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidResponseError(f"Unable to marshal response: {exc}") from exc


def too_large(payload: bytes) -> bool:
    """Whether Lambda would refuse ``payload`` as a synchronous response (over 6 MB)."""
    return len(payload) > PAYLOAD_LIMIT_BYTES


def build_response(result: Any) -> Response:
    """Turn a handler's return value into the HTTP response API Gateway would send.

    Raises:
        InvalidResponseError: a malformed result (a non-integer statusCode, a non-string body...).
    """
    if not (isinstance(result, Mapping) and "statusCode" in result):
        # Payload 2.0 shortcut: anything without a statusCode is a 200 with the result as JSON.
        try:
            return Response(json.dumps(result), 200, content_type="application/json")
        except (TypeError, ValueError) as exc:
            raise InvalidResponseError(f"result is not JSON-serialisable: {exc}") from exc
    status = result["statusCode"]
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise InvalidResponseError(f"statusCode must be an integer HTTP status, got {status!r}")
    headers = Headers()
    raw_headers = result.get("headers") or {}
    if not isinstance(raw_headers, Mapping):
        raise InvalidResponseError("headers must be an object")
    for name, value in raw_headers.items():
        headers.add(str(name), str(value))
    cookies = result.get("cookies") or []
    if not isinstance(cookies, list):
        raise InvalidResponseError("cookies must be a list")
    for cookie in cookies:  # payload 2.0: each cookie becomes its own set-cookie header
        headers.add("Set-Cookie", str(cookie))
    return Response(_body(result.get("body"), bool(result.get("isBase64Encoded"))), status, headers=headers)


def gateway_error(status: int, message: str) -> Response:
    """A reply API Gateway itself produces, e.g. 404 ``{"message":"Not Found"}``."""
    return Response(
        json.dumps({"message": message}, separators=(",", ":")), status, content_type="application/json"
    )


def _body(body: Any, is_base64: bool) -> bytes:
    if body is None:
        return b""
    if not isinstance(body, str):
        raise InvalidResponseError(f"body must be a string, got {type(body).__name__}")
    if not is_base64:
        return body.encode("utf-8")
    try:
        return base64.b64decode(body, validate=True)
    except binascii.Error as exc:
        raise InvalidResponseError("isBase64Encoded is true but body is not base64") from exc


def _cookies(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(";") if part.strip()]


def _gateway_time(now: datetime) -> str:
    now = now.astimezone(UTC)
    return f"{now.day:02d}/{_MONTHS[now.month - 1]}/{now:%Y:%H:%M:%S} +0000"
