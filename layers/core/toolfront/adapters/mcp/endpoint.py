"""The MCP adapter: ``POST /mcp``, stateless Streamable HTTP with JSON answers (docs/contract.md, "MCP").

Protocols 2025-03-26, 2025-06-18 and 2025-11-25 (``initialize`` handshake) and 2026-07-28 (no
handshake: ``server/discover`` and the version in every request's ``_meta``). No sessions, no SSE.
Refusals become JSON-RPC errors here (``rpc_refusal``: the edge's, in the MCP routes' form).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from toolfront import __version__
from toolfront.adapters.http import Request, Response, error_answer, origin_of
from toolfront.adapters.mcp.protocol import (
    HANDSHAKE_VERSIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SUPPORTED_VERSIONS,
    RpcError,
    parse_message,
    speaks_modern,
)
from toolfront.adapters.mcp.results import (
    ToolCatalog,
    mcp_name,
    offers_tasks,
    result_of_answer,
)
from toolfront.adapters.mcp.tasks import (
    CLIENT_CAPABILITIES,
    LEGACY_CAPABILITY,
    MISSING_CAPABILITY,
    MODERN_CAPABILITY,
    CallTasks,
    RecordReader,
    TaskError,
    TaskForm,
    call_task_id,
    create_result,
    created_task,
    finished_task,
    missing_tasks_capability,
    requested_form,
)
from toolfront.auth.access import may_call
from toolfront.auth.actors import Actor
from toolfront.calls.remote import ToolCall
from toolfront.encoding import compact_json as _encode
from toolfront.encoding import rfc3339
from toolfront.errors import StoreUnavailableError, ToolfrontError, UnauthenticatedError
from toolfront.oauth.metadata import challenge
from toolfront.tools.paging import DEFAULT_PAGE_SIZE, InvalidCursorError, Pager

LIST_CACHE_SIZE = 256  # tools/list answers kept, one per distinct caller rights
SERVER_INFO = {"name": "toolfront", "title": "toolfront", "version": __version__}
CAPABILITIES = {"tools": {"listChanged": False}}
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/cancel"})
TASKS_SINCE = "2025-11-25"
INSTRUCTIONS = (
    "Each tool is one operation. A call may answer pending_approval: a person must confirm it first; "
    f"poll {mcp_name('system.get_approval')} with its approval_id. Send an idempotency_key with writes "
    "to retry safely."
)

UNAUTHENTICATED = -32001  # a server error code clients show as the message it carries


#: Runs a tool call where its tool lives; answers (HTTP status, REST envelope).
ToolCaller = Callable[[ToolCall], tuple[int, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class SignIn:
    """How this endpoint asks for a sign-in (when Cognito is enabled): its family (``None`` for
    ``/mcp``), the scopes it names in the challenge, and whether a request without credentials is
    challenged at once (a family with no public tool: nothing to serve it) or served public tools."""

    family: str | None = None
    scopes: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True, slots=True)
class _Caller:
    """Who sent the request, as a routed tool call needs it."""

    headers: Mapping[str, str]
    request_id: str
    source_ip: str
    base_url: str
    function: str = ""  # this function's ARN (a call it runs itself may be held and run here later)

    def core_call(self, tool: str, arguments: dict[str, Any]) -> ToolCall:
        """A call of one of core's tools with this request's credentials (the tasks methods)."""
        return ToolCall(
            tool, arguments, self.headers, self.request_id, self.source_ip, self.base_url, self.function
        )


class McpEndpoint:
    """Answers MCP requests for every tool of ``catalog``."""

    def __init__(
        self,
        catalog: ToolCatalog,
        call_tool: ToolCaller,
        authenticate: Callable[[Mapping[str, str], str], Actor],
        *,
        records: RecordReader,
        public_url: str | None = None,
        region: str = "",
        allowed_origins: frozenset[str] = frozenset(),
        sign_in: SignIn | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        self._public_url, self._region = public_url, region  # where held calls' links point
        self._sign_in = sign_in  # None: no OAuth sign-in here (a key-only deployment)
        self._allowed_origins = frozenset(o.strip().rstrip("/").lower() for o in allowed_origins)
        self._catalog = catalog
        self._call_tool = call_tool
        self._tasks = CallTasks(call_tool, records)
        self._records = records
        self._authenticate = authenticate
        self._visible: dict[tuple[bool, frozenset[str], frozenset[str]], list[str]] = {}
        self._pager = Pager([str(tool["name"]) for tool in catalog.tools])
        self._page_size = page_size

    def __call__(self, request: Request) -> Response:
        """Answer one MCP request (the edge has applied its rules: credentials in the URL, size)."""
        headers, request_id = request.headers, request.request_id
        base_url = request.base_url(self._public_url, self._region)
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, base_url):
            # DNS rebinding: a page of another site reaching this endpoint through the browser
            why = f"requests from the origin {origin!r} are not allowed"
            return _rpc_error(None, RpcError(INVALID_REQUEST, why, http_status=403))
        try:
            message = parse_message(request)
        except RpcError as error:
            return _rpc_error(error.message_id, error)
        try:
            actor = self._authenticate(headers, request.source_ip)
        except UnauthenticatedError as refused:  # a key was sent and it is not valid
            why = self._challenge(base_url, error="invalid_token")
            return _unauthenticated(message.get("id"), refused.message, why)
        except StoreUnavailableError as down:  # the key table did not answer
            return error_answer(down, request_id)
        if self._sign_in is not None and self._sign_in.required and not actor.authenticated:
            family = self._sign_in.family
            why = f"sign in to use the {family} tools (or send Authorization: Bearer <API key>)"
            return _unauthenticated(message.get("id"), why, self._challenge(base_url))
        if "id" not in message:  # a notification (notifications/initialized...): accepted, no answer
            return Response.empty(202)
        try:
            no_handshake = speaks_modern(message, headers)
            caller = _Caller(headers, request_id, request.source_ip, base_url, request.function)
            text = self._dispatch(message, actor, caller, no_handshake)
        except RpcError as error:
            return _rpc_error(message.get("id"), error)
        return Response.json_text(
            200, f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{text}}}'
        )

    def _challenge(self, base_url: str, *, error: str | None = None) -> str:
        """``WWW-Authenticate`` of a 401: where to sign in (RFC 9728) when this stack signs people in."""
        if self._sign_in is None:
            return 'Bearer realm="toolfront"' + (f', error="{error}"' if error else "")
        scopes = () if error else self._sign_in.scopes
        return challenge(base_url, self._sign_in.family, scopes=scopes, error=error)

    def _origin_allowed(self, origin: str, base_url: str) -> bool:
        """The API's own origin, one of ``AllowedOrigins``, or (for a stack on loopback) a loopback page."""
        seen = origin.strip().rstrip("/").lower()
        own = origin_of(base_url)
        if seen == own or seen in self._allowed_origins:
            return True
        return _is_loopback(own) and _is_loopback(seen)

    def _dispatch(self, message: dict[str, Any], actor: Actor, caller: _Caller, no_handshake: bool) -> str:
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            return _encode(_initialize(params))
        if method == "ping":  # gone from 2026-07-28 (refused before this)
            return _encode({})
        if method == "server/discover":
            return _encode(_discover())
        if method == "tools/list":
            return self._tools_list(actor, no_handshake, params.get("cursor"))
        if method == "tools/call":
            return _encode(_complete(self._tools_call(params, actor, caller, no_handshake), no_handshake))
        if method == "tasks/update" and no_handshake:  # only the extension's clients reach it
            raise _task_error(_task_update(params))
        if method in TASK_METHODS and not (no_handshake and method == "tasks/result"):
            try:
                answer = self._tasks.answer(method, params, caller.core_call, actor, no_handshake)
            except TaskError as error:
                raise _task_error(error) from None
            return _encode(_complete(answer, no_handshake))
        raise RpcError(
            METHOD_NOT_FOUND, f"method not found: {method}", http_status=404 if no_handshake else 200
        )

    def _tools_list(self, actor: Actor, no_handshake: bool, cursor: Any) -> str:
        """One page of the tools ``actor`` may call, in name order (``nextCursor`` for the next)."""
        if cursor is not None and not isinstance(cursor, str):
            raise RpcError(INVALID_PARAMS, "cursor must be a string (a nextCursor this server gave)")
        try:
            names, following = self._pager.page(self._visible_to(actor), cursor, self._page_size)
        except InvalidCursorError as refused:
            raise RpcError(INVALID_PARAMS, str(refused)) from None
        after = f',"nextCursor":{json.dumps(following)}' if following else ""
        extra = ',"resultType":"complete","ttlMs":0,"cacheScope":"private"' if no_handshake else ""
        return f'{{"tools":{self._catalog.entries_text(names)}{after}{extra}}}'

    def _visible_to(self, actor: Actor) -> list[str]:
        # What a caller may call depends only on its rights, so the names are kept per rights: one
        # dictionary lookup for every caller holding the same scopes (bounded: rights are few, but
        # not trusted).
        key = (actor.authenticated, actor.scopes, actor.permissions)
        names = self._visible.get(key)
        if names is None:
            names = [
                tool["name"]
                for tool in self._catalog.tools
                if may_call(
                    audience=tool["audience"], scope=tool["scope"], permission=tool["permission"], actor=actor
                )
            ]
            names.sort()
            if len(self._visible) >= LIST_CACHE_SIZE:
                self._visible.clear()
            self._visible[key] = names
        return names

    def _tools_call(
        self, params: dict[str, Any], actor: Actor, caller: _Caller, no_handshake: bool
    ) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments", {})
        tool = self._catalog.by_name.get(name) if isinstance(name, str) else None
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        form = requested_form(params, no_handshake)
        # A held call as a task, for a client that asked and a requester that can read it back by
        # the task's id alone (a key or a token: a guest's session token is not in tasks/get).
        as_task = form is not None and actor.authenticated
        # A tool that offers tasks answers one whatever happens (2025-11-25: "MUST return a
        # CreateTaskResult"): a call that runs at once keeps its answer in its idempotency
        # record, under a key of its own when the client sent none.
        key = None
        if as_task and offers_tasks(tool):
            import secrets  # only a call sent as a task needs these

            from toolfront.admission.idempotency import HEADER, KEY_FIELD

            key = arguments.get(KEY_FIELD, caller.headers.get(HEADER))
            if key is None:
                key = f"task-{secrets.token_urlsafe(18)}"
                arguments = {**arguments, KEY_FIELD: key}
        status, body = self._call_tool(
            ToolCall(
                str(tool["name"]),  # the dotted name: the family's pipeline knows its tools by it
                arguments,
                caller.headers,
                caller.request_id,
                caller.source_ip,
                caller.base_url,
                caller.function,
                _traceparent(params),
            )
        )
        now = rfc3339(datetime.now(UTC))
        if status == 202 and as_task:
            assert form is not None
            return created_task(body["data"], form, now)
        if key is None or form is None:
            return result_of_answer(status, body)
        task_id = call_task_id(str(tool["name"]), str(key))
        if status >= 300 and self._records(actor, str(tool["name"]), str(key)) is None:
            # refused before it ran (its input, rights, budget): no task was made; the error says why
            error = body["error"]
            code = INTERNAL_ERROR if status >= 500 else INVALID_PARAMS
            raise RpcError(code, str(error.get("message")), error)
        task = finished_task(task_id, status, body, form, now)
        return create_result(task, form)


