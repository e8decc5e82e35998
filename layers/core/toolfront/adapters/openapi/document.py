"""The OpenAPI 3.1 document of every tool (``GET /v1/openapi.json``, ``toolfront openapi``).

One ``POST /v1/tools/<namespace>/<verb_noun>`` operation per manifest entry, plus the API's own
``GET`` routes; the schemas live in ``schemas``, the headers and error responses in ``components``.
Operation ids and component names are chosen for the code generated from them:
``catalogue.get_product`` is the operation ``catalogue_get_product`` (openapi-python-client's module
``catalogue_get_product``, openapi-typescript's ``operations["catalogue_get_product"]``), answering
a ``CatalogueGetProductEnvelope`` whose ``data`` is a ``CatalogueGetProductData``.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

from toolfront import __version__
from toolfront.adapters.openapi.components import (
    CONFIRMATION_UNAVAILABLE,
    HEADERS,
    RESPONSES,
    SECURITY_SCHEME,
    TOOL_ERRORS,
    components,
    error_response,
    json_content,
)
from toolfront.adapters.openapi.schemas import SCHEMAS, SHARED_SCHEMAS, ref, tool_schemas
from toolfront.settings import DEFAULT_BATCH_CONFIRM_ITEMS
from toolfront.tools.manifest import (
    IDEMPOTENCY_KEY_SCHEMA,
    ToolInfo,
    offered_input_schema,
    offers_idempotency,
)

OPENAPI_VERSION = "3.1.0"
API_TAG = "api"
_DESCRIPTION = (
    "Every tool is one POST /v1/tools/{namespace}/{verb_noun} whose body is the tool's input. "
    "Success answers 200 {data, request_id}; a call held for a person's confirmation answers 202 "
    "{data: {status: pending_approval, approval_id, expires_at}, request_id}; a refusal answers "
    "{error: {code, message, details}, request_id}. Write tools take an idempotency_key (body) or "
    "Idempotency-Key header: a retry with the same key and input gets the first answer back."
)
_CACHE_SIZE = 8  # a few server URLs per process (the Host header picks it); rebuilt per cold start
_CacheKey = tuple[tuple[int, ...], str | None]  # (ids of the entries, server_url)
_cache: OrderedDict[_CacheKey, tuple[tuple[dict[str, Any], ...], dict[str, Any]]] = OrderedDict()
_lock = threading.Lock()


def openapi_document(tools: list[dict[str, Any]], *, server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``tools`` (manifest entries); treat the answer as read-only.

    Built once per (tools, server_url): the key is the identity of the entries (manifest entries
    are never changed once loaded), and the cache holds the entries so their ids cannot be reused.

    Args:
        tools: the manifest entries to describe (families' and core's ``system.*`` tools).
        server_url: the API's address, written as ``servers[0]`` when given.
    """
    key = (tuple(id(tool) for tool in tools), server_url)
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached[1]
    document = build_document(tools, server_url=server_url)
    with _lock:
        _cache[key] = (tuple(tools), document)
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return document


def build_document(tools: list[dict[str, Any]], *, server_url: str | None = None) -> dict[str, Any]:
    """The document, built afresh (``openapi_document`` caches it)."""
    paths = _api_paths()
    schemas: dict[str, Any] = {}
    by_name = {str(tool["name"]): tool for tool in tools}
    for tool, (operation_id, name) in tool_identifiers(tools).items():
        namespace, verb_noun = tool.split(".", 1)
        success, added = tool_schemas(by_name[tool], name)
        schemas.update(added)
        paths[f"/v1/tools/{namespace}/{verb_noun}"] = {
            "post": tool_operation(by_name[tool], operation_id, success)
        }
    tags = sorted({_tag(tool) for tool in tools})
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "toolfront", "version": _version(), "description": _DESCRIPTION},
    }
    if server_url:
        document["servers"] = [{"url": server_url}]
    document["tags"] = [
        *({"name": tag, "description": _tag_description(tag)} for tag in tags),
        {
            "name": API_TAG,
            "description": "The API's own routes: tool list, held calls, health, this document.",
        },
    ]
    document["paths"] = dict(sorted(paths.items()))
    document["components"] = components(schemas)
    return document


