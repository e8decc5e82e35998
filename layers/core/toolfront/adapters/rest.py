"""The REST adapter: API Gateway HTTP API (payload v2) events in, envelopes and statuses out.

This module and the MCP adapter are the only places that map toolfront errors to a protocol.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolfront.adapters.http import (
    Event,
    Response,
    base_url_of,
    body_bytes,
    error_response,
    headers_of,
    json_response,
    request_id_of,
    source_ip_of,
    text_response,
)
from toolfront.calls.call import Call, CallResult, Entry
from toolfront.errors import UnknownToolError
from toolfront.results import binary_file_name, only_binary
from toolfront.settings import current

if TYPE_CHECKING:  # the adapter is handed its pipeline: whoever builds one imports it
    from toolfront.calls.pipeline import CallPipeline


TOOL_PATH_PREFIX = "/v1/tools/"
#: Section 17's header set of a JSON answer.
JSON_HEADERS = {"x-content-type-options": "nosniff"}
#: Section 17's header set of raw bytes: a tool's SVG (or HTML) served from the API's origin, which also
#: serves the approval and consent pages, must neither be sniffed into another type nor run script.
RAW_HEADERS = {"x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox"}


def result_response(result: CallResult, request_id: str, accept: str | None = None) -> Response:
    """The HTTP answer of a call; a success whose only binary block has the MIME type ``accept``
    names exactly is those bytes (``Content-Type`` that type), anything else the JSON envelope."""
    if accept and result.status == 200 and result.body is not None and '"content":' in result.body:
        raw = _raw_answer(result, request_id, accept)
        if raw is not None:
            return raw
    headers = {**result.headers, **JSON_HEADERS}
    if result.replayed and result.body is not None:  # the first answer exactly; this request's id header
        return text_response(
            result.status, result.body, request_id, {**headers, "idempotent-replayed": "true"}
        )
    if result.error is not None:
        return error_response(result.error, request_id, headers)
    if result.body is not None:
        return text_response(result.status, result.body, request_id, headers)
    return json_response(result.status, {"data": result.data, "request_id": request_id}, request_id, headers)


def _raw_answer(result: CallResult, request_id: str, accept: str) -> Response | None:
    assert result.body is not None
    content = json.loads(result.body).get("content")
    found = only_binary(content) if isinstance(content, list) else None
    if found is None or not _names_exactly(accept, found[0]):
        return None
    mime_type, data = found
    headers = {**result.headers, "content-type": mime_type, "x-request-id": request_id, **RAW_HEADERS}
    file_name = binary_file_name(content)
    if file_name is not None:
        headers["content-disposition"] = f'attachment; filename="{file_name}"'
    if result.replayed:
        headers["idempotent-replayed"] = "true"
    # API Gateway decodes a base64 body flagged so: the client receives the bytes themselves.
    return {"statusCode": 200, "headers": headers, "body": data, "isBase64Encoded": True}


def _names_exactly(accept: str, mime_type: str) -> bool:
    """Whether ``Accept`` lists ``mime_type`` itself (not through a wildcard) and not JSON."""
    listed = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return mime_type.split(";", maxsplit=1)[0].strip().lower() in listed and "application/json" not in listed


def tool_name_of(raw_path: str) -> str | None:
    """``/v1/tools/<namespace>/<verb_noun>`` → ``<namespace>.<verb_noun>``."""
    if not raw_path.startswith(TOOL_PATH_PREFIX):
        return None
    parts = raw_path[len(TOOL_PATH_PREFIX) :].strip("/").split("/")
    return f"{parts[0]}.{parts[1]}" if len(parts) == 2 and all(parts) else None


def call_of(
    event: Event, tool_name: str, request_id: str, context: Any = None, *, base_url: str = ""
) -> Call:
    headers = headers_of(event)
    return Call(
        tool_name=tool_name,
        request_id=request_id,
        headers=headers,
        query=event.get("queryStringParameters") or {},
        body=body_bytes(event),
        content_type=headers.get("content-type"),
        source_ip=source_ip_of(event),
        entry=Entry.REST,
        function=str(getattr(context, "invoked_function_arn", "") or ""),
        base_url=base_url,
    )


class RestAdapter:
    """Serves ``POST /v1/tools/{namespace}/{verb_noun}`` with the pipeline of the function it is in."""

    def __init__(self, pipeline: Callable[[], CallPipeline]) -> None:
        self._pipeline = pipeline

    def handle(self, event: Event, context: Any = None) -> Response:
        request_id = request_id_of(event)
        tool_name = tool_name_of(str(event.get("rawPath", "")))
        if tool_name is None:
            return error_response(
                UnknownToolError("tools are called at POST /v1/tools/<namespace>/<verb_noun>"), request_id
            )
        settings = current()
        base_url = base_url_of(event, settings.public_url, settings.region)
        call = call_of(event, tool_name, request_id, context, base_url=base_url)
        accept = headers_of(event).get("accept")
        return result_response(self._pipeline().run(call), request_id, accept)
