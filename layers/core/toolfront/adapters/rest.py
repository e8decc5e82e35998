"""The REST adapter: ``POST /v1/tools/{namespace}/{verb_noun}`` in, envelopes and statuses out.

A call's refusal becomes the envelope here; the edge's own refusals (adapters/http.py) are answered
in each route's form, which the route names.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolfront.adapters.http import Request, Response, error_answer
from toolfront.calls.call import Call, CallResult, Entry
from toolfront.errors import UnknownToolError
from toolfront.results import binary_file_name, only_binary
from toolfront.settings import current

if TYPE_CHECKING:  # the adapter is handed its pipeline: whoever builds one imports it
    from toolfront.calls.pipeline import CallPipeline


TOOL_PATH_PREFIX = "/v1/tools/"


def result_answer(result: CallResult, request_id: str, accept: str | None = None) -> Response:
    """The HTTP answer of a call; a success whose only binary block has the MIME type ``accept``
    names exactly is those bytes (``Content-Type`` that type), anything else the JSON envelope."""
    if accept and result.status == 200 and result.body is not None and '"content":' in result.body:
        raw = _raw_answer(result, accept)
        if raw is not None:
            return raw
    headers = dict(result.headers)
    if result.replayed and result.body is not None:  # the first answer exactly; this request's id header
        return Response.json_text(result.status, result.body, {**headers, "idempotent-replayed": "true"})
    if result.error is not None:
        return error_answer(result.error, request_id, headers)
    if result.body is not None:
        return Response.json_text(result.status, result.body, headers)
    return Response.json(result.status, {"data": result.data, "request_id": request_id}, headers)


def result_response(result: CallResult, request_id: str, accept: str | None = None) -> dict[str, Any]:
    """``result_answer`` as the event API Gateway takes (routed calls answer their invoker so)."""
    return result_answer(result, request_id, accept).to_event(request_id)


def _raw_answer(result: CallResult, accept: str) -> Response | None:
    assert result.body is not None
    content = json.loads(result.body).get("content")
    found = only_binary(content) if isinstance(content, list) else None
    if found is None or not _names_exactly(accept, found[0]):
        return None
    mime_type, data = found
    headers = dict(result.headers)
    file_name = binary_file_name(content)
    if file_name is not None:
        headers["content-disposition"] = f'attachment; filename="{file_name}"'
    if result.replayed:
        headers["idempotent-replayed"] = "true"
    return Response.raw(data, mime_type, headers)


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


def call_of(request: Request, tool_name: str, *, base_url: str = "") -> Call:
    return Call(
        tool_name=tool_name,
        request_id=request.request_id,
        headers=request.headers,
        query=request.query,
        body=request.body,
        content_type=request.headers.get("content-type"),
        source_ip=request.source_ip,
        entry=Entry.REST,
        function=request.function,
        base_url=base_url,
    )


class RestAdapter:
    """Serves ``POST /v1/tools/{namespace}/{verb_noun}`` with the pipeline of the function it is in."""

    def __init__(self, pipeline: Callable[[], CallPipeline]) -> None:
        self._pipeline = pipeline

    def __call__(self, request: Request) -> Response:
        tool_name = tool_name_of(request.path)
        if tool_name is None:
            raise UnknownToolError("tools are called at POST /v1/tools/<namespace>/<verb_noun>")
        settings = current()
        call = call_of(request, tool_name, base_url=request.base_url(settings.public_url, settings.region))
        return result_answer(self._pipeline().run(call), request.request_id, request.headers.get("accept"))
