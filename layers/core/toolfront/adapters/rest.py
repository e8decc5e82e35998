"""The REST adapter: ``POST /v1/tools/{namespace}/{verb_noun}`` in, envelopes and statuses out.

A call's refusal becomes the envelope here; the edge's own refusals (adapters/http.py) are answered
in each route's form, which the route names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolfront.adapters.http import Request, Response, error_answer
from toolfront.calls.call import Call, CallResult, Entry
from toolfront.errors import UnknownToolError
from toolfront.results import raw_contents, raw_file_name, raw_forms
from toolfront.settings import current

if TYPE_CHECKING:  # the adapter is handed its pipeline: whoever builds one imports it
    from toolfront.calls.pipeline import CallPipeline


TOOL_PATH_PREFIX = "/v1/tools/"
_QVALUE = re.compile(r"0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?")  # RFC 9110's qvalue


def result_answer(result: CallResult, request_id: str, accept: str | None = None) -> Response:
    """The HTTP answer of a call: a success holding a block that ``accept`` prefers to JSON, named
    exactly (``_preferred``), is that block's bytes (``Content-Type`` its type), anything else the
    JSON envelope."""
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
    forms = raw_forms(content) if isinstance(content, list) else {}
    chosen = _preferred(accept, list(forms))
    if chosen is None:
        return None
    block = forms[chosen]
    mime_type, data = raw_contents(block)
    headers = dict(result.headers)
    file_name = raw_file_name(block)
    if file_name is not None:
        headers["content-disposition"] = f'attachment; filename="{file_name}"'
    if result.replayed:
        headers["idempotent-replayed"] = "true"
    return Response.raw(data, mime_type, headers)


def _preferred(accept: str, offered: list[str]) -> str | None:
    """The offered type ``accept`` names itself (not through a wildcard) with the highest q above
    zero and above ``application/json``'s (JSON wins a tie); of equals, the one offered first."""
    weights = _accepted(accept)
    best = max(offered, key=lambda mime_type: weights.get(mime_type, 0.0), default=None)
    if best is None or weights.get(best, 0.0) <= weights.get("application/json", 0.0):
        return None
    return best


def _accepted(accept: str) -> dict[str, float]:
    """Each media range of an ``Accept`` header, lower-cased, with its q (1 when absent; a malformed
    q counts as 0: not acceptable)."""
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media_range, *parameters = part.split(";")
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                weight = float(value) if _QVALUE.fullmatch(value.strip()) else 0.0
        key = media_range.strip().lower()
        if key:
            weights[key] = max(weights.get(key, 0.0), weight)
    return weights


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
        traceparent=request.headers.get("traceparent", ""),
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
