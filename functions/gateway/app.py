"""The gateway function: health, the tools a caller may call, held calls' approvals, and core's
``system.*`` tools (through the same call pipeline as every family)."""

from __future__ import annotations

from typing import Any

from toolfront.actors import Actor
from toolfront.errors import CallRefusedError, NotFoundError, UnknownToolError
from toolfront.rest import error_response, headers_of, json_response, request_id_of, source_ip_of
from toolfront.service import approval_store, authenticator, family_handler
from toolfront.system_tools import list_tools as callable_tools
from toolfront.system_tools import system_tools
from toolfront.tools import CallContext

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
    tools = callable_tools({}, CallContext(request_id=request_id, tool="system.list_tools", actor=actor))
    return json_response(200, {"data": tools, "request_id": request_id}, request_id)


def get_approval(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/approvals/{id}``: a held call's approval, for a key of its requester's principal."""
    try:
        actor = _actor(event)
        store = approval_store()
        approval_id = str((event.get("pathParameters") or {}).get("id", ""))
        approval = store.get(approval_id) if store else None
        if not actor.authenticated:
            return error_response(_unauthenticated(), request_id)
        if approval is None or not approval.requester.same_as(actor):
            raise NotFoundError("there is no such approval")  # another requester's: existence not revealed
    except CallRefusedError as exc:
        return error_response(exc, request_id)
    return json_response(200, {"data": approval.describe(), "request_id": request_id}, request_id)


def _unauthenticated() -> CallRefusedError:
    from toolfront.errors import UnauthenticatedError

    return UnauthenticatedError("send the key of the call (Authorization: Bearer ...)")


ROUTES = {
    "GET /health": health,
    "GET /v1/tools": list_tools,
    "GET /v1/approvals/{id}": get_approval,
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
