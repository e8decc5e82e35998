"""The REST adapter: API Gateway HTTP API (payload v2) events in, envelopes and statuses out.

This module and the MCP adapter are the only places that map toolfront errors to a protocol.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from toolfront.envelopes import error_body
from toolfront.errors import ToolfrontError, UnknownToolError
from toolfront.pipeline import Call, CallPipeline, CallResult

logger = logging.getLogger("toolfront.rest")

TOOL_PATH_PREFIX = "/v1/tools/"
Event = dict[str, Any]
Response = dict[str, Any]


def request_id_of(event: Event) -> str:
    """API Gateway's request id (a fresh one for events that carry none, e.g. hand-made tests)."""
    rid = event.get("requestContext", {}).get("requestId")
    return str(rid) if rid else uuid.uuid4().hex


def headers_of(event: Event) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}


def source_ip_of(event: Event) -> str:
    return str(event.get("requestContext", {}).get("http", {}).get("sourceIp", ""))


def text_response(
    status: int, body: str, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A v2 response carrying ``body`` (JSON text) as it is, with the request id header."""
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json", "x-request-id": request_id, **(headers or {})},
        "body": body,
        "isBase64Encoded": False,
    }


def json_response(
    status: int, body: dict[str, Any], request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A v2 response with a JSON body and the request id header."""
    return text_response(
        status, json.dumps(body, ensure_ascii=False, separators=(",", ":")), request_id, headers
    )


def error_response(
    error: ToolfrontError, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    extra = {**(headers or {}), **error.headers}
    if error.http_status == 401:
        extra["www-authenticate"] = 'Bearer realm="toolfront"'
    return text_response(error.http_status, error_body(error, request_id), request_id, extra)


def result_response(result: CallResult, request_id: str) -> Response:
    if result.replayed and result.body is not None:  # the first answer exactly; this request's id header
        replayed = {**result.headers, "idempotent-replayed": "true"}
        return text_response(result.status, result.body, request_id, replayed)
    if result.error is not None:
        return error_response(result.error, request_id, result.headers)
    if result.body is not None:
        return text_response(result.status, result.body, request_id, result.headers)
    return json_response(
        result.status, {"data": result.data, "request_id": request_id}, request_id, result.headers
    )


def tool_name_of(raw_path: str) -> str | None:
    """``/v1/tools/<namespace>/<verb_noun>`` → ``<namespace>.<verb_noun>``."""
    if not raw_path.startswith(TOOL_PATH_PREFIX):
        return None
    parts = raw_path[len(TOOL_PATH_PREFIX) :].strip("/").split("/")
    return f"{parts[0]}.{parts[1]}" if len(parts) == 2 and all(parts) else None


def base_url_of(event: Event, headers: Mapping[str, str] | None = None) -> str:
    """The API's own address as the caller reached it (where approval links point).

    ``headers`` are the event's, lower-cased, when the caller has them already.
    """
    headers = headers_of(event) if headers is None else headers
    host = headers.get("host") or event.get("requestContext", {}).get("domainName", "")
    scheme = headers.get("x-forwarded-proto", "https").split(",")[0].strip()
    return f"{scheme}://{host}" if host else ""


def call_of(event: Event, tool_name: str, request_id: str, context: Any = None) -> Call:
    headers = headers_of(event)
    return Call(
        tool_name=tool_name,
        request_id=request_id,
        headers=headers,
        query=event.get("queryStringParameters") or {},
        body=_body_bytes(event),
        content_type=headers.get("content-type"),
        source_ip=source_ip_of(event),
        entry="rest",
        function=str(getattr(context, "invoked_function_arn", "") or ""),
        base_url=base_url_of(event, headers),
    )


class RestAdapter:
    """Serves ``POST /v1/tools/{namespace}/{verb_noun}`` for one family's pipeline."""

    def __init__(self, pipeline: Callable[[], CallPipeline]) -> None:
        self._pipeline_factory = pipeline
        self._pipeline: CallPipeline | None = None

    def pipeline(self) -> CallPipeline:
        """The pipeline, built on first use (never at import: no AWS at init)."""
        if self._pipeline is None:
            self._pipeline = self._pipeline_factory()
        return self._pipeline

    def forget_pipeline(self) -> None:
        """Build the pipeline again on the next call (after the settings changed)."""
        self._pipeline = None

    def handle(self, event: Event, context: Any = None) -> Response:
        request_id = request_id_of(event)
        tool_name = tool_name_of(str(event.get("rawPath", "")))
        if tool_name is None:
            return error_response(
                UnknownToolError("tools are called at POST /v1/tools/<namespace>/<verb_noun>"), request_id
            )
        return result_response(
            self.pipeline().run(call_of(event, tool_name, request_id, context)), request_id
        )


def _body_bytes(event: Event) -> bytes | None:
    body = event.get("body")
    if body is None:
        return None
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            pass  # API Gateway never sends this; take the text as it is and let the JSON check speak
    return str(body).encode("utf-8")
