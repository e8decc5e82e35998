"""The gateway function: health, the tools a caller may call, held calls' approvals, the MCP endpoint
of every tool, the OpenAPI document and its page, and core's ``system.*`` tools (through the same
call pipeline as every family)."""

from __future__ import annotations

from functools import cache
from typing import Any

from toolfront.adapters.http import Edge, Request, Response, Route, envelope, plain_page
from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal
from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.adapters.mcp.router import ToolRouter
from toolfront.adapters.rest import result_answer
from toolfront.auth.access import callable_tools
from toolfront.calls.call import Call, Entry
from toolfront.errors import InvalidInputError, NotFoundError, ToolfrontError, UnknownToolError
from toolfront.oauth.metadata import families_of
from toolfront.settings import current
from toolfront.tools.manifest import load_manifest
from toolfront.tools.paging import DEFAULT_PAGE_SIZE, InvalidCursorError, Pager
from toolfront.tools.system import all_tools
from toolfront.wiring import admission, authenticator, core_tools, family_handler, sign_in_of

system = family_handler("core", core_tools, core=True)
LIST_LIMIT_MAX = 500  # tools per page of GET /v1/tools


def _base_url(request: Request) -> str:
    settings = current()
    return request.base_url(settings.public_url, settings.region)


def health(request: Request) -> Response:
    return Response.json(200, {"data": {"status": "ok"}, "request_id": request.request_id})


def list_tools(request: Request) -> Response:
    """``GET /v1/tools``: public tools for anyone; admin tools whose scope and permission the caller
    holds, a page at a time (``limit``, ``cursor``; ``next_cursor`` for the next page). With ``q``,
    the tools matching it best: ``system.search_tools`` run through the pipeline (a read: 1 unit).

    Listing is not a run of ``system.list_tools`` through the pipeline, on purpose: it costs
    nothing (like MCP ``tools/list``), so it spends no rate-limit units and is not a tool call in the
    log. It lists with the very rule that tool uses (``callable_tools``).
    """
    fields = request.query_fields()
    limit = _limit(fields.get("limit"), LIST_LIMIT_MAX, default=None if "q" in fields else DEFAULT_PAGE_SIZE)
    if "q" in fields:
        arguments: dict[str, Any] = {"query": fields["q"], **({"limit": limit} if limit else {})}
        return result_answer(
            system.run(_rest_call(request, "system.search_tools", arguments)), request.request_id
        )
    actor = authenticator().authenticate(request.headers, request.source_ip)
    tools = callable_tools(all_tools(), actor)
    try:
        page, following = _pager().page(
            [str(t["name"]) for t in tools], fields.get("cursor"), limit or DEFAULT_PAGE_SIZE
        )
    except InvalidCursorError as refused:
        raise InvalidInputError(str(refused), details={"field": "cursor"}) from None
    chosen = set(page)
    listed = [tool for tool in tools if tool["name"] in chosen]
    data = {"tools": listed, "next_cursor": following}
    return Response.json(200, {"data": data, "request_id": request.request_id})


def _limit(text: str | None, most: int, *, default: int | None) -> int | None:
    if text is None:
        return default
    if not text.isdigit() or not 1 <= int(text) <= most:
        raise InvalidInputError(f"limit must be a whole number from 1 to {most}", details={"field": "limit"})
    return int(text)


@cache
def _pager() -> Pager:
    return Pager([str(tool["name"]) for tool in all_tools()])


def _rest_call(request: Request, tool: str, arguments: dict[str, Any]) -> Call:
    return Call(
        tool_name=tool,
        request_id=request.request_id,
        headers=request.headers,
        query=request.query,
        arguments=arguments,
        source_ip=request.source_ip,
        entry=Entry.REST,
        base_url=_base_url(request),
    )


def get_approval(request: Request) -> Response:
    """``GET /v1/approvals/{id}``: a held call's approval for its requester, as ``system.get_approval``
    answers it (the same tool, run through the pipeline: one rule, a rate limit and a log line)."""
    call = _rest_call(request, "system.get_approval", {"approval_id": request.path_params.get("id", "")})
    return result_answer(system.run(call), request.request_id)


