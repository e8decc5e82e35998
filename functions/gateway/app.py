"""The gateway function: health, and the tools a caller may call (from the layer's manifest)."""

from __future__ import annotations

from typing import Any

from toolfront.errors import CallRefusedError, UnknownToolError
from toolfront.manifest import callable_tools, load_manifest
from toolfront.rest import error_response, headers_of, json_response, request_id_of, source_ip_of
from toolfront.service import authenticator


def health(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    return json_response(200, {"data": {"status": "ok"}, "request_id": request_id}, request_id)


def list_tools(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/tools``: public tools for anyone; admin tools whose scope and permission the caller holds."""
    try:
        actor = authenticator().authenticate(headers_of(event), source_ip_of(event))
    except CallRefusedError as exc:
        return error_response(exc, request_id)
    tools = callable_tools(load_manifest()["tools"], actor)
    return json_response(200, {"data": {"tools": tools}, "request_id": request_id}, request_id)


ROUTES = {"GET /health": health, "GET /v1/tools": list_tools}


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """API Gateway HTTP API (payload v2) entry point."""
    request_id = request_id_of(event)
    route = ROUTES.get(str(event.get("routeKey", "")))
    if route is None:
        return error_response(UnknownToolError(f"no route {event.get('routeKey')!r}"), request_id)
    return route(event, request_id)
