"""The gateway function: health, the tools a caller may call, held calls' approvals, and core's
``system.*`` tools (through the same call pipeline as every family)."""

from __future__ import annotations

from functools import cache
from typing import Any

from toolfront.actors import Actor
from toolfront.dispatch import ToolRouter
from toolfront.errors import CallRefusedError, NotFoundError, UnauthenticatedError, UnknownToolError
from toolfront.manifest import callable_tools
from toolfront.mcp import McpEndpoint
from toolfront.mcp_shapes import ToolCatalog
from toolfront.rest import base_url_of, error_response, headers_of, json_response, request_id_of, source_ip_of
from toolfront.service import approval_store, authenticator, family_handler
from toolfront.system_tools import all_tools, system_tools

system = family_handler("core", system_tools, core=True)


def health(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    return json_response(200, {"data": {"status": "ok"}, "request_id": request_id}, request_id)


def _actor(event: dict[str, Any]) -> Actor:
    return authenticator().authenticate(headers_of(event), source_ip_of(event))


def list_tools(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/tools``: public tools for anyone; admin tools whose scope and permission the caller holds."""
    try:
        actor = _actor(event)
    except CallRefusedError as exc:
        return error_response(exc, request_id)
    tools = callable_tools(all_tools(), actor)
    return json_response(200, {"data": {"tools": tools}, "request_id": request_id}, request_id)


def get_approval(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/approvals/{id}``: a held call's approval, for a key of its requester's principal."""
    try:
        actor = _actor(event)
        if not actor.authenticated:  # checked before any read: no approval is fetched for nobody
            raise UnauthenticatedError("send the key of the call (Authorization: Bearer ...)")
        store = approval_store()
        approval_id = str((event.get("pathParameters") or {}).get("id", ""))
        approval = store.get(approval_id) if store else None
        if approval is None or not approval.requester.same_as(actor):
            raise NotFoundError("there is no such approval")  # another requester's: existence not revealed
    except CallRefusedError as exc:
        return error_response(exc, request_id)
    return json_response(200, {"data": approval.describe(), "request_id": request_id}, request_id)


def openapi(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/openapi.json``: the OpenAPI 3.1 document of every tool."""
    from toolfront.openapi import openapi_document  # deferred: only these two routes need it

    document = openapi_document(all_tools(), server_url=base_url_of(event) or None)
    return json_response(200, document, request_id)


def docs(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/docs``: the API for people, one self-contained page."""
    from toolfront.docs import docs_page
    from toolfront.openapi import openapi_document

    page = docs_page(openapi_document(all_tools(), server_url=base_url_of(event) or None))
    return {
        "statusCode": 200,
        "headers": {"content-type": "text/html; charset=utf-8", "x-request-id": request_id},
        "body": page,
    }


@cache
def mcp_endpoint() -> McpEndpoint:
    """Built on first use: the tool entries are encoded once per cold start."""
    catalog = ToolCatalog(all_tools())
    return McpEndpoint(catalog, ToolRouter(catalog, system.run), authenticator().authenticate)


def mcp(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``POST /mcp`` (``GET``/``DELETE`` answer 405): MCP for every tool."""
    return mcp_endpoint().handle(event)


ROUTES = {
    "POST /mcp": mcp,
    "GET /mcp": mcp,
    "DELETE /mcp": mcp,
    "GET /health": health,
    "GET /v1/tools": list_tools,
    "GET /v1/approvals/{id}": get_approval,
    "GET /v1/openapi.json": openapi,
    "GET /v1/docs": docs,
}


def lambda_handler(event: dict[str, Any], context: Any) -> Any:
    """API Gateway HTTP API (payload v2) entry point, and the workflow's ``execute`` task."""
    route_key = str(event.get("routeKey", ""))
    if route_key == "POST /v1/tools/system/{verb_noun}" or "toolfront_task" in event:
        return system(event, context)
    request_id = request_id_of(event)
    route = ROUTES.get(route_key)
    if route is None:
        return error_response(UnknownToolError(f"no route {route_key!r}"), request_id)
    return route(event, request_id)