def _traceparent(params: dict[str, Any]) -> str:
    """The trace context an MCP client sends in ``params._meta`` (the MCP semantic conventions'
    carrier), "" when there is none; its form is checked where it is read (``toolfront.tracing``)."""
    meta = params.get("_meta")
    found = meta.get("traceparent") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else ""


def _complete(result: dict[str, Any], no_handshake: bool) -> dict[str, Any]:
    """A 2026-07-28 result with its ``resultType`` (``complete`` unless it says otherwise: a task)."""
    return {"resultType": "complete", **result} if no_handshake else result


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "protocolVersion": version,
        # Tasks came with 2025-11-25: earlier revisions are not offered what they cannot parse.
        "capabilities": {**CAPABILITIES, "tasks": LEGACY_CAPABILITY}
        if version == TASKS_SINCE
        else CAPABILITIES,
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
    }


def _discover() -> dict[str, Any]:
    return {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": {**CAPABILITIES, **MODERN_CAPABILITY},
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
    }


def _is_loopback(origin: str) -> bool:
    host = urlsplit(origin).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1")


def _unauthenticated(message_id: Any, why: str, authenticate: str) -> Response:
    """A 401 clients can show: ``WWW-Authenticate`` and a JSON-RPC error saying why."""
    body = {"jsonrpc": "2.0", "id": message_id, "error": {"code": UNAUTHENTICATED, "message": why}}
    return Response.json_text(401, _encode(body), {"www-authenticate": authenticate})


