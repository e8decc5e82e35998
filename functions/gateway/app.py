"""The gateway function: health, the tools a caller may call, held calls' approvals, the MCP endpoint
of every tool, the OpenAPI document and its page, and core's ``system.*`` tools (through the same
call pipeline as every family)."""

from __future__ import annotations

from functools import cache
from typing import Any

from toolfront.adapters.http import (
    base_url_of,
    credential_in_url_answer,
    error_response,
    headers_of,
    json_response,
    request_id_of,
    source_ip_of,
)
from toolfront.adapters.mcp.endpoint import McpEndpoint
from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.adapters.mcp.router import ToolRouter
from toolfront.adapters.rest import result_response
from toolfront.auth.access import callable_tools
from toolfront.calls.call import Call, Entry
from toolfront.errors import CallRefusedError, NotFoundError, UnknownToolError
from toolfront.oauth.metadata import families_of
from toolfront.settings import current
from toolfront.tools.system import all_tools
from toolfront.wiring import authenticator, core_tools, family_handler, sign_in_of

system = family_handler("core", core_tools, core=True)


def _base_url(event: dict[str, Any]) -> str:
    settings = current()
    return base_url_of(event, settings.public_url, settings.region)


def health(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    return json_response(200, {"data": {"status": "ok"}, "request_id": request_id}, request_id)


def list_tools(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/tools``: public tools for anyone; admin tools whose scope and permission the caller holds.

    Not a run of ``system.list_tools`` through the pipeline, on purpose: listing tools costs nothing
    (like MCP ``tools/list``), so it spends no rate-limit units and is not a tool call in the log.
    It lists with the very rule that tool uses (``callable_tools``).
    """
    try:
        actor = authenticator().authenticate(headers_of(event), source_ip_of(event))
    except CallRefusedError as exc:
        return error_response(exc, request_id)
    tools = callable_tools(all_tools(), actor)
    return json_response(200, {"data": {"tools": tools}, "request_id": request_id}, request_id)


def get_approval(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/approvals/{id}``: a held call's approval for its requester, as ``system.get_approval``
    answers it (the same tool, run through the pipeline: one rule, a rate limit and a log line)."""
    headers = headers_of(event)
    call = Call(
        tool_name="system.get_approval",
        request_id=request_id,
        headers=headers,
        query=event.get("queryStringParameters") or {},
        arguments={"approval_id": str((event.get("pathParameters") or {}).get("id", ""))},
        source_ip=source_ip_of(event),
        entry=Entry.REST,
        base_url=_base_url(event),
    )
    return result_response(system.run(call), request_id)


def openapi(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/openapi.json``: the OpenAPI 3.1 document of every tool."""
    from toolfront.adapters.openapi.document import (
        openapi_document,  # deferred: only these two routes need it
    )

    document = openapi_document(all_tools(), server_url=_base_url(event) or None)
    return json_response(200, document, request_id)


def docs(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``GET /v1/docs``: the API for people, one self-contained page."""
    from toolfront.adapters.openapi.document import openapi_document
    from toolfront.adapters.openapi.page import docs_page

    page = docs_page(openapi_document(all_tools(), server_url=_base_url(event) or None))
    return {
        "statusCode": 200,
        "headers": {"content-type": "text/html; charset=utf-8", "x-request-id": request_id},
        "body": page,
    }


@cache
def mcp_endpoint() -> McpEndpoint:
    """Built on first use: the tool entries are encoded once per cold start."""
    catalog = ToolCatalog(all_tools())
    settings = current()
    router = ToolRouter(catalog, system.run, settings.function_prefix)
    return McpEndpoint(
        catalog,
        router,
        authenticator().authenticate,
        public_url=settings.public_url,
        region=settings.region,
        allowed_origins=settings.allowed_origins,
        sign_in=sign_in_of(settings, all_tools()),
    )


@cache
def families() -> frozenset[str]:
    """The families with an MCP endpoint of their own (every module of the manifest)."""
    return families_of(all_tools())


def mcp(event: dict[str, Any], request_id: str) -> dict[str, Any]:
    """``POST /mcp`` (``GET``/``DELETE`` answer 405): MCP for every tool."""
    return mcp_endpoint().handle(event)


UNKNOWN_NAMESPACE = "POST /v1/tools/{namespace}/{verb_noun}"
UNKNOWN_MCP_SERVER = "POST /mcp/{family}"
# A family's MCP endpoint has no SSE stream to GET and no session to DELETE either: 405, as /mcp.
MCP_SERVER_STREAMS = frozenset({"GET /mcp/{family}", "DELETE /mcp/{family}"})
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
    """API Gateway HTTP API (payload v2) entry point.

    The gateway takes no workflow task: core's tools are never held (so the workflow never runs
    one here), and MCP runs them in this process rather than through a task event.
    """
    route_key = str(event.get("routeKey", ""))
    if route_key == "POST /v1/tools/system/{verb_noun}":
        return system(event, context)  # the pipeline refuses credentials in the URL itself
    request_id = request_id_of(event)
    refused = credential_in_url_answer(event, request_id)
    if refused is not None:
        return refused
    if route_key == UNKNOWN_MCP_SERVER or route_key in MCP_SERVER_STREAMS:
        family = str((event.get("pathParameters") or {}).get("family", ""))
        if route_key in MCP_SERVER_STREAMS and family in families():
            return {"statusCode": 405, "headers": {"allow": "POST", "x-request-id": request_id}, "body": ""}
        missing = NotFoundError(f"no tool family is called {family!r}", details={"family": family})
        return error_response(missing, request_id)
    if route_key == UNKNOWN_NAMESPACE:
        namespace = str((event.get("pathParameters") or {}).get("namespace", ""))
        refusal: CallRefusedError = UnknownToolError(
            f"no tool family is called {namespace!r}", details={"namespace": namespace}
        )
        return error_response(refusal, request_id)
    route = ROUTES.get(route_key)
    if route is None:  # $default: every route the API does not have
        return error_response(NotFoundError("there is nothing at this address"), request_id)
    return route(event, request_id)