def openapi(request: Request) -> Response:
    """``GET /v1/openapi.json``: the OpenAPI 3.1 document of every tool."""
    from toolfront.adapters.openapi.document import (
        openapi_document,  # deferred: only these two routes need it
    )

    return Response.json(200, openapi_document(all_tools(), server_url=_base_url(request) or None))


def docs(request: Request) -> Response:
    """``GET /v1/docs``: the API for people, one self-contained page."""
    from toolfront.adapters.openapi.document import openapi_document
    from toolfront.adapters.openapi.page import docs_page

    return Response.page(200, docs_page(openapi_document(all_tools(), server_url=_base_url(request) or None)))


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
        records=admission().recorded,
        public_url=settings.public_url,
        region=settings.region,
        allowed_origins=settings.allowed_origins,
        page_size=settings.mcp_tools_page_size,
        sign_in=sign_in_of(settings, all_tools()),
    )


def mcp(request: Request) -> Response:
    """``POST /mcp``: MCP for every tool (``GET``/``DELETE`` answer 405: no SSE stream, no session)."""
    return mcp_endpoint()(request)


def unknown_mcp_server(request: Request) -> Response:
    """``POST /mcp/{family}`` that no family's own route took."""
    family = request.path_params.get("family", "")
    raise NotFoundError(f"no tool family is called {family!r}", details={"family": family})


def unknown_namespace(request: Request) -> Response:
    """``POST /v1/tools/{namespace}/{verb_noun}`` that no family's own route took."""
    namespace = request.path_params.get("namespace", "")
    raise UnknownToolError(f"no tool family is called {namespace!r}", details={"namespace": namespace})


def _nothing_here() -> Response:
    raise NotFoundError("there is nothing at this address")


@cache
def families() -> frozenset[str]:
    """The families with an MCP endpoint of their own (every module of the manifest)."""
    return families_of(all_tools())


def api_routes() -> list[str]:
    """Every route of the API (template.yaml's, kept in the manifest): a wrong method on any is a
    405 here, since API Gateway hands it to ``$default``."""
    return list(load_manifest().get("routes", ()))


def form_of_path(request: Request, error: Exception) -> Response:
    """``$default``'s refusal in the form of the routes at its address (a 405 on an approval page is a
    page, on an OAuth endpoint an OAuth error, on an MCP endpoint JSON-RPC); the envelope elsewhere."""
    path = request.path
    if path == "/mcp" or path.startswith("/mcp/"):
        return rpc_refusal(request, error)
    if path == "/approvals" or path.startswith("/approvals/") or path == "/oauth/authorize":
        assert isinstance(error, ToolfrontError)
        return plain_page(
            getattr(error, "http_status", 400), "This address cannot answer that", error.message
        )
    if path.startswith(("/oauth/", "/.well-known/")):
        from toolfront.oauth.facade import oauth_json  # only these addresses' refusals need it

        return oauth_json(request, error)
    return envelope(request, error)


lambda_handler = Edge(
    {
        "POST /mcp": Route(mcp, rpc_refusal),
        "POST /mcp/{family}": Route(unknown_mcp_server, rpc_refusal),
        "GET /health": health,
        "GET /v1/tools": list_tools,
        "GET /v1/approvals/{id}": get_approval,
        "GET /v1/openapi.json": openapi,
        "GET /v1/docs": docs,
        "POST /v1/tools/{namespace}/{verb_noun}": unknown_namespace,
        "POST /v1/tools/system/{verb_noun}": system.rest,
    },
    elsewhere=api_routes,
    fallback=Route(lambda request: _nothing_here(), form_of_path),
)
"""API Gateway HTTP API (payload v2) entry point. The gateway takes no workflow task: core's tools
are never held (so the workflow never runs one here), and MCP runs them in this process rather than
through a task event."""