def rpc_refusal(request: Request, error: Exception) -> Response:
    """The MCP routes' form of what the edge refuses (a credential in the URL, a body over 1 MiB):
    a JSON-RPC error with the HTTP status, the refusal's own error object in ``data``."""
    assert isinstance(error, ToolfrontError)
    rpc = RpcError(INVALID_REQUEST, error.message, error.to_dict(), http_status=error.http_status)
    return _rpc_error(None, rpc)


def _rpc_error(message_id: Any, error: RpcError) -> Response:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return Response.json_text(error.http_status, _encode({"jsonrpc": "2.0", "id": message_id, "error": body}))


def _task_update(params: dict[str, Any]) -> TaskError:
    """``tasks/update`` (the extension's answer to a task's input request): toolfront's tasks never
    ask for input, so there is never one to answer."""
    meta = params.get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    if requested_form(params, True) is not TaskForm.MODERN or not isinstance(capabilities, dict):
        return missing_tasks_capability()
    return TaskError(INVALID_PARAMS, "Failed to update task: the task is not waiting for input")


def _task_error(error: TaskError) -> RpcError:
    # On HTTP, a missing client capability is a 400 (2026-07-28, MissingRequiredClientCapability)
    status = 400 if error.code == MISSING_CAPABILITY else 200
    return RpcError(error.code, error.message, error.data, http_status=status)