def tool_identifiers(tools: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Each tool's ``(operationId, component name)``, by tool name: ``catalogue.get_product`` is
    ``("catalogue_get_product", "CatalogueGetProduct")``. Two names that read alike (``a_b.c_d``,
    ``a.b_c_d``) are told apart by a number, the second in name order getting ``_2`` / ``2``."""
    found: dict[str, tuple[str, str]] = {}
    taken = {
        name.removesuffix(suffix)
        for name in SHARED_SCHEMAS
        for suffix in ("Data", "Envelope")
        if name.endswith(suffix)
    }
    for tool in sorted({str(entry["name"]) for entry in tools}):
        words = re.split(r"[._]", tool)
        operation_id, name = "_".join(words), "".join(word[:1].upper() + word[1:] for word in words)
        number = 1
        while name + (str(number) if number > 1 else "") in taken:
            number += 1
        if number > 1:
            operation_id, name = f"{operation_id}_{number}", f"{name}{number}"
        taken.add(name)
        found[tool] = (operation_id, name)
    return found


def tool_operation(tool: dict[str, Any], operation_id: str, success: dict[str, Any]) -> dict[str, Any]:
    """The ``post`` operation of one manifest entry, whose 200 answers the ``success`` envelope."""
    admin = tool["audience"] == "admin"
    responses: dict[str, Any] = {"200": _success(tool, success)}
    if holdable(tool):
        responses["202"] = {
            "description": "Held for a person's confirmation; nothing ran yet.",
            "headers": _tool_headers(),
            "content": json_content(ref(SCHEMAS, "PendingEnvelope")),
        }
    for status, (name, _) in TOOL_ERRORS.items():
        responses[status] = ref(RESPONSES, name)
    if holdable(tool):
        responses["501"] = ref(RESPONSES, CONFIRMATION_UNAVAILABLE[0])
    responses = dict(sorted(responses.items()))  # statuses in order (202 before 4xx), then default
    responses["default"] = ref(RESPONSES, "ToolRefusal")
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": tool["title"],
        "description": operation_description(tool),
        "tags": [_tag(tool)],
        "security": [{SECURITY_SCHEME: []}] if admin else [{}, {SECURITY_SCHEME: []}],
    }
    if offers_idempotency(tool):
        operation["parameters"] = [
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "The idempotency key, instead of idempotency_key in the body (the body wins).",
                "schema": IDEMPOTENCY_KEY_SCHEMA,
            }
        ]
    schema = offered_input_schema(tool)
    operation["requestBody"] = {
        # An absent body is the empty object (a tool without input), so a body is required exactly
        # when the input has required fields; without one such a call is a 422.
        "required": bool(schema.get("required")),
        "description": "The tool's input; an absent body is {}.",
        "content": json_content(schema),
    }
    operation["responses"] = responses
    operation.update(
        {
            "x-toolfront-audience": tool["audience"],
            "x-toolfront-scope": tool["scope"],
            "x-toolfront-permission": tool["permission"],
            "x-toolfront-danger": tool["danger"],
            "x-toolfront-cost": cost_of(tool),
            "x-toolfront-max-items": tool["max_items"],
            "x-toolfront-annotations": tool["annotations"],
            "x-toolfront-client-token": tool["client_token"],
            "x-toolfront-idempotency-key": offers_idempotency(tool),
        }
    )
    return operation


def holdable(tool: dict[str, Any]) -> bool:
    """Whether a call may answer 202 (the rule ``ToolRules.may_be_held`` states once)."""
    return ToolInfo.of(tool).may_be_held


def cost_of(tool: dict[str, Any]) -> int | str:
    """Rate-limit units per call as documented (``ToolInfo.documented_cost``)."""
    return ToolInfo.of(tool).documented_cost


def operation_description(tool: dict[str, Any]) -> str:
    """The tool's own description, then when it waits for a person and what it costs."""
    lines = [str(tool["description"]).strip() or str(tool["title"])]
    info = ToolInfo.of(tool)
    confirmation = confirmation_text(tool)
    if confirmation:
        lines.append(confirmation)
    cost = info.documented_cost
    units = {"dynamic": "units depending on the input", 1: "1 unit"}.get(cost, f"{cost} units")
    lines.append(f"Cost: {units} of the caller's rate budget per call.")
    if tool["max_items"] is not None:
        lines.append(f"At most {tool['max_items']} items in any list (else 422 too_many_items).")
    if tool["client_token"]:
        lines.append(
            f"`{tool['client_token']}` identifies a guest caller (rate budget, retries, confirmations)."
        )
    return "\n\n".join(lines)


def confirmation_text(tool: dict[str, Any]) -> str | None:
    """When a call waits for a person, as one paragraph (the rules of ``approvals.policy``), or
    None for a tool never held."""
    info = ToolInfo.of(tool)
    if not info.may_be_held:
        return None
    who = _who_confirms(tool)
    if tool["danger"] == "always":
        return (
            "Confirmation: always held for a person's confirmation (202 pending_approval); it runs only "
            f"once approved{who}."
        )
    when = []
    if tool["danger"] == "check":
        when.append("the tool's danger check says so")
    if info.is_admin_write:
        when.append(
            f"a list in the input has more than {DEFAULT_BATCH_CONFIRM_ITEMS} items (the default threshold)"
        )
    if not info.is_read_only:
        when.append("the calling key requires approval")
    listed = ", ".join(when[:-1]) + (" or " if len(when) > 1 else "") + when[-1]
    return f"Confirmation: held (202 pending_approval) when {listed}{who}."


def _who_confirms(tool: dict[str, Any]) -> str:
    """``, by ...`` when the tool's approval policy asks more than one approver (its description
    then tells a caller how long a held call may take and why)."""
    from toolfront.tools.approval_policy import ApprovalPolicy

    policy = ApprovalPolicy.of(tool.get("approval"))
    return f", by {policy.describe()}" if policy != ApprovalPolicy() else ""


def _success(tool: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    content = json_content(envelope)
    declared = tool.get("mime_type") or []  # one type or a list: each a file an Accept may ask for
    for mime_type in [declared] if isinstance(declared, str) else declared:
        content[mime_type] = {"schema": {"type": "string", "format": "binary"}}
    return {
        "description": "The tool's answer: JSON data, and content blocks when the tool answers a "
        "ToolResult. A request whose Accept names exactly (and prefers to JSON) the MIME type of one "
        "of the answer's blocks gets that file instead.",
        "headers": _tool_headers(),
        "content": content,
    }


def _tool_headers() -> dict[str, Any]:
    return {
        name: ref(HEADERS, name)
        for name in ("X-Request-Id", "RateLimit-Policy", "RateLimit", "Idempotent-Replayed")
    }


def _api_paths() -> dict[str, Any]:
    """The non-tool routes (docs/contract.md, "Routes") that answer JSON envelopes (or this document)."""
    request_id = {"X-Request-Id": ref(HEADERS, "X-Request-Id")}
    errors = {
        "500": error_response("internal_error."),
        "503": error_response("unavailable: a store is unavailable."),
    }
    optional_key: list[dict[str, list[str]]] = [{}, {SECURITY_SCHEME: []}]

    def ok(description: str, schema: dict[str, Any], media: str = "application/json") -> dict[str, Any]:
        return {"description": description, "headers": request_id, "content": {media: {"schema": schema}}}

    def get(operation_id: str, summary: str, responses: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "get": {
                "operationId": operation_id,
                "summary": summary,
                "tags": [API_TAG],
                **extra,
                "responses": responses,
            }
        }

    return {
        "/health": get(
            "health", "Health check", {"200": ok("Up.", ref(SCHEMAS, "HealthEnvelope"))}, security=[{}]
        ),
        "/v1/tools": get(
            "list_tools",
            "The tools this caller may call now",
            {
                "200": ok(
                    "Public tools, and admin tools whose scope and permission the key holds, in name "
                    "order, a page at a time; with q, the best matches (system.search_tools' answer).",
                    ref(SCHEMAS, "ToolsEnvelope"),
                ),
                "401": error_response(
                    "unauthenticated: the key is invalid, expired or revoked.", unauthenticated=True
                ),
                "400": error_response("invalid_form: a query field (limit, cursor, q) is repeated."),
                "422": error_response("invalid_input: limit, cursor or q is not valid (details.field)."),
                **errors,
            },
            security=optional_key,
            description="Listing costs nothing; a search (q) is a read of 1 unit. Without a key: the "
            "public tools.",
            parameters=[
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                    "description": "Tools per page (with q: results, at most 50).",
                },
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "The next_cursor of the page before.",
                },
                {
                    "name": "q",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                    "description": "What the tool should do: the tools matching it best, only among "
                    "those the caller may call.",
                },
            ],
        ),
        "/v1/approvals/{id}": get(
            "get_approval",
            "A held call's approval",
            {
                "200": ok("The approval.", ref(SCHEMAS, "ApprovalEnvelope")),
                "401": error_response("unauthenticated: send the key of the call.", unauthenticated=True),
                "404": error_response("not_found: no such approval, or another requester's."),
                **errors,
            },
            security=[{SECURITY_SCHEME: []}],
            description="For a key of the requester's principal (guest calls: use system.get_approval "
            "with the session_token).",
            parameters=[{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
        ),
        "/v1/openapi.json": get(
            "get_openapi",
            "This document",
            {"200": ok("OpenAPI 3.1.", {"type": "object", "additionalProperties": True})},
            security=[{}],
        ),
        "/v1/docs": get(
            "get_docs",
            "The API for people",
            {"200": ok("One HTML page.", {"type": "string"}, "text/html")},
            security=[{}],
        ),
    }


def _tag(tool: dict[str, Any]) -> str:
    return str(tool.get("module") or str(tool["name"]).split(".", 1)[0])


def _tag_description(tag: str) -> str:
    if tag == "core":
        return "toolfront's own system.* tools: who am I, what may I call, held calls."
    return f"The tools of the {tag} family."


def _version() -> str:
    return __version__  # the layer ships the package without its metadata: the version is in the code
